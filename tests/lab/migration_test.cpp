// The migration flowchart: its edges, each node's check, the I→F loop, rollback and JSON.
#include "lab/migration.h"
#include "lab/migration_warmup.h"
#include "lab/run_config.h"
#include "lab/selection.h"
#include "selection_fixtures.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <unistd.h>

using namespace mb::lab;
using N = MigrationNode;

namespace {

Requirements slo(const std::string& json) {
    return parseRequirements(nlohmann::json::parse(json));
}

// A monitoring pass with the given TTFT p95 and queue p95 against a TTFT p95 bound.
MonitorResult pass(const Requirements& req, double ttftMs, double queueMs, double hitRate) {
    RunSummary s;
    s.requests = 50;
    s.ttftMs.count = 50;
    s.ttftMs.p95 = s.ttftMs.p99 = ttftMs;
    s.queueMs.count = 50;
    s.queueMs.p95 = queueMs;
    s.promptTokens.mean = 300;
    s.hitRate = hitRate;
    return monitorFromSummary(s, req, 7);
}

// A selection that recommends fast mode.
SelectionResult fastSelection() {
    SelectionResult sel;
    sel.recommendation = Mode::Fast;
    sel.headline = "fast mode, by the latency rule";
    return sel;
}

MigrationState atNodeF(const Requirements& req, double fastHitRate = 0.5) {
    SelectionResult sel = fastSelection();
    CandidateScore fast;
    fast.hitRate = fastHitRate;
    sel.scores = {fast};
    sel.monitoring = {"prefix hit rate", "ttft_ms.p95"};
    MigrationState s = startMigration(sel, req, mb::test::kFastProfile);
    assessContext(s, promptLengthHistogram({100, 200, 32768}));
    recordWarmup(s, WarmupResult{120, 80, 2, 4096, true, true, "reload refused"});
    enableFast(s);
    return s;
}

std::vector<N> nodes(std::initializer_list<N> n) { return n; }

} // namespace

TEST(Migration, EdgesAreExactlyTheFlowchart) {
    std::vector<std::string> edges;
    for (const auto& e : migrationEdges())
        edges.push_back(std::string(nodeName(e.from)) + "-" + e.label + ">" + nodeName(e.to));
    EXPECT_EQ(edges, (std::vector<std::string>{"A->B", "B-yes>C", "B-no>D", "D->E", "E->F", "F->G", "G-yes>H",
                                               "G-no>I", "I->F"}));
    EXPECT_STREQ(nodeTitle(N::B), "input > 32K?");
    EXPECT_STREQ(nodeTitle(N::I), "adjust batching parameters");
}

TEST(Migration, HistogramBinsAndTheCapBoundary) {
    const auto h = promptLengthHistogram({1, 3, 4, 32768, 32769});
    EXPECT_EQ(h.count, 5);
    EXPECT_EQ(h.overCap, 1);
    EXPECT_EQ(h.longest, 32769);
    ASSERT_EQ(h.bins.back().upTo, 65536);
    EXPECT_EQ(h.bins.back().count, 1);   // 32769
    EXPECT_EQ(h.bins[15].upTo, 32768);
    EXPECT_EQ(h.bins[15].count, 1);      // 32768 is not over the cap
    EXPECT_EQ(h.bins[2].count, 2);       // 3 and 4 in (2, 4]
    EXPECT_TRUE(inputsExceedCap(h, 0.0));
    EXPECT_TRUE(inputsExceedCap(h, 0.19));
    EXPECT_FALSE(inputsExceedCap(h, 0.2));
    EXPECT_FALSE(inputsExceedCap(promptLengthHistogram({32768}), 0.0));
    EXPECT_TRUE(promptLengthHistogram({}).bins.empty());
}

