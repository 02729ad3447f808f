// The real engine and store behind the pages: golden playground text, a benchmark filling every
// chart and the store, a UI thread that keeps ticking, and the error states a person sees.
#include "db/run_store.h"
#include "gui/benchmark_charts.h"
#include "gui/benchmark_page.h"
#include "gui/history_page.h"
#include "gui/main_window.h"
#include "gui/migration_page.h"
#include "gui/models_page.h"
#include "gui/report_page.h"
#include "gui/selection_page.h"
#include "gui/playground_page.h"
#include "gui/workload_designer.h"
#include "lab/executive_summary.h"
#include "lab/run_config.h"
#include "page_helpers.h"
#include "test_data.h"

#include <QAbstractItemView>
#include <QElapsedTimer>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableWidget>
#include <QTextBrowser>
#include <QTimer>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace mb::gui {
namespace {

namespace fs = std::filesystem;

class TempDir {
public:
    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path = fs::temp_directory_path() / ("mb_gui_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(m_path);
        fs::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    QString file(const char* name) const { return QString::fromStdString((m_path / name).string()); }

private:
    fs::path m_path;
};

AppSettings settingsFor(const QString& db, const QString& model) {
    AppSettings s;
    s.threads = 1; // leaves a core for the UI thread on the 2-core CI machine
    s.databasePath = db;
    s.defaultModel = model;
    return s;
}

// Waits for the store to open (it opens asynchronously at start).
void waitForStore(MainWindow& w) {
    if (!w.store()->path().isEmpty()) return;
    QSignalSpy ready(&w, &MainWindow::storeReady);
    ASSERT_TRUE(ready.wait(10000));
}

TEST(Gui, EveryPageIsInTheNavigation) {
    TempDir dir;
    MainWindow w(settingsFor(dir.file("runs.db"), {}));
    const auto* nav = w.findChild<QListWidget*>(QStringLiteral("nav"));
    ASSERT_NE(nav, nullptr);
    EXPECT_EQ(nav->count(), 9);
    for (const QString& key : MainWindow::pageKeys()) {
        ASSERT_TRUE(w.showPage(key)) << key.toStdString();
        ASSERT_NE(w.page(key), nullptr);
        EXPECT_EQ(w.page(key)->objectName(), QStringLiteral("page.") + key);
    }
    EXPECT_FALSE(w.showPage(QStringLiteral("nope")));
    // No model yet: the playground offers to open or create one.
    EXPECT_FALSE(w.findChild<QWidget*>(QStringLiteral("playground.open_models"))->isHidden());
}

TEST(Gui, PlaygroundGivesTheGoldenTextInBothPanes) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    MB_REQUIRE_DATA(golden, "golden/stories260K.json");
    const auto g = nlohmann::json::parse(std::ifstream(golden));
    const auto& gen = g["generation"][0]; // 20 tokens, greedy
    ASSERT_EQ(gen["n_new_tokens"].get<int>(), 20);
    TempDir dir;
    MainWindow w(settingsFor(dir.file("runs.db"), QString::fromStdString(model.string())));
    waitForStore(w);
    auto* page = w.playground();
    page->setPrompt(QString::fromStdString(gen["prompt"].get<std::string>()));
    w.findChild<QSpinBox*>(QStringLiteral("playground.max_tokens"))->setValue(20);
    QSignalSpy finished(&page->controller(), &PlaygroundController::finished);
    QSignalSpy failed(&page->controller(), &PlaygroundController::failed);
    page->runBoth();
    ASSERT_TRUE(finished.wait(120000)) << (failed.isEmpty() ? "timeout" : failed.at(0).at(0).toString().toStdString());
    const QString want = QString::fromStdString(gen["text"].get<std::string>());
    for (const char* side : {"a", "b"}) {
        const auto* out = w.findChild<QTextBrowser*>(QStringLiteral("playground.output.") + QLatin1String(side));
        ASSERT_NE(out, nullptr);
        EXPECT_EQ(out->toPlainText(), want) << side;
        std::vector<int32_t> ids = gen["generated_tokens"].get<std::vector<int32_t>>();
        ids.resize(20);
        EXPECT_EQ(page->controller().side(side).tokens, ids) << side;
        EXPECT_EQ(page->controller().side(side).tokenMs.size(), 20u) << side;
    }
    EXPECT_TRUE(w.findChild<QTextBrowser*>(QStringLiteral("playground.diff"))->toPlainText().contains(QStringLiteral("Identical")));
    // Saved as one run with two candidates.
    const int64_t runId = finished.at(0).at(0).value<JobOutcome>().storedRunId;
    ASSERT_GT(runId, 0);
    const auto run = db::RunStore::open(dir.file("runs.db").toStdString()).getRun(runId);
    EXPECT_EQ(run.candidates.size(), 2u);
    EXPECT_EQ(run.info.tags, std::vector<std::string>{"playground"});
}

TEST(Gui, BenchmarkFillsEveryChartAndTheStoreWhileTheUiKeepsTicking) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    MainWindow w(settingsFor(dir.file("runs.db"), QString::fromStdString(model.string())));
    w.resize(1400, 900);
    w.show();
    w.showPage(QStringLiteral("benchmark"));
    waitForStore(w);
    auto* page = w.benchmark();
    lab::WorkloadSpec spec = *lab::builtinWorkload("shared-prefix");
    spec.sharedPrefix = {4, 12, 96, 16};
    spec.output.kind = lab::LengthDist::Kind::Fixed;
    spec.output.a = 48;
    spec.output.max = 48;
    spec.arrival.concurrency = 4;
    page->designer()->setSpec(spec);

