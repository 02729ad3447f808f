// AppSettings over QSettings.
#include "gui/app_settings.h"

#include "db/default_path.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>

#include <thread>

namespace mb::gui {

AppSettings AppSettings::load() {
    QSettings s;
    AppSettings a;
    a.device = s.value(QStringLiteral("engine/device"), a.device).toString();
    a.threads = s.value(QStringLiteral("engine/threads"), a.threads).toInt();
    a.databasePath = s.value(QStringLiteral("store/path")).toString();
    a.priceSheet = s.value(QStringLiteral("selection/price_sheet")).toString();
    a.defaultModel = s.value(QStringLiteral("models/default")).toString();
    a.allowUnsandboxed = s.value(QStringLiteral("plugins/allow_unsandboxed"), false).toBool();
    return a;
}

void AppSettings::save() const {
    QSettings s;
    s.setValue(QStringLiteral("engine/device"), device);
    s.setValue(QStringLiteral("engine/threads"), threads);
    s.setValue(QStringLiteral("store/path"), databasePath);
    s.setValue(QStringLiteral("selection/price_sheet"), priceSheet);
    s.setValue(QStringLiteral("models/default"), defaultModel);
    s.setValue(QStringLiteral("plugins/allow_unsandboxed"), allowUnsandboxed);
    s.sync();
}

QString AppSettings::effectiveDatabasePath(QString* error) const {
    if (!databasePath.isEmpty()) return databasePath;
    try {
        const QString path = QString::fromStdString(db::defaultDatabasePath());
        if (!QDir().mkpath(QFileInfo(path).absolutePath())) {
            if (error) *error = QStringLiteral("cannot create %1").arg(QFileInfo(path).absolutePath());
            return {};
        }
        return path;
    } catch (const std::exception& e) {
        if (error) *error = QString::fromUtf8(e.what());
        return {};
    }
}

int AppSettings::effectiveThreads() const {
    if (threads > 0) return threads;
    return std::max(1u, std::thread::hardware_concurrency());
}

} // namespace mb::gui