TEST(Migration, LongInputsKeepRegularMode) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    MigrationState s = startMigration(fastSelection(), req, mb::test::kFastProfile);
    assessContext(s, promptLengthHistogram({100, 32769}));
    EXPECT_EQ(s.node, N::C);
    EXPECT_EQ(s.path, nodes({N::A, N::B, N::C}));
    EXPECT_TRUE(s.finished());
    EXPECT_FALSE(s.rolledBack);
    EXPECT_THROW(enableFast(s), MigrationError);
}

TEST(Migration, WarmupMustRefuseTheModelUpdate) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    MigrationState s = startMigration(fastSelection(), req, mb::test::kFastProfile);
    EXPECT_THROW(recordWarmup(s, {}), MigrationError) << "D before A";
    assessContext(s, promptLengthHistogram({100}));
    ASSERT_EQ(s.node, N::D);
    recordWarmup(s, WarmupResult{50, 40, 1, 0, true, false, "reload accepted"});
    EXPECT_EQ(s.node, N::D) << "an accepted update fails the check";
    EXPECT_NE(s.lastNote.find("accepted during the warm-up"), std::string::npos) << s.lastNote;
    EXPECT_NE(checkWarmup({}), "");
    recordWarmup(s, WarmupResult{50, 40, 1, 0, true, true, "refused"});
    EXPECT_EQ(s.node, N::E);
    EXPECT_NE(s.checklist.warmupPlan.find("50 ms"), std::string::npos);
}

TEST(Migration, SloMetOnFirstPassFinishes) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    MigrationState s = atNodeF(req);
    recordMonitoring(s, pass(req, 300, 10, 0.6), req);
    EXPECT_EQ(s.node, N::H);
    EXPECT_EQ(s.path, nodes({N::A, N::B, N::D, N::E, N::F, N::G, N::H}));
    EXPECT_TRUE(s.finished());
}

TEST(Migration, MissedSloLoopsThroughBatchingAdjustments) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    MigrationState s = atNodeF(req);
    // Queueing dominates TTFT: batch more.
    recordMonitoring(s, pass(req, 800, 600, 0.6), req);
    ASSERT_EQ(s.node, N::I);
    const auto& p = s.proposals.back();
    EXPECT_FALSE(p.from.dynamic);
    EXPECT_TRUE(p.to.dynamic);
    EXPECT_EQ(p.to.maxBatch, 2);
    EXPECT_EQ(p.to.maxBatchTokens, 2048); // max(2048, ceil(2 × 300 / 256) × 256 = 768)
    EXPECT_EQ(p.to.maxWaitMs, 0.0);       // no TTFT slack
    EXPECT_NE(p.reason.find("queue p95 600.0 ms is 75% of TTFT p95 800.0 ms"), std::string::npos) << p.reason;
    applyBatching(s);
    EXPECT_EQ(s.node, N::F);
    EXPECT_EQ(s.batching.maxBatch, 2);
    EXPECT_EQ(s.adjustments, 1);
    // Second pass still misses; the loop goes round again, then meets the SLO.
    recordMonitoring(s, pass(req, 650, 400, 0.6), req);
    ASSERT_EQ(s.node, N::I);
    EXPECT_EQ(s.proposals.back().to.maxBatch, 4);
    applyBatching(s);
    recordMonitoring(s, pass(req, 450, 50, 0.6), req);
    EXPECT_EQ(s.node, N::H);
    EXPECT_EQ(s.path, nodes({N::A, N::B, N::D, N::E, N::F, N::G, N::I, N::F, N::G, N::I, N::F, N::G, N::H}));
    EXPECT_EQ(s.monitoring.size(), 3u);
}

TEST(Migration, SlowIterationsHalveTheBatch) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    const BatchingKnobs current{true, 16, 4096, 5.0};
    const auto p = proposeBatching(current, pass(req, 450, 20, 0.5), req);
    EXPECT_EQ(p.to.maxBatch, 8);
    EXPECT_TRUE(p.to.dynamic);
    EXPECT_EQ(p.to.maxBatchTokens, 4096);
    EXPECT_EQ(p.to.maxWaitMs, 5.0); // slack 50 ms / 2 = 25 > 5: unchanged
    EXPECT_EQ(proposeBatching(current, pass(req, 495, 20, 0.5), req).to.maxWaitMs, 2.5);
}

