// Persistent user settings (QSettings): device, threads, database path, price sheet, default model.
#pragma once

#include <QString>

namespace mb::gui {

// Plain values read once and written on save; the UI thread owns the only instance.
// Stored with QSettings under organisation "ModeBench", application "modebench"
// (on Linux ~/.config/ModeBench/modebench.conf).
struct AppSettings {
    QString device = QStringLiteral("cpu");
    int threads = 0;     // 0: every core the machine has
    QString databasePath; // empty: db::defaultDatabasePath()
    QString priceSheet;   // JSON price sheet for the selection framework; may be empty
    QString defaultModel; // the model pages start with; may be empty
    bool allowUnsandboxed = false; // run script plugins where a sandbox layer is missing

    static AppSettings load();
    void save() const;
    // databasePath, or the default when empty (created directories included); empty with
    // `error` set when no default exists.
    QString effectiveDatabasePath(QString* error = nullptr) const;
    int effectiveThreads() const;
};

} // namespace mb::gui
