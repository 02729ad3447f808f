// The Migration page over a real store: a step abandoned by following again, and D and F replaying the run.
#include "fake_engine.h"
#include "store_fixture.h"
#include "test_data.h"

#include "engine/gguf.h"
#include "engine/profile.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"
#include "gui/migration_page.h"
#include "gui/threaded_engine.h"
#include "lab/comparison.h"
#include "lab/run_config.h"

#include <QLabel>
#include <QSignalSpy>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>

namespace mb::gui {
namespace {

using N = lab::MigrationNode;

// Waits (on stateChanged) until `page` has a walk-through.
bool waitForState(MigrationPage& page) {
    for (int i = 0; i < 100 && !page.state(); ++i) {
        QSignalSpy changed(&page, &MigrationPage::stateChanged);
        changed.wait(100);
    }
    return page.state().has_value();
}

QString statusOf(const MigrationPage& page) {
    return page.findChild<QLabel*>(QStringLiteral("migration.status"))->text();
}

struct FakeWalk {
    test::TempDir dir;
    test::FakeEngine engine;
    StoreClient store;
    int64_t runId = 0, selectionId = 0;
    std::unique_ptr<MigrationPage> page;

    // A stored fast-vs-regular run with a selection; the page follows it, at A.
    void start() {
        const std::string path = dir / "runs.db";
        {
            db::SqliteRunSink sink(path);
            runId = test::writeSampleRun(sink, "sample");
        }
        selectionId = db::RunStore::open(path).saveSelection(test::selectionOf({runId}));
        ASSERT_TRUE(test::openStore(store, path));
        page = std::make_unique<MigrationPage>(&engine, &store);
        follow();
    }
    void follow() {
        page->follow(selectionId, runId, test::fastRecommendation(), lab::Requirements{});
        ASSERT_TRUE(waitForState(*page));
        ASSERT_EQ(page->state()->node, N::A);
    }
    // A (answered by the fake) to D.
    void toD() {
        page->runStep(QStringLiteral("prompts.txt"));
        ASSERT_FALSE(engine.scanJobs.empty());
        emit engine.promptsScanned(engine.scanJobs.back(), std::vector<int64_t>{11, 15, 10});
        ASSERT_EQ(page->state()->node, N::D);
    }
    static lab::WarmupResult refusedReload() {
        lab::WarmupResult w;
        w.reloadAttempted = w.reloadRefused = true;
        w.wallMs = 12;
        return w;
    }
};

TEST(MigrationPage, DecidingAgainWhileTheWarmupRunsAbandonsItInsteadOfCrashing) {
    FakeWalk w;
    ASSERT_NO_FATAL_FAILURE(w.start());
    ASSERT_NO_FATAL_FAILURE(w.toD());
    w.page->runStep(); // D: the warm-up starts on the engine
    ASSERT_EQ(w.engine.warmupJobs.size(), 1u);
    const qint64 oldJob = w.engine.warmupJobs[0].jobId;

    // The Selection page's Decide again: MainWindow follows the new selection.
    ASSERT_NO_FATAL_FAILURE(w.follow());
    EXPECT_TRUE(statusOf(*w.page).contains(QStringLiteral("abandoned"))) << statusOf(*w.page).toStdString();
    // The old warm-up ends: dropped by its job id, not recorded against node A.
    EXPECT_NO_THROW(emit w.engine.warmupFinished(oldJob, FakeWalk::refusedReload()));
    EXPECT_EQ(w.page->state()->node, N::A);
    EXPECT_FALSE(w.page->state()->warmup.has_value());

    // The new walk-through takes its own D.
    ASSERT_NO_FATAL_FAILURE(w.toD());
    w.page->runStep();
    ASSERT_EQ(w.engine.warmupJobs.size(), 2u);
    EXPECT_NO_THROW(emit w.engine.warmupFinished(w.engine.warmupJobs[1].jobId, FakeWalk::refusedReload()));
    EXPECT_EQ(w.page->state()->node, N::E);
}

TEST(MigrationPage, DecidingAgainWhileMonitoringStopsThePassAndDropsItsResult) {
    FakeWalk w;
    ASSERT_NO_FATAL_FAILURE(w.start());
    ASSERT_NO_FATAL_FAILURE(w.toD());
    w.page->runStep();
    emit w.engine.warmupFinished(w.engine.warmupJobs.back().jobId, FakeWalk::refusedReload());
    w.page->runStep(); // E
    ASSERT_EQ(w.page->state()->node, N::F);
    w.page->runStep(); // F: the monitoring pass starts
    ASSERT_EQ(w.engine.benchmarkJobs.size(), 1u);
    const qint64 passJob = w.engine.benchmarkJobs[0].jobId;
    EXPECT_EQ(w.engine.benchmarkJobs[0].replayOf->id, w.runId); // F replays the run itself

    ASSERT_NO_FATAL_FAILURE(w.follow());
    EXPECT_TRUE(w.engine.flags.back()->load()); // the pass was stopped
    JobOutcome o;
    o.storedRunId = 99;
    lab::RunSummary s;
    s.ok = s.requests = 3;
    o.summaries.emplace_back("a", s);
    EXPECT_NO_THROW(emit w.engine.jobFinished(passJob, o));
    EXPECT_EQ(w.page->state()->node, N::A);
    EXPECT_TRUE(w.page->state()->monitoring.empty());
}

// The run compare makes from a prompt file (its workload a placeholder named "file:PATH",
// its config naming the file), with the prompt tokens the real tokenizer gives each line.
int64_t writePromptFileRun(const std::string& db, const std::string& model, const std::string& prompts,
                           std::vector<int64_t>& promptTokens) {
    const auto tok = engine::Tokenizer::create(engine::Vocab::fromGguf(engine::GgufFile::open(model)));
    const auto requests =
        lab::loadPromptFile(prompts, [&](const std::string& t) { return tok->encode(t, tok->vocab().addBos); }, 4);
    lab::WorkloadSpec spec;
    spec.name = "file:" + prompts;
    spec.requests = static_cast<int64_t>(requests.size());
    lab::RunInfo info;
    info.name = "compare --prompts";
    info.workloadJson = lab::toJson(spec).dump();
    lab::RunConfig config;
    config.promptFile = prompts;
    config.maxTokens = 4;
    info.configJson = lab::toJson(config).dump();
    info.environmentJson = "{}";
    db::SqliteRunSink sink(db);
    const int64_t run = sink.beginRun(info);
    for (const char* mode : {"fast", "regular"}) {
        lab::CandidateInfo c;
        c.label = mode == std::string("fast") ? "a" : "b";
        c.targetKind = "embedded";
        c.modelPath = model;
        c.profileJson = (mode == std::string("fast") ? engine::Profile::fast() : engine::Profile::regular()).toJson();
        const int64_t cid = sink.addCandidate(run, c);
        for (size_t i = 0; i < requests.size(); ++i) {
            lab::RequestRecord r = test::makeRecord(i, 4);
            r.promptTokens = static_cast<int64_t>(requests[i].prompt.size());
            sink.requestFinished(cid, r);
        }
        sink.finishCandidate(cid, "{}", {});
    }
    sink.finishRun(run, lab::RunStatus::Complete, "{}");
    for (const auto& r : requests) promptTokens.push_back(static_cast<int64_t>(r.prompt.size()));
    return run;
}

// D primes the run's own prompts and F replays them (not the placeholder's synthetic
// prompts), on the real engine; the monitoring run says which run it replays.
TEST(MigrationPage, WarmupAndMonitoringReplayTheRunsOwnPrompts) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    test::TempDir dir;
    const std::string prompts = dir / "prompts.txt";
    std::ofstream(prompts) << "Once upon a time\nThe little dog ran to the big park with his friend\nA cat\n"
                              "Lily wanted to play with the red ball in the garden all day long\nTom\n";
    const std::string path = dir / "runs.db";
    std::vector<int64_t> want;
    const int64_t runId = writePromptFileRun(path, model.string(), prompts, want);
    const int64_t selectionId = db::RunStore::open(path).saveSelection(test::selectionOf({runId}));