TEST(Migration, RollbackWhenTheCacheRunsCold) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    MigrationState s = atNodeF(req, /*fastHitRate=*/0.5); // floor 0.4
    EXPECT_DOUBLE_EQ(s.trigger.hitRateFloor, 0.4);
    recordMonitoring(s, pass(req, 900, 100, 0.1), req);
    EXPECT_EQ(s.node, N::C);
    EXPECT_TRUE(s.rolledBack);
    EXPECT_NE(s.rollbackReason.find("prefix hit rate 0.100 is below the floor 0.400"), std::string::npos)
        << s.rollbackReason;
    EXPECT_EQ(s.path, nodes({N::A, N::B, N::D, N::E, N::F, N::G, N::C}));
}

TEST(Migration, RollbackAfterTheLastAllowedAdjustment) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    MigrationState s = atNodeF(req);
    s.maxAdjustments = 1;
    recordMonitoring(s, pass(req, 800, 600, 0.6), req);
    applyBatching(s);
    recordMonitoring(s, pass(req, 700, 500, 0.6), req);
    EXPECT_EQ(s.node, N::C);
    EXPECT_TRUE(s.rolledBack);
    EXPECT_NE(s.rollbackReason.find("after 1 batching adjustments"), std::string::npos) << s.rollbackReason;
    EXPECT_NE(s.rollbackReason.find("ttft_ms.p95 700.0 ms is above the SLO 500 ms"), std::string::npos)
        << s.rollbackReason;
}

TEST(Migration, ManualRollbackFromTheMonitoringNodesOnly) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    MigrationState s = atNodeF(req);
    rollBack(s, "operator decision");
    EXPECT_EQ(s.node, N::C);
    EXPECT_THROW(rollBack(s, "again"), MigrationError);
    MigrationState early = startMigration(SelectionResult{}, req, mb::test::kFastProfile);
    EXPECT_THROW(rollBack(early, "too early"), MigrationError);
}

TEST(Migration, ChecklistAndStateRoundTripThroughJson) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}, "e2e_ms": {"p99": 2000}}})");
    MigrationState s = atNodeF(req);
    EXPECT_FALSE(s.checklist.complete()) << "the client-streaming question is open";
    s.checklist.clientStreams = true;
    EXPECT_TRUE(s.checklist.complete());
    recordMonitoring(s, pass(req, 800, 600, 0.6), req);
    const auto j = toJson(s);
    EXPECT_EQ(j["node"], "I");
    EXPECT_EQ(j["path"].size(), 7u);
    EXPECT_EQ(j["checklist"]["client_streams"], true);
    EXPECT_EQ(toJson(migrationFromJson(j)), j);
    auto bad = nlohmann::json::parse(j.dump());
    bad["node"] = "Z";
    EXPECT_THROW(migrationFromJson(bad), MigrationError);
    EXPECT_THROW(migrationFromJson(nlohmann::json::object()), MigrationError);
}

// Node D for real: a fast session refuses the model update while it warms up.
TEST(MigrationWarmup, FastSessionRefusesTheUpdateDuringWarmup) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    std::vector<std::vector<int32_t>> prompts = {std::vector<int32_t>(40, 5), std::vector<int32_t>(48, 9)};
    prompts[0][0] = prompts[1][0] = 1;
    const WarmupResult w = runWarmup(model.string(), mb::engine::Profile::fast(), prompts);
    EXPECT_TRUE(w.reloadAttempted);
    EXPECT_TRUE(w.reloadRefused) << w.reloadMessage;
    EXPECT_NE(w.reloadMessage.find("warm-up"), std::string::npos);
    EXPECT_GT(w.wallMs, 0.0);
    EXPECT_GT(w.cachedBytes, 0u) << "primed prefixes hold KV blocks";
    EXPECT_EQ(checkWarmup(w), "");
    // The regular profile hot-reloads: the same step reports the update as accepted.
    const WarmupResult r = runWarmup(model.string(), mb::engine::Profile::regular(), prompts);
    EXPECT_FALSE(r.reloadRefused);
    EXPECT_NE(checkWarmup(r), "");
}

