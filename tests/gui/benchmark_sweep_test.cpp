// The Benchmark page's capacity sweep over the real engine and store: each level a stored run
// with its sweep tag, the run ids in the status and the Selection page's Repeats, bad levels
// refused before anything starts, and a cancelled sweep that leaves the store consistent.
#include "db/run_store.h"
#include "gui/benchmark_page.h"
#include "gui/main_window.h"
#include "gui/selection_page.h"
#include "gui/workload_designer.h"
#include "lab/capacity.h"
#include "test_data.h"

#include <QComboBox>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

namespace mb::gui {
namespace {

namespace fs = std::filesystem;

// A fresh folder per test, removed after it.
class SweepDir {
public:
    SweepDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path = fs::temp_directory_path() / ("mb_gui_sweep_" + std::to_string(::getpid()) + "_" + info->name());
        fs::remove_all(m_path);
        fs::create_directories(m_path);
    }
    ~SweepDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    QString db() const { return QString::fromStdString((m_path / "runs.db").string()); }

private:
    fs::path m_path;
};

// The main window over `db` with the tiny model, its store open, on the Benchmark page with a
// small workload (`requests` requests of 8 output tokens).
std::unique_ptr<MainWindow> windowFor(const SweepDir& dir, const fs::path& model, int requests) {
    AppSettings s;
    s.threads = 1;
    s.databasePath = dir.db();
    s.defaultModel = QString::fromStdString(model.string());
    auto w = std::make_unique<MainWindow>(s);
    w->showPage(QStringLiteral("benchmark"));
    if (w->store()->path().isEmpty()) {
        QSignalSpy ready(w.get(), &MainWindow::storeReady);
        EXPECT_TRUE(ready.wait(10000));
    }
    lab::WorkloadSpec spec = *lab::builtinWorkload("chat");
    spec.requests = requests;
    spec.input = {lab::LengthDist::Kind::Fixed, 16, 0, 1, 16};
    spec.output = {lab::LengthDist::Kind::Fixed, 8, 0, 1, 8};
    w->benchmark()->designer()->setSpec(spec);
    return w;
}

void chooseSweep(BenchmarkPage& page, const QString& kind, const QString& levels) {
    auto* sweep = page.findChild<QComboBox*>(QStringLiteral("benchmark.sweep"));
    auto* field = page.findChild<QLineEdit*>(QStringLiteral("benchmark.sweep_levels"));
    ASSERT_NE(sweep, nullptr);
    ASSERT_NE(field, nullptr);
    sweep->setCurrentIndex(sweep->findData(kind));
    field->setText(levels);
}

QString statusOf(BenchmarkPage& page) { return page.findChild<QLabel*>(QStringLiteral("benchmark.status"))->text(); }

TEST(BenchmarkSweep, ConcurrencyLevelsAreStoredAsTaggedRunsAndGoToTheSelectionsRepeats) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    SweepDir dir;
    auto w = windowFor(dir, model, 4);
    auto* page = w->benchmark();
    chooseSweep(*page, QStringLiteral("concurrency"), QStringLiteral("1, 2"));

    QSignalSpy finished(&page->controller(), &BenchmarkController::finished);
    QSignalSpy failed(&page->controller(), &BenchmarkController::failed);
    QSignalSpy levels(&page->controller(), &BenchmarkController::sweepLevelStarted);
    QSignalSpy saved(page, &BenchmarkPage::sweepSaved);
    page->run();
    ASSERT_TRUE(finished.wait(300000)) << (failed.isEmpty() ? "timeout" : failed.at(0).at(0).toString().toStdString());
    ASSERT_EQ(levels.size(), 2);
    EXPECT_EQ(levels.at(1).at(0).toString(), QStringLiteral("sweep: concurrency 2 (level 2 of 2)"));