    // A 10 ms timer on the UI thread: the longest gap between its ticks while data streams
    // shows whether anything blocked the UI thread.
    QElapsedTimer clock;
    clock.start();
    qint64 last = -1, worstGap = 0, ticks = 0;
    bool streaming = false;
    QTimer tick;
    tick.setInterval(10);
    QObject::connect(&tick, &QTimer::timeout, [&] {
        const qint64 now = clock.elapsed();
        if (streaming && last >= 0) worstGap = std::max(worstGap, now - last), ++ticks;
        last = now;
    });
    QObject::connect(&page->controller(), &BenchmarkController::dataChanged, [&] { streaming = page->controller().running(); });
    tick.start();

    QSignalSpy finished(&page->controller(), &BenchmarkController::finished);
    QSignalSpy failed(&page->controller(), &BenchmarkController::failed);
    page->run();
    ASSERT_TRUE(finished.wait(300000)) << (failed.isEmpty() ? "timeout" : failed.at(0).at(0).toString().toStdString());
    streaming = false;
    tick.stop();
    QCoreApplication::processEvents();

    const auto* charts = page->charts();
    for (const char* key : {"ttft_histogram", "e2e_cdf", "itl_cdf", "ttft_over_time", "throughput", "kv_memory"})
        for (const char* label : {"a", "b"})
            EXPECT_GT(charts->pointCount(QString::fromLatin1(key), label), 0) << key << " " << label;
    // Only the fast profile has a prefix cache to report on.
    EXPECT_GT(charts->pointCount(QStringLiteral("hit_rate"), "a"), 0);

    const JobOutcome out = finished.at(0).at(0).value<JobOutcome>();
    ASSERT_GT(out.storedRunId, 0);
    const auto runs = db::RunStore::open(dir.file("runs.db").toStdString()).listRuns();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].status, lab::RunStatus::Complete);
    // The GUI stores the same typed configuration as the CLI, sampling and arrival included.
    const lab::RunConfig config =
        lab::runConfigFromText(db::RunStore::open(dir.file("runs.db").toStdString()).getRun(runs[0].id).info.configJson);
    EXPECT_EQ(config.source, "gui");
    ASSERT_EQ(config.candidates.size(), 2u);
    EXPECT_EQ(config.candidates[0].model, model.string());
    EXPECT_EQ(config.candidates[1].profile, "regular");
    EXPECT_TRUE(config.sampling) << "sampling was missing from GUI runs";
    ASSERT_TRUE(config.arrival);
    EXPECT_EQ(config.arrival->concurrency, 4);
    EXPECT_EQ(config.primers, 4);
    EXPECT_FALSE(config.sloTtftMs) << "no SLO: unset, not -1";
    EXPECT_EQ(page->summaryModel().value(page->summaryModel().rowOf(QStringLiteral("requests ok")), 0), 48);

    RecordProperty("worst_ui_gap_ms", static_cast<int>(worstGap));
    ASSERT_GT(ticks, 20) << "the benchmark streamed too briefly to measure the UI thread";
    // 250 ms: a UI thread that waited on the engine or the store would stall for the run's seconds;
    // on a 2-core machine shared with the engine's threads (and whatever else runs) the scheduler
    // alone has been seen to delay a tick by 190 ms (CI, 2026-12-02).
    EXPECT_LT(worstGap, 250) << "the UI thread stalled for " << worstGap << " ms while data streamed";

    // History lists the run and rebuilds its charts from the store.
    QSignalSpy opened(w.history(), &HistoryPage::runOpened);
    w.history()->openRun(out.storedRunId);
    ASSERT_TRUE(opened.wait(30000));
    EXPECT_GT(w.history()->charts()->pointCount(QStringLiteral("ttft_histogram"), "a"), 0);
    EXPECT_GT(w.history()->charts()->pointCount(QStringLiteral("hit_rate"), "a"), 0);
}