// The rollback plan's hit-rate trigger holds even when every SLO is met: a cold cache at G
// rolls back (the walk-through must not end at H with a trigger it printed fired).
TEST(Migration, HitRateBelowTheFloorRollsBackEvenWithTheSlosMet) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 10000}}})");
    MigrationState s = atNodeF(req, /*fastHitRate=*/0.865); // floor 0.692
    recordMonitoring(s, pass(req, 300, 10, 0.582), req);
    EXPECT_EQ(s.node, N::C);
    EXPECT_TRUE(s.rolledBack);
    EXPECT_NE(s.rollbackReason.find("prefix hit rate 0.582 is below the floor 0.692"), std::string::npos)
        << s.rollbackReason;
    EXPECT_EQ(s.path, nodes({N::A, N::B, N::D, N::E, N::F, N::G, N::C}));
}

// Triggers use each SLO's own percentile: a p99 over the bound of a p95 SLO is shown, not a
// trigger, so a pass that meets the p95 bound is done.
TEST(Migration, TriggersUseTheSlosOwnPercentile) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    MigrationState s = atNodeF(req);
    MonitorResult m = pass(req, 300, 200, 0.6);
    m.p99.front().measuredMs = 900;
    m.p99.front().met = false;
    ASSERT_TRUE(sloMet(m));
    EXPECT_TRUE(firedTriggers(s.trigger, m).empty());
    recordMonitoring(s, m, req);
    EXPECT_EQ(s.node, N::H) << s.lastNote;
    // A pass with no successful request says so instead of comparing 0.0 ms.
    RunSummary empty;
    empty.requests = 10;
    const auto none = firedTriggers({}, monitorFromSummary(empty, req));
    ASSERT_EQ(none.size(), 1u);
    EXPECT_EQ(none[0], "ttft_ms.p95 has no successful request to measure (SLO 500 ms)");
}

// A selection that says regular walks A -> B -> C with its reason, whatever the prompts.
TEST(Migration, ARegularSelectionEndsAtC) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    SelectionResult sel;
    sel.recommendation = Mode::Regular;
    sel.headline = "regular mode, by the context rule: 16 of 16 inputs over the cap";
    MigrationState s = startMigration(sel, req, mb::test::kFastProfile);
    assessContext(s, promptLengthHistogram({100, 200}));
    EXPECT_EQ(s.path, nodes({N::A, N::B, N::C}));
    EXPECT_NE(s.lastNote.find("the selection recommends regular mode (regular mode, by the context rule"),
              std::string::npos)
        << s.lastNote;
    // Saved and restored, the reason stays.
    EXPECT_EQ(migrationFromJson(nlohmann::json::parse(toJson(s).dump())).regularBecause, s.regularBecause);
    // No clear winner is not a regular recommendation: the walk goes on.
    sel.verdict = Verdict::NoClearWinner;
    MigrationState t = startMigration(sel, req, mb::test::kFastProfile);
    assessContext(t, promptLengthHistogram({100}));
    EXPECT_EQ(t.node, N::D);
}