    const JobOutcome out = finished.at(0).at(0).value<JobOutcome>();
    EXPECT_FALSE(out.cancelled);
    ASSERT_EQ(out.sweepRunIds.size(), 2u);
    db::RunStore store = db::RunStore::open(dir.db().toStdString());
    ASSERT_EQ(store.listRuns().size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
        const auto tag = lab::sweepTagOf(store.getRun(out.sweepRunIds[i]));
        ASSERT_TRUE(tag) << "run " << out.sweepRunIds[i] << " has no sweep tag";
        EXPECT_EQ(tag->kind, lab::SweepKind::Concurrency);
        EXPECT_EQ(tag->level, static_cast<double>(i + 1));
        EXPECT_EQ(tag->index, static_cast<int>(i));
    }
    const QString ids = QStringLiteral("%1, %2").arg(out.sweepRunIds[0]).arg(out.sweepRunIds[1]);
    EXPECT_TRUE(statusOf(*page).contains(ids)) << statusOf(*page).toStdString();
    ASSERT_EQ(saved.size(), 1);
    EXPECT_EQ(saved.at(0).at(0).toString(), ids);
    auto* repeats = w->selection()->findChild<QLineEdit*>(QStringLiteral("selection.repeats"));
    ASSERT_NE(repeats, nullptr);
    EXPECT_EQ(repeats->text(), ids);
}

TEST(BenchmarkSweep, BadLevelsAreExplainedAndStartNothing) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    SweepDir dir;
    auto w = windowFor(dir, model, 2);
    auto* page = w->benchmark();
    QSignalSpy running(&page->controller(), &BenchmarkController::runningChanged);
    for (const char* levels : {"2, 1", "x", "1.5"}) {
        chooseSweep(*page, QStringLiteral("concurrency"), QString::fromLatin1(levels));
        page->run();
        EXPECT_FALSE(page->controller().running()) << levels;
        EXPECT_TRUE(statusOf(*page).startsWith(QStringLiteral("Sweep not started: "))) << statusOf(*page).toStdString();
    }
    chooseSweep(*page, QStringLiteral("rates"), QStringLiteral("0, 2"));
    page->run();
    EXPECT_TRUE(statusOf(*page).contains(QStringLiteral("positive"))) << statusOf(*page).toStdString();
    EXPECT_TRUE(running.isEmpty());
    EXPECT_EQ(page->controller().jobId(), 0);
}

TEST(BenchmarkSweep, CancelMidSweepEndsItAndLeavesTheStoreConsistent) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    SweepDir dir;
    auto w = windowFor(dir, model, 200); // long enough that level 2 is still running when Stop lands
    auto* page = w->benchmark();
    chooseSweep(*page, QStringLiteral("concurrency"), QStringLiteral("1, 2, 4"));

    QSignalSpy finished(&page->controller(), &BenchmarkController::finished);
    QSignalSpy failed(&page->controller(), &BenchmarkController::failed);
    // Stop once the second level starts: the first is done, the rest never run.
    QObject::connect(&page->controller(), &BenchmarkController::sweepLevelStarted, [&](const QString& line) {
        if (line.contains(QLatin1String("level 2 of"))) page->controller().stop();
    });
    page->run();
    ASSERT_TRUE(finished.wait(300000)) << (failed.isEmpty() ? "timeout" : failed.at(0).at(0).toString().toStdString());
    const JobOutcome out = finished.at(0).at(0).value<JobOutcome>();
    EXPECT_TRUE(out.cancelled);
    EXPECT_FALSE(page->controller().running());
    ASSERT_GE(out.sweepRunIds.size(), 1u);
    EXPECT_LE(out.sweepRunIds.size(), 2u);

    db::RunStore store = db::RunStore::open(dir.db().toStdString());
    const auto runs = store.listRuns();
    EXPECT_EQ(runs.size(), out.sweepRunIds.size()) << "a level that never ran was stored";
    for (const auto& r : runs) {
        EXPECT_TRUE(lab::sweepTagOf(store.getRun(r.id)));
        EXPECT_NE(r.status, lab::RunStatus::Running) << "run " << r.id << " left open";
    }
    EXPECT_EQ(store.getRun(out.sweepRunIds[0]).info.name.find("(sweep: concurrency 1)") != std::string::npos, true);
}

} // namespace
} // namespace mb::gui
