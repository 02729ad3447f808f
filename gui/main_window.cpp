// MainWindow: pages in a stack, settings applied to them, the store opened from the settings.
#include "gui/main_window.h"

#include "engine/devices.h"
#include "gui/benchmark_page.h"
#include "gui/history_page.h"
#include "gui/models_page.h"
#include "gui/migration_page.h"
#include "gui/report_page.h"
#include "gui/requirements_form.h"
#include "gui/selection_page.h"
#include "gui/playground_page.h"
#include "gui/plugins_page.h"
#include "gui/settings_page.h"
#include "gui/threaded_engine.h"

#include <QLabel>
#include <QListWidget>
#include <QSplitter>
#include <QStackedWidget>
#include <QStatusBar>

namespace mb::gui {

namespace {

struct PageInfo {
    const char* key;
    const char* title;
};
const PageInfo kPages[] = {{"playground", "Playground"}, {"benchmark", "Benchmark"}, {"history", "History"},
                           {"models", "Models"},         {"selection", "Selection"}, {"migration", "Migration"},
                           {"report", "Report"},         {"plugins", "Plugins"},     {"settings", "Settings"}};

QStringList deviceIds() {
    QStringList ids;
    for (const auto& d : engine::listDevices().devices) ids << QString::fromStdString(d.id);
    return ids;
}

} // namespace

QStringList MainWindow::pageKeys() {
    QStringList keys;
    for (const auto& p : kPages) keys << QString::fromLatin1(p.key);
    return keys;
}

MainWindow::MainWindow(const AppSettings& settings, EngineBackend* engine, QWidget* parent)
    : QMainWindow(parent), m_settings(settings) {
    setWindowTitle(tr("ModeBench"));
    if (!engine) {
        m_ownedEngine = std::make_unique<ThreadedEngine>();
        engine = m_ownedEngine.get();
    }
    m_engine = engine;
    m_store = new StoreClient(this);

    m_nav = new QListWidget;
    m_nav->setObjectName(QStringLiteral("nav"));
    m_nav->setFixedWidth(150);
    m_stack = new QStackedWidget;
    m_playground = new PlaygroundPage(m_engine);
    m_benchmark = new BenchmarkPage(m_engine);
    m_history = new HistoryPage(m_store);
    m_models = new ModelsPage(m_engine);
    m_settingsPage = new SettingsPage;
    m_selection = new SelectionPage(m_store);
    m_migration = new MigrationPage(m_engine, m_store);
    m_report = new ReportPage(m_store);
    m_plugins = new PluginsPage(m_store);
    for (const auto& p : kPages) {
        const QString key = QString::fromLatin1(p.key);
        QWidget* w = nullptr;
        if (key == QLatin1String("playground")) w = m_playground;
        else if (key == QLatin1String("benchmark")) w = m_benchmark;
        else if (key == QLatin1String("history")) w = m_history;
        else if (key == QLatin1String("models")) w = m_models;
        else if (key == QLatin1String("selection")) w = m_selection;
        else if (key == QLatin1String("migration")) w = m_migration;
        else if (key == QLatin1String("report")) w = m_report;
        else if (key == QLatin1String("plugins")) w = m_plugins;
        else w = m_settingsPage;
        m_stack->addWidget(w);
        m_nav->addItem(tr(p.title));
    }
    connect(m_nav, &QListWidget::currentRowChanged, m_stack, &QStackedWidget::setCurrentIndex);
    m_nav->setCurrentRow(0);

    auto* split = new QSplitter;
    split->addWidget(m_nav);
    split->addWidget(m_stack);
    split->setStretchFactor(1, 1);
    setCentralWidget(split);
    m_storeLabel = new QLabel;
    m_modelLabel = new QLabel;
    statusBar()->addWidget(m_modelLabel, 1);
    statusBar()->addPermanentWidget(m_storeLabel);

    const QStringList devices = deviceIds();
    m_playground->setDevices(devices);
    m_benchmark->setDevices(devices);
    m_settingsPage->setDevices(devices);

    connect(m_playground, &PlaygroundPage::modelsPageRequested, this, [this] { showPage(QStringLiteral("models")); });
    auto runsChanged = [this] {
        m_history->refresh();
        m_selection->refreshRuns();
        m_report->refreshLists();
    };
    connect(m_playground, &PlaygroundPage::runSaved, this, runsChanged);
    // A run deleted (with the selections citing it): the pages listing runs or selections.
    connect(m_store, &StoreClient::runDeleted, this, [this] {
        m_selection->refreshRuns();
        m_report->refreshLists();
    });
    connect(m_benchmark, &BenchmarkPage::runSaved, this, runsChanged);
    // A sweep's runs are the Selection page's capacity points.
    connect(m_benchmark, &BenchmarkPage::sweepSaved, m_selection, &SelectionPage::setRepeats);
    connect(m_selection, &SelectionPage::selectionSaved, this, [this](qint64 selectionId, qint64 runId) {
        if (m_selection->result())
            m_migration->follow(selectionId, runId, *m_selection->result(), m_selection->form()->requirements());
        m_report->refreshLists();
    });
    connect(m_models, &ModelsPage::modelChosen, this, [this](const QString& path) {
        useModel(path);
        m_settings.defaultModel = path;
        m_settings.save();
        m_settingsPage->setSettings(m_settings);
    });
    connect(m_settingsPage, &SettingsPage::settingsSaved, this, &MainWindow::applySettings);
    connect(m_store, &StoreClient::opened, this, [this](qint64 id, const QString& path) {
        if (id != m_openRequest) return;
        m_storeLabel->setText(tr("Runs: %1").arg(path));
        m_settingsPage->setStoreStatus(tr("Open: %1").arg(path), false);
        m_plugins->refresh();
        emit storeReady(path);
    });
    connect(m_store, &StoreClient::failed, this, [this](qint64 id, const QString& message) {
        if (id != m_openRequest) return;
        m_storeLabel->setText(tr("No run database"));
        m_settingsPage->setStoreStatus(tr("The run database cannot be opened: %1. Runs are not saved until another "
                                          "path is chosen here.")
                                           .arg(message),
                                       true);
        m_playground->setDatabasePath({});
        m_benchmark->setDatabasePath({});
        emit storeFailed(message);
    });

    m_settingsPage->setSettings(m_settings);
    applySettings(m_settings);
}

MainWindow::~MainWindow() = default;

bool MainWindow::showPage(const QString& key) {
    const int i = static_cast<int>(pageKeys().indexOf(key));
    if (i < 0) return false;
    m_nav->setCurrentRow(i);
    return true;
}

QWidget* MainWindow::page(const QString& key) const {
    const int i = static_cast<int>(pageKeys().indexOf(key));
    return i < 0 ? nullptr : m_stack->widget(i);
}

void MainWindow::useModel(const QString& path) {
    m_playground->setModel(path);
    m_benchmark->setModel(path);
    if (m_models->currentPath() != path) m_models->inspect(path);
    m_modelLabel->setText(tr("Model: %1").arg(path));
}

void MainWindow::applySettings(const AppSettings& settings) {
    m_settings = settings;
    const int threads = settings.effectiveThreads();
    m_playground->setThreads(threads);
    m_benchmark->setThreads(threads);
    m_migration->setThreads(threads);
    m_models->setThreads(threads);
    m_playground->setAllowUnsandboxed(settings.allowUnsandboxed);
    m_benchmark->setAllowUnsandboxed(settings.allowUnsandboxed);
    m_plugins->setAllowUnsandboxed(settings.allowUnsandboxed);
    m_selection->setPriceSheet(settings.priceSheet);
    QString error;
    const QString db = settings.effectiveDatabasePath(&error);
    if (db.isEmpty()) {
        m_storeLabel->setText(tr("No run database"));
        m_settingsPage->setStoreStatus(error, true);
    } else {
        // Runs are written by the engine thread's sink only once the store opened fine here.
        m_playground->setDatabasePath(db);
        m_benchmark->setDatabasePath(db);
        m_openRequest = m_store->open(db);
    }
    if (!settings.defaultModel.isEmpty()) useModel(settings.defaultModel);
}

} // namespace mb::gui