    ThreadedEngine engine;
    StoreClient store;
    ASSERT_TRUE(test::openStore(store, path));
    MigrationPage page(&engine, &store);
    page.follow(selectionId, runId, test::fastRecommendation(), lab::Requirements{}); // no prompt file in them
    ASSERT_TRUE(waitForState(page));
    for (int step = 0; step < 5 && !page.state()->finished() && page.state()->monitoring.empty(); ++step) {
        const auto before = page.state()->path.size();
        QSignalSpy changed(&page, &MigrationPage::stateChanged);
        page.runStep(QString::fromStdString(prompts)); // the file is A's corpus only
        while (page.state()->path.size() == before && page.state()->monitoring.empty())
            ASSERT_TRUE(changed.wait(120000)) << "stuck at " << lab::nodeName(page.state()->node) << ": "
                                              << statusOf(page).toStdString();
    }
    ASSERT_TRUE(page.state()->warmup.has_value()) << statusOf(page).toStdString();
    EXPECT_EQ(page.state()->warmup->primedPrompts, static_cast<int64_t>(want.size()));
    ASSERT_EQ(page.state()->monitoring.size(), 1u) << statusOf(page).toStdString();

    const auto monitoring = db::RunStore::open(path).getRun(page.state()->monitoring[0].runId);
    ASSERT_EQ(monitoring.candidates.size(), 1u);
    std::map<uint64_t, int64_t> got;
    for (const auto& r : monitoring.candidates[0].requests) got[r.id] = r.promptTokens;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "request " << i;
    const lab::RunConfig config = lab::runConfigFromText(monitoring.info.configJson);
    EXPECT_EQ(config.replaysRun, runId);
    EXPECT_EQ(config.promptFile, prompts);
    EXPECT_EQ(config.maxTokens, 4) << "the replay records the max_tokens it used";
    EXPECT_NE(std::find(monitoring.info.tags.begin(), monitoring.info.tags.end(), "migration"),
              monitoring.info.tags.end());
}

} // namespace
} // namespace mb::gui
