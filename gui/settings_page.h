// The Settings page: device, threads, database path, price sheet and default model, saved with QSettings.
#pragma once

#include "gui/app_settings.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;
class QLabel;

namespace mb::gui {

// UI thread. "Save" writes QSettings and emits settingsSaved; the main window applies the
// new values (reopens the store, passes threads and device to the pages).
class SettingsPage : public QWidget {
    Q_OBJECT
public:
    explicit SettingsPage(QWidget* parent = nullptr);

    void setSettings(const AppSettings& settings);
    AppSettings settings() const;
    void setDevices(const QStringList& ids);
    void setStoreStatus(const QString& text, bool error);

signals:
    void settingsSaved(const mb::gui::AppSettings& settings);

private:
    QComboBox* m_device;
    QSpinBox* m_threads;
    QLineEdit* m_db;
    QLineEdit* m_prices;
    QLineEdit* m_model;
    QCheckBox* m_unsandboxed;
    QLabel* m_storeStatus;
};

} // namespace mb::gui