TEST(Gui, PrecisionABAppearsBesideTheLatencyFiguresAndInHistory) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    MainWindow w(settingsFor(dir.file("runs.db"), QString::fromStdString(model.string())));
    w.showPage(QStringLiteral("benchmark"));
    waitForStore(w);
    auto* page = w.benchmark();
    lab::WorkloadSpec spec = *lab::builtinWorkload("chat");
    spec.requests = 4;
    spec.input = {lab::LengthDist::Kind::Fixed, 24, 0, 1, 24};
    spec.output = {lab::LengthDist::Kind::Fixed, 8, 0, 1, 8};
    spec.arrival.concurrency = 2;
    page->designer()->setSpec(spec);
    auto* prompts = page->findChild<QSpinBox*>(QStringLiteral("benchmark.precision_prompts"));
    ASSERT_NE(prompts, nullptr);
    prompts->setValue(2);

    QSignalSpy finished(&page->controller(), &BenchmarkController::finished);
    QSignalSpy failed(&page->controller(), &BenchmarkController::failed);
    QSignalSpy precision(&page->controller(), &BenchmarkController::precisionProgress);
    page->run();
    ASSERT_TRUE(finished.wait(300000)) << (failed.isEmpty() ? "timeout" : failed.at(0).at(0).toString().toStdString());
    ASSERT_FALSE(precision.isEmpty());
    EXPECT_EQ(precision.last().at(1).toLongLong(), 2); // the last candidate's 2 of 2 prompts
    auto& table = page->summaryModel();
    const int agreement = table.rowOf(QStringLiteral("agreement vs f32"));
    ASSERT_GE(agreement, 0);
    for (int c : {0, 1}) {
        EXPECT_GE(table.value(agreement, c), 0.0);
        EXPECT_LE(table.value(agreement, c), 1.0);
        EXPECT_GT(table.value(table.rowOf(QStringLiteral("perplexity")), c), 1.0);
    }

    const JobOutcome out = finished.at(0).at(0).value<JobOutcome>();
    ASSERT_GT(out.storedRunId, 0);
    QSignalSpy opened(w.history(), &HistoryPage::runOpened);
    w.history()->openRun(out.storedRunId);
    ASSERT_TRUE(opened.wait(30000));
    auto* history = w.history()->findChild<QAbstractItemView*>(QStringLiteral("history.summary"));
    ASSERT_NE(history, nullptr);
    const auto* hm = qobject_cast<const SummaryTableModel*>(history->model());
    ASSERT_NE(hm, nullptr);
    const int row = hm->rowOf(QStringLiteral("agreement vs f32"));
    ASSERT_GE(row, 0);
    EXPECT_DOUBLE_EQ(hm->value(row, 1), table.value(agreement, 1));
}

TEST(Gui, AModelThatFailsToLoadShowsTheLoadersMessage) {
    TempDir dir;
    const QString bad = dir.file("broken.gguf");
    std::ofstream(bad.toStdString()) << "GGUF but not really";
    MainWindow w(settingsFor(dir.file("runs.db"), {}));
    QSignalSpy failed(w.models(), &ModelsPage::inspectFailed);
    w.models()->inspect(bad);
    ASSERT_TRUE(failed.wait(10000));
    const QString shown = w.findChild<QLabel*>(QStringLiteral("models.error"))->text();
    EXPECT_TRUE(shown.startsWith(QStringLiteral("Cannot load this model:"))) << shown.toStdString();
    EXPECT_TRUE(shown.contains(QStringLiteral("broken.gguf"))) << shown.toStdString();
}