// Node A checks fast's effective cap (a 512-token profile) and the stated longest input.
TEST(Migration, NodeAUsesTheEffectiveCapAndTheStatedInput) {
    SelectionResult sel = fastSelection();
    CandidateScore fast;
    fast.contextCap = 512;
    sel.scores = {fast};
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    MigrationState s = startMigration(sel, req, mb::test::kFastProfile);
    EXPECT_EQ(s.contextCap, 512);
    assessContext(s, promptLengthHistogram({100, 600, 700}, s.contextCap));
    EXPECT_EQ(s.node, N::C);
    EXPECT_NE(s.lastNote.find("2 of 3 prompts (66.7%) exceed 512 tokens"), std::string::npos) << s.lastNote;
    const auto stated = slo(R"({"slo": {"ttft_ms": {"p95": 500}}, "inputs": {"max_tokens": 4096}})");
    MigrationState t = startMigration(sel, stated, mb::test::kFastProfile);
    assessContext(t, promptLengthHistogram({100}, t.contextCap));
    EXPECT_EQ(t.node, N::C);
    EXPECT_NE(t.lastNote.find("the stated longest input, 4096 tokens, exceeds fast mode's effective cap of 512"),
              std::string::npos)
        << t.lastNote;
}

// With max_batch already 1 and little queueing no knob can help: roll back now, quoting
// regular's own figures against the same SLO (never "max_batch 1 -> 1").
TEST(Migration, NoKnobLeftRollsBackAndQuotesRegular) {
    const auto req = slo(R"({"slo": {"ttft_ms": {"p95": 72}}})");
    SelectionResult sel = fastSelection();
    CandidateScore fast, regular;
    fast.hitRate = 0.5;
    regular.mode = Mode::Regular;
    regular.slo = {{"ttft_ms.p95", 72, 814, false, true}};
    sel.scores = {fast, regular};
    MigrationState s = startMigration(sel, req, mb::test::kFastProfile);
    assessContext(s, promptLengthHistogram({100}));
    recordWarmup(s, WarmupResult{120, 80, 2, 4096, true, true, "reload refused"});
    enableFast(s);
    recordMonitoring(s, pass(req, 124, 5, 0.6), req);
    EXPECT_EQ(s.node, N::C);
    EXPECT_TRUE(s.proposals.empty());
    EXPECT_NE(s.rollbackReason.find("no batching knob left to move"), std::string::npos) << s.rollbackReason;
    EXPECT_NE(s.rollbackReason.find("regular mode measured ttft_ms.p95 814.0 ms vs 72 ms (missed): it also misses "
                                    "this SLO"),
              std::string::npos)
        << s.rollbackReason;
}

namespace {

// One id per character, BOS (1) first: a tokenizer for prompt files without a model.
std::vector<int32_t> charTokens(const std::string& text) {
    std::vector<int32_t> ids{1};
    for (char c : text) ids.push_back(static_cast<unsigned char>(c));
    return ids;
}

// A stored run made by `compare --prompts FILE`: compare's default workload spec renamed
// "file:FILE" and the file in config_json, `requests` requests per candidate.
StoredRun promptFileRun(const std::string& file, int requests) {
    auto run = mb::test::syntheticRun(5, {}, {}, requests);
    WorkloadSpec spec = *builtinWorkload("shared-prefix");
    spec.name = "file:" + file;
    run.info.workloadJson = toJson(spec).dump();
    run.info.configJson = nlohmann::json{{"prompts", file}, {"primers", 0}}.dump();
    return run;
}

} // namespace

