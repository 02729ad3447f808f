// Plugin chains for GUI jobs: the chain file loaded with the run store's approvals.
#include "gui/plugin_chains.h"

#include "db/plugin_approvals.h"
#include "gui/app_settings.h"

#include <QFileInfo>

#include <stdexcept>

namespace mb::gui {

QString approvalsDatabase(const QString& dbPath) {
    if (!dbPath.isEmpty()) return dbPath;
    return AppSettings::load().effectiveDatabasePath();
}

plugins::ChainOptions chainOptionsFor(const QString& chainFile, const QString& dbPath, bool allowUnsandboxed) {
    plugins::ChainOptions o;
    o.baseDir = QFileInfo(chainFile).absolutePath().toStdString();
    o.allowUnsandboxed = allowUnsandboxed;
    o.approved = [dbPath](const std::string& sha256) {
        const QString db = approvalsDatabase(dbPath);
        return !db.isEmpty() && db::PluginApprovals(db.toStdString()).isApproved(sha256);
    };
    o.approvalRecord = [dbPath](const std::string& sha256) {
        const QString db = approvalsDatabase(dbPath);
        return db.isEmpty() ? nlohmann::json() : db::PluginApprovals(db.toStdString()).recordOf(sha256);
    };
    return o;
}

std::shared_ptr<const plugins::Chain> loadChain(const QString& file, const QString& dbPath, bool allowUnsandboxed) {
    if (file.trimmed().isEmpty()) return nullptr;
    const QString path = file.trimmed();
    try {
        return std::make_shared<const plugins::Chain>(
            plugins::Chain::load(path.toStdString(), chainOptionsFor(path, dbPath, allowUnsandboxed)));
    } catch (const plugins::PluginError& e) {
        throw std::runtime_error(e.what());
    } catch (const std::exception& e) { // the store: a broken database file; JSON errors
        throw std::runtime_error("plugins " + path.toStdString() + ": " + e.what());
    }
}

} // namespace mb::gui