TEST(Gui, ADatabaseThatCannotBeOpenedIsExplained) {
    TempDir dir;
    const QString notDb = dir.file("notes.txt");
    std::ofstream(notDb.toStdString()) << "these are my notes, not a database\n";
    MainWindow w(settingsFor(notDb, {}));
    QSignalSpy failed(&w, &MainWindow::storeFailed);
    ASSERT_TRUE(failed.wait(10000));
    const QString shown = w.findChild<QLabel*>(QStringLiteral("settings.store_status"))->text();
    EXPECT_TRUE(shown.contains(QStringLiteral("cannot be opened"))) << shown.toStdString();
    EXPECT_TRUE(shown.contains(QStringLiteral("not a ModeBench database"))) << shown.toStdString();
    // The file is untouched.
    std::ifstream in(notDb.toStdString());
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "these are my notes, not a database");
}

TEST(Gui, CreatingASyntheticModelShowsItAndCanBeCancelled) {
    TempDir dir;
    MainWindow w(settingsFor(dir.file("runs.db"), {}));
    QSignalSpy inspected(w.models(), &ModelsPage::modelInspected);
    w.models()->createSynthetic(QStringLiteral("tiny"), QStringLiteral("q8_0"), 1, dir.file("tiny.gguf"));
    ASSERT_TRUE(inspected.wait(60000));
    EXPECT_EQ(inspected.at(0).at(0).toString(), dir.file("tiny.gguf"));
    EXPECT_GT(w.models()->tensors().rowCount(), 0);
}

TEST(Gui, ModelsPageComparesPrecisionsOnTheEngineThread) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    MainWindow w(settingsFor(dir.file("runs.db"), {}));
    ModelsPage* page = w.models();
    QSignalSpy inspected(page, &ModelsPage::modelInspected);
    page->inspect(QString::fromStdString(model.string()));
    ASSERT_TRUE(inspected.wait(30000));
    auto* run = page->findChild<QPushButton*>(QStringLiteral("models.precision_run"));
    ASSERT_NE(run, nullptr);
    EXPECT_TRUE(run->isEnabled());

    // The open model in F32 against itself at q4_0, on the built-in sentences.
    QSignalSpy compared(page, &ModelsPage::precisionCompared);
    run->click();
    EXPECT_FALSE(run->isEnabled()); // one long job at a time
    ASSERT_TRUE(compared.wait(120000));
    const auto r = compared.at(0).at(0).value<lab::PrecisionCheck>();
    EXPECT_EQ(r.precision, "q4_0");
    EXPECT_EQ(r.prompts, static_cast<int64_t>(lab::samplePrecisionTexts().size()));
    EXPECT_GT(r.meanKl, 0.0);
    EXPECT_GT(r.referencePerplexity, 1.0);
    const auto* result = page->findChild<QLabel*>(QStringLiteral("models.precision_result"));
    ASSERT_NE(result, nullptr);
    EXPECT_TRUE(result->text().contains(QStringLiteral("Greedy agreement"))) << result->text().toStdString();
    EXPECT_TRUE(run->isEnabled());

    // A prompt file that does not exist: the loader's message, and the page is usable again.
    QSignalSpy failed(w.engine(), &EngineBackend::jobFailed);
    page->comparePrecision({}, QStringLiteral("int8"), dir.file("missing.jsonl"));
    ASSERT_TRUE(failed.wait(30000));
    const auto* error = page->findChild<QLabel*>(QStringLiteral("models.error"));
    ASSERT_NE(error, nullptr);
    EXPECT_TRUE(error->text().contains(QStringLiteral("missing.jsonl"))) << error->text().toStdString();
    EXPECT_TRUE(run->isEnabled());
}

} // namespace
} // namespace mb::gui

namespace mb::gui {
namespace {

// A benchmark, then the decision, the walk-through and the report on it, as a person would.
TEST(Gui, SelectionMigrationAndReportFollowABenchmark) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    MainWindow w(settingsFor(dir.file("runs.db"), QString::fromStdString(model.string())));
    waitForStore(w);
    lab::WorkloadSpec spec = *lab::builtinWorkload("shared-prefix");
    spec.sharedPrefix = {2, 6, 64, 16};
    spec.output.kind = lab::LengthDist::Kind::Fixed;
    spec.output.a = 8;
    spec.output.max = 8;
    spec.arrival.concurrency = 2;
    w.benchmark()->designer()->setSpec(spec);
    QSignalSpy ran(&w.benchmark()->controller(), &BenchmarkController::finished);
    w.benchmark()->run();
    ASSERT_TRUE(ran.wait(300000));
    const qint64 runId = ran.at(0).at(0).value<JobOutcome>().storedRunId;
    ASSERT_GT(runId, 0);