// A replay of a prompt-file run builds the very requests compare ran (lab::promptFileWorkload:
// its arrivals and warm-ups), with the max_tokens its RunConfig recorded.
TEST(MigrationReplay, PromptFileReplayIsComparesWorkload) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("mb_replay_cfg_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string file = (dir / "prompts.txt").string();
    std::ofstream(file) << "Once upon a time\nThe little dog\nA cat\n";
    auto run = mb::test::syntheticRun(8, {}, {}, 3);
    WorkloadSpec spec = promptFileSpec(file, loadPromptFile(file, charTokens, 9), 9);
    spec.arrival.kind = ArrivalSpec::Kind::Poisson;
    spec.arrival.rate = 4;
    spec.seed = 11;
    spec.warmupRequests = 2;
    run.info.workloadJson = toJson(spec).dump();
    RunConfig config;
    config.promptFile = file;
    config.maxTokens = 9;
    run.info.configJson = toJson(config).dump();

    const RunReplay r = replayRun(run, "", charTokens, TokenSpace{1, 2, 200});
    const auto want = promptFileWorkload(spec, loadPromptFile(file, charTokens, 9));
    ASSERT_EQ(r.requests.size(), want.size());
    ASSERT_EQ(r.requests.size(), 5u) << "2 warm-ups + 3 prompts";
    for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(r.requests[i].prompt, want[i].prompt) << i;
        EXPECT_EQ(r.requests[i].arrivalMs, want[i].arrivalMs) << i;
        EXPECT_EQ(r.requests[i].warmup, want[i].warmup) << i;
        EXPECT_EQ(r.requests[i].maxTokens, 9) << i;
    }
    EXPECT_EQ(r.maxTokens, 9);
    fs::remove_all(dir);
}

// F (and D) replay the run's own prompts: a prompt-file run reads its file again, with the
// run's arrivals and output lengths, never the default synthetic spec its workload_json holds.
TEST(MigrationReplay, PromptFileRunReplaysItsOwnPrompts) {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / ("mb_replay_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const std::string file = (dir / "prompts.txt").string();
    std::ofstream(file) << "Once upon a time\nThe little dog\nA cat\n";
    const TokenSpace space{1, 2, 200};
    const RunReplay r = replayRun(promptFileRun(file, 3), "", charTokens, space);
    ASSERT_EQ(r.requests.size(), 3u);
    EXPECT_EQ(r.requests[1].prompt, charTokens("The little dog"));
    EXPECT_EQ(r.requests[0].maxTokens, 4) << "the run's output length (fixture: 4 tokens)";
    EXPECT_EQ(r.spec.name, "file:" + file);
    EXPECT_EQ(r.promptFile, file);
    EXPECT_TRUE(r.primers.empty());
    EXPECT_NE(r.source.find("(3 prompts)"), std::string::npos) << r.source;

    // The recorded file gone: a stand-in with the same number of prompts, else a clear error.
    const std::string moved = (dir / "moved.txt").string();
    fs::rename(file, moved);
    try {
        replayRun(promptFileRun(file, 3), "", charTokens, space);
        FAIL() << "replayed a prompt-file run without its prompts";
    } catch (const MigrationError& e) {
        EXPECT_NE(std::string(e.what()).find("run 5 was made from the prompt file " + file), std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("--prompts FILE"), std::string::npos) << e.what();
    }
    const RunReplay stand = replayRun(promptFileRun(file, 3), moved, charTokens, space);
    EXPECT_EQ(stand.requests.size(), 3u);
    EXPECT_EQ(stand.spec.name, "file:" + moved);
    EXPECT_THROW(replayRun(promptFileRun(file, 5), moved, charTokens, space), MigrationError)
        << "3 prompts cannot be the run's 5 requests";

    // A synthetic run rebuilds its spec exactly, primers included when the run had them.
    auto synthetic = mb::test::syntheticRun(6, {}, {}, 4);
    WorkloadSpec spec = *builtinWorkload("shared-prefix");
    spec.sharedPrefix = {2, 2, 16, 4};
    synthetic.info.workloadJson = toJson(spec).dump();
    synthetic.info.configJson = R"({"prompts": "", "primers": 2})";
    const RunReplay s = replayRun(synthetic, moved, charTokens, space);
    EXPECT_TRUE(s.promptFile.empty());
    EXPECT_EQ(s.requests.size(), buildWorkload(spec, space).size());
    EXPECT_EQ(s.requests.back().prompt, buildWorkload(spec, space).back().prompt);
    EXPECT_EQ(s.primers.size(), 2u);
    fs::remove_all(dir);
}
