// Controllers driven by a fake backend: folding streamed data, dropping stale jobs, cancelling.
#include "fake_engine.h"
#include "gui/benchmark_controller.h"
#include "gui/playground_controller.h"

#include <QSignalSpy>
#include <QTimer>

#include <gtest/gtest.h>

namespace mb::gui {
namespace {

QVector<StreamedToken> tokens(std::initializer_list<std::pair<int32_t, const char*>> ids, double t0) {
    QVector<StreamedToken> out;
    for (const auto& [id, text] : ids) out.push_back({id, QString::fromUtf8(text), t0 += 10});
    return out;
}

RequestOutcome outcome(std::vector<int32_t> ids, const char* text) {
    RequestOutcome o;
    o.status = QStringLiteral("ok");
    o.tokens = std::move(ids);
    o.outputTokens = static_cast<qint64>(o.tokens.size());
    o.text = QString::fromUtf8(text);
    o.promptTokens = 5;
    o.cachedTokens = 4;
    return o;
}

TEST(PlaygroundController, FoldsTokensDiffsAndDropsStaleJobs) {
    test::FakeEngine engine;
    PlaygroundController c(&engine);
    PlaygroundJob job;
    job.prompt = QStringLiteral("Once");
    const qint64 old = c.start(job);
    const qint64 id = c.start(job); // the first is abandoned: its flag is set
    ASSERT_EQ(engine.flags.size(), 2u);
    EXPECT_TRUE(engine.flags[0]->load());
    EXPECT_FALSE(engine.flags[1]->load());
    EXPECT_TRUE(c.running());

    QSignalSpy diff(&c, &PlaygroundController::diffReady);
    QSignalSpy finished(&c, &PlaygroundController::finished);
    // Signals arrive queued, as from the engine thread.
    QTimer::singleShot(0, &engine, [&] {
        emit engine.tokensReceived(old, QStringLiteral("a"), tokens({{99, " stale"}}, 0));
        emit engine.tokensReceived(id, QStringLiteral("a"), tokens({{1, " upon"}, {2, " a"}}, 0));
        emit engine.tokensReceived(id, QStringLiteral("b"), tokens({{1, " upon"}, {3, " the"}}, 0));
        emit engine.requestFinished(id, QStringLiteral("a"), outcome({1, 2}, " upon a"));
        emit engine.requestFinished(id, QStringLiteral("b"), outcome({1, 3}, " upon the"));
        emit engine.jobFinished(old, JobOutcome{});
        JobOutcome o;
        o.storedRunId = 42;
        emit engine.jobFinished(id, o);
    });
    ASSERT_TRUE(finished.wait(5000));
    EXPECT_EQ(finished.count(), 1);
    EXPECT_EQ(diff.count(), 1);
    EXPECT_FALSE(c.running());
    EXPECT_EQ(c.outcome().storedRunId, 42);
    EXPECT_EQ(c.side("a").text, QStringLiteral(" upon a"));
    EXPECT_EQ(c.side("a").tokens, (std::vector<int32_t>{1, 2}));
    EXPECT_DOUBLE_EQ(c.side("a").ttftMs(), 10.0);
    EXPECT_DOUBLE_EQ(c.side("a").tokensPerSecond(), 100.0); // one gap of 10 ms
    ASSERT_EQ(c.diff().size(), 3u);
    EXPECT_EQ(c.diff()[0].kind, lab::DiffOp::Kind::Equal);
    EXPECT_EQ(c.diff()[1].kind, lab::DiffOp::Kind::OnlyA);
    EXPECT_EQ(c.diff()[2].kind, lab::DiffOp::Kind::OnlyB);
}

TEST(PlaygroundController, StopSetsTheFlagAndFailureEndsTheRun) {
    test::FakeEngine engine;
    PlaygroundController c(&engine);
    const qint64 id = c.start({});
    c.stop();
    EXPECT_TRUE(engine.flags.back()->load());
    QSignalSpy failed(&c, &PlaygroundController::failed);
    QTimer::singleShot(0, &engine, [&] { emit engine.jobFailed(id, QStringLiteral("bad model")); });
    ASSERT_TRUE(failed.wait(5000));
    EXPECT_EQ(failed.at(0).at(0).toString(), QStringLiteral("bad model"));
    EXPECT_FALSE(c.running());
}

lab::RequestRecord record(uint64_t id, double ttft) {
    lab::RequestRecord r;
    r.id = id;
    r.submittedMs = 0;
    r.firstTokenMs = ttft;
    r.tokenTimesMs = {ttft, ttft + 5};
    r.finishedMs = ttft + 5;
    r.outputTokens = 2;
    return r;
}

// A replay runs the stored run's workload: its progress total is that spec's request count
// (lab::measuredRequestCount), not the job's unused default workload.
TEST(BenchmarkController, AReplayCountsTheStoredRunsRequests) {
    test::FakeEngine engine;
    BenchmarkController c(&engine);
    BenchmarkJob job;
    job.onlyA = true;
    auto run = std::make_shared<lab::StoredRun>();
    lab::WorkloadSpec spec;
    spec.name = "file:/data/p.txt";
    spec.requests = 5;
    run->info.workloadJson = lab::toJson(spec).dump();
    job.replayOf = run;
    c.start(job);
    EXPECT_EQ(c.total(), 5) << "the stored run's 5 prompts, not the default spec's 64";
}

TEST(BenchmarkController, FoldsBatchesTracksProgressAndIgnoresOtherJobs) {
    test::FakeEngine engine;
    BenchmarkController c(&engine);
    BenchmarkJob job;
    job.workload = *lab::builtinWorkload("chat");
    job.workload.requests = 3;
    const qint64 id = c.start(job);
    EXPECT_EQ(c.total(), 6); // 3 per candidate
    QSignalSpy progress(&c, &BenchmarkController::progressChanged);
    QSignalSpy finished(&c, &BenchmarkController::finished);
    QTimer::singleShot(0, &engine, [&] {
        LiveBatch b;
        b.records = {{"a", record(0, 10)}, {"a", record(1, 12)}, {"b", record(0, 30)}};
        lab::StatsSample s;
        s.timeMs = 100;
        s.prefixQueries = 10;
        s.prefixHits = 8;
        s.kvBytesInUse = 2 * 1024 * 1024;
        b.samples = {{"a", s}};
        emit engine.dataReceived(id, b);
        emit engine.dataReceived(id + 100, b); // another job's data
        emit engine.jobProgress(id, QStringLiteral("a"), 2, 3, 50);
        emit engine.jobFinished(id, JobOutcome{});
    });
    ASSERT_TRUE(finished.wait(5000));
    EXPECT_EQ(c.inputs().at("a").records.size(), 2u);
    EXPECT_EQ(c.inputs().at("b").records.size(), 1u);
    ASSERT_EQ(c.inputs().at("a").hitRate.size(), 1u);
    EXPECT_DOUBLE_EQ(c.inputs().at("a").hitRate[0].y(), 0.8);
    EXPECT_DOUBLE_EQ(c.inputs().at("a").kvMiB[0].y(), 2.0);
    ASSERT_GE(progress.count(), 1);
    EXPECT_EQ(progress.last().at(0).toLongLong(), 2);
    EXPECT_EQ(progress.last().at(1).toLongLong(), 6);
    EXPECT_FALSE(c.running());
}

TEST(BenchmarkController, ASweepLevelRestartsTheChartsAndProgressButANoteDoesNot) {
    test::FakeEngine engine;
    BenchmarkController c(&engine);
    BenchmarkJob job;
    job.workload = *lab::builtinWorkload("chat");
    job.workload.requests = 3;
    job.sweep = lab::SweepKind::Concurrency;
    const qint64 id = c.start(job);
    QSignalSpy lines(&c, &BenchmarkController::sweepLevelStarted);
    QSignalSpy finished(&c, &BenchmarkController::finished);
    QTimer::singleShot(0, &engine, [&] {
        LiveBatch b;
        b.records = {{"a", record(0, 10)}};
        emit engine.sweepLevelStarted(id, QStringLiteral("sweep: concurrency 1 (level 1 of 2)"));
        emit engine.dataReceived(id, b);
        emit engine.jobProgress(id, QStringLiteral("a"), 3, 3, 50);
        emit engine.sweepLevelStarted(id + 100, QStringLiteral("sweep: concurrency 2 (level 2 of 2)")); // another job
        emit engine.sweepLevelStarted(id, QStringLiteral("sweep: every candidate saturated at two consecutive levels; stopping"));
        emit engine.jobFinished(id, JobOutcome{});
    });
    ASSERT_TRUE(finished.wait(5000));
    ASSERT_EQ(lines.size(), 2);
    EXPECT_EQ(c.inputs().at("a").records.size(), 1u) << "a note cleared the level's charts";
    EXPECT_EQ(c.done(), 3);

    // The next level starts afresh.
    const qint64 id2 = c.start(job);
    QSignalSpy progress(&c, &BenchmarkController::progressChanged);
    QSignalSpy finished2(&c, &BenchmarkController::finished);
    QTimer::singleShot(0, &engine, [&] {
        LiveBatch b;
        b.records = {{"a", record(0, 10)}};
        emit engine.dataReceived(id2, b);
        emit engine.jobProgress(id2, QStringLiteral("a"), 3, 3, 50);
        emit engine.sweepLevelStarted(id2, QStringLiteral("sweep: concurrency 2 (level 2 of 2)"));
        emit engine.jobFinished(id2, JobOutcome{});
    });
    ASSERT_TRUE(finished2.wait(5000));
    EXPECT_TRUE(c.inputs().empty());
    EXPECT_EQ(c.done(), 0);
    EXPECT_EQ(progress.last().at(0).toLongLong(), 0);
    EXPECT_EQ(progress.last().at(1).toLongLong(), 6);
}

} // namespace
} // namespace mb::gui