    // Selection: feasibility, quality and the four rules in order, a headline, saved.
    QSignalSpy saved(w.selection(), &SelectionPage::selectionSaved);
    w.selection()->decide(runId);
    ASSERT_TRUE(saved.wait(60000)) << w.findChild<QLabel*>(QStringLiteral("selection.status"))->text().toStdString();
    const auto* trace = w.findChild<QTableWidget*>(QStringLiteral("selection.trace"));
    ASSERT_GE(trace->rowCount(), 6);
    EXPECT_EQ(trace->item(0, 0)->text(), QStringLiteral("feasibility"));
    EXPECT_EQ(trace->item(1, 0)->text(), QStringLiteral("quality"));
    EXPECT_EQ(trace->item(2, 0)->text(), QStringLiteral("context"));
    EXPECT_EQ(trace->item(5, 0)->text(), QStringLiteral("operations"));
    // The summary opens with lab's verdict line, and the label below shows lab's headline.
    ASSERT_TRUE(w.selection()->result().has_value());
    EXPECT_EQ(w.findChild<QLabel*>(QStringLiteral("summary.verdict"))->text().toStdString(),
              lab::executiveSummary(*w.selection()->result()).verdictLine);
    EXPECT_EQ(w.findChild<QLabel*>(QStringLiteral("selection.recommendation"))->text(),
              QStringLiteral("Headline: ") + QString::fromStdString(w.selection()->result()->headline));

    // Migration: the walk starts at A; A with a prompt corpus, D, E, F run for real.
    MigrationPage* m = w.migration();
    if (!m->state()) {
        QSignalSpy started(m, &MigrationPage::stateChanged);
        ASSERT_TRUE(started.wait(30000));
    }
    ASSERT_TRUE(m->state().has_value());
    EXPECT_EQ(m->state()->node, lab::MigrationNode::A);
    const QString prompts = dir.file("prompts.jsonl");
    std::ofstream(prompts.toStdString()) << "{\"prompt\": \"Once upon a time\"}\n{\"prompt\": \"The little dog\"}\n";
    for (int step = 0; step < 6 && !m->state()->finished() && m->state()->node != lab::MigrationNode::I; ++step) {
        const auto before = m->state()->path.size();
        QSignalSpy changed(m, &MigrationPage::stateChanged);
        m->runStep(prompts);
        while (m->state()->path.size() == before)
            ASSERT_TRUE(changed.wait(60000))
                << "stuck at node " << lab::nodeName(m->state()->node) << ": "
                << w.findChild<QLabel*>(QStringLiteral("migration.status"))->text().toStdString();
    }
    const auto& path = m->state()->path;
    for (auto n : {lab::MigrationNode::A, lab::MigrationNode::B, lab::MigrationNode::D, lab::MigrationNode::E,
                   lab::MigrationNode::F, lab::MigrationNode::G})
        EXPECT_NE(std::find(path.begin(), path.end(), n), path.end()) << lab::nodeName(n);
    ASSERT_TRUE(m->state()->warmup.has_value());
    EXPECT_TRUE(m->state()->warmup->reloadRefused);
    EXPECT_EQ(m->state()->monitoring.size(), 1u);

    // Report: built from the saved selection, previewed, exported in every format.
    const qint64 selectionId = saved.at(0).at(0).toLongLong();
    QSignalSpy ready(w.report(), &ReportPage::reportReady);
    w.report()->build(0, selectionId);
    ASSERT_TRUE(ready.wait(60000));
    EXPECT_FALSE(w.findChild<QTextBrowser*>(QStringLiteral("report.preview"))->toPlainText().isEmpty());
    for (const char* format : {"html", "pdf", "md", "json", "csv"}) {
        const QString out = dir.file((std::string("report.") + format).c_str());
        EXPECT_EQ(test::exportReport(*w.report(), QString::fromLatin1(format), out), QString()) << format;
        std::ifstream in(out.toStdString(), std::ios::binary);
        std::string head(5, '\0');
        in.read(head.data(), 5);
        EXPECT_TRUE(in.gcount() == 5) << format;
        if (std::string(format) == "pdf") {
            EXPECT_EQ(head, "%PDF-");
        }
    }
    // The walk-through was saved with the selection.
    const auto stored = db::RunStore::open(dir.file("runs.db").toStdString()).getSelection(selectionId);
    EXPECT_FALSE(stored.migrationJson.empty());
}

} // namespace
} // namespace mb::gui
