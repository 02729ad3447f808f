// The main window: navigation over every page of PRODUCT.md §9, and the owner of the engine and store threads.
#pragma once

#include "gui/app_settings.h"
#include "gui/engine_backend.h"
#include "gui/store_client.h"

#include <QMainWindow>

class QListWidget;
class QStackedWidget;
class QLabel;

namespace mb::gui {

class BenchmarkPage;
class HistoryPage;
class MigrationPage;
class ModelsPage;
class PlaygroundPage;
class PluginsPage;
class ReportPage;
class SelectionPage;
class SettingsPage;

// UI thread. Owns the StoreClient (store thread) and, unless one is given, a
// ThreadedEngine (engine thread); destroying the window cancels running jobs, then quits
// and joins both threads. Pages are found by key: playground, benchmark, history, models,
// selection, migration, report, plugins, settings.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    // `engine`: null for the real ThreadedEngine; tests pass a fake (not owned).
    explicit MainWindow(const AppSettings& settings, EngineBackend* engine = nullptr, QWidget* parent = nullptr);
    ~MainWindow() override;

    static QStringList pageKeys();
    bool showPage(const QString& key); // false for an unknown key
    QWidget* page(const QString& key) const;

    PlaygroundPage* playground() const { return m_playground; }
    BenchmarkPage* benchmark() const { return m_benchmark; }
    HistoryPage* history() const { return m_history; }
    ModelsPage* models() const { return m_models; }
    SelectionPage* selection() const { return m_selection; }
    MigrationPage* migration() const { return m_migration; }
    ReportPage* report() const { return m_report; }
    PluginsPage* plugins() const { return m_plugins; }
    StoreClient* store() const { return m_store; }
    EngineBackend* engine() const { return m_engine; }

    // Makes `path` the model of the Playground and Benchmark pages (and shows it on Models).
    void useModel(const QString& path);
    void applySettings(const AppSettings& settings);

signals:
    void storeReady(const QString& path);
    void storeFailed(const QString& message);

private:
    std::unique_ptr<EngineBackend> m_ownedEngine;
    EngineBackend* m_engine;
    StoreClient* m_store;
    AppSettings m_settings;
    QListWidget* m_nav;
    QStackedWidget* m_stack;
    QLabel* m_storeLabel;
    QLabel* m_modelLabel;
    PlaygroundPage* m_playground;
    BenchmarkPage* m_benchmark;
    HistoryPage* m_history;
    ModelsPage* m_models;
    SelectionPage* m_selection;
    MigrationPage* m_migration;
    ReportPage* m_report;
    PluginsPage* m_plugins;
    SettingsPage* m_settingsPage;
    qint64 m_openRequest = 0;
};

} // namespace mb::gui
