// The selection rules at and around their boundaries, the score, the confidence and the JSON.
#include "lab/selection.h"
#include "selection_fixtures.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace mb::lab;
using mb::test::Behaviour;
using mb::test::syntheticRun;

namespace {

Requirements requirements(const std::string& json) {
    return parseRequirements(nlohmann::json::parse(json));
}

const TraceEntry& rule(const SelectionResult& r, const std::string& name) {
    for (const auto& t : r.trace)
        if (t.rule == name) return t;
    throw std::runtime_error("no trace entry " + name);
}

PriceSheet examplePrices() {
    return parsePriceSheet(nlohmann::json::parse(
        R"({"currency": "CNY", "per_million": {"input": 0.2, "cached_input": 0.02, "output": 0.8}})"));
}

// Both candidates equally fast (TTFT 100 ms) so only the rule under test can fire.
const Requirements kRelaxed = requirements(R"({"slo": {"ttft_ms": {"p95": 5000}}})");

// One prompt per request; request 0 of the fast candidate has `tokens` tokens before truncation.
std::vector<StoredRun> runWithLongestPrompt(int64_t tokens) {
    Behaviour fast, regular;
    auto run = syntheticRun(1, fast, regular, 20);
    run.candidates[0].requests[0].promptTokens = std::min<int64_t>(tokens, kFastContextCap);
    run.candidates[0].requests[0].truncatedTokens = std::max<int64_t>(0, tokens - kFastContextCap);
    run.candidates[1].requests[0].promptTokens = tokens;
    return {run};
}

} // namespace

TEST(Selection, ContextRuleBoundaryFromRecordedPrompts) {
    const auto at = select(kRelaxed, std::nullopt, runWithLongestPrompt(32768));
    EXPECT_FALSE(rule(at, "context").fired) << rule(at, "context").detail;
    EXPECT_EQ(at.inputs.overCap, 0);
    EXPECT_EQ(at.inputs.longest, 32768);

    const auto over = select(kRelaxed, std::nullopt, runWithLongestPrompt(32769));
    EXPECT_TRUE(rule(over, "context").fired);
    EXPECT_EQ(over.recommendation, Mode::Regular);
    EXPECT_EQ(over.decidedBy, "context");
    EXPECT_EQ(over.inputs.overCap, 1);
    EXPECT_EQ(over.inputs.count, 20);
    EXPECT_NE(rule(over, "context").detail.find("1 of 20 inputs (5.0%"), std::string::npos)
        << rule(over, "context").detail;
    EXPECT_NE(rule(over, "context").detail.find("32768"), std::string::npos);
    // A rule reports its margin, not a confidence of 1 by construction (issue 19, finding 3).
    EXPECT_FALSE(over.confidence.has_value());
    EXPECT_NE(over.headline.find("regular mode, decided by the context rule: 1 of 20 inputs (5.0%) longer than "
                                 "fast's cap of 32,768 tokens vs tolerance 0.0%"),
              std::string::npos)
        << over.headline;
}

TEST(Selection, ContextRuleBoundaryFromPromptFile) {
    const auto dir = std::filesystem::temp_directory_path() / ("mb_sel_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    // One token per character.
    SelectionOptions opt;
    opt.tokenize = [](const std::string& text) { return std::vector<int32_t>(text.size(), 7); };
    opt.baseDirectory = dir.string();
    for (const int64_t longest : {int64_t{32768}, int64_t{32769}}) {
        std::ofstream(dir / "prompts.txt") << "short prompt\n" << std::string(static_cast<size_t>(longest), 'x') << "\n"
                                           << "another\nand one more\n";
        auto req = kRelaxed;
        req.inputs.promptFile = "prompts.txt"; // relative: resolved against baseDirectory
        const auto r = select(req, std::nullopt, {syntheticRun(1, {}, {}, 10)}, opt);
        EXPECT_EQ(r.inputs.source, "prompt_file");
        EXPECT_EQ(r.inputs.count, 4);
        EXPECT_EQ(r.inputs.longest, longest);
        EXPECT_EQ(rule(r, "context").fired, longest == 32769) << rule(r, "context").detail;
        // Tolerance: 1 of 4 over (25%) fires only when the tolerance is below 25%.
        req.inputs.overCapTolerance = 0.25;
        EXPECT_FALSE(rule(select(req, std::nullopt, {syntheticRun(1, {}, {}, 10)}, opt), "context").fired);
        req.inputs.overCapTolerance = 0.24;
        EXPECT_EQ(rule(select(req, std::nullopt, {syntheticRun(1, {}, {}, 10)}, opt), "context").fired,
                  longest == 32769);
    }
    std::filesystem::remove_all(dir);
    // Without a tokenizer the prompt file cannot be measured.
    auto req = kRelaxed;
    req.inputs.promptFile = "prompts.txt";
    EXPECT_THROW(select(req, std::nullopt, {syntheticRun(1, {}, {}, 10)}), SelectionError);
}

TEST(Selection, StatedMaxTokensOverTheCapRequiresRegular) {
    auto req = kRelaxed;
    req.inputs.maxTokens = 32769;
    EXPECT_TRUE(rule(select(req, std::nullopt, {syntheticRun(1, {}, {}, 10)}), "context").fired);
    req.inputs.maxTokens = 32768;
    EXPECT_FALSE(rule(select(req, std::nullopt, {syntheticRun(1, {}, {}, 10)}), "context").fired);
}

TEST(Selection, LatencyRuleBoundaryAtThreeSeconds) {
    // Both candidates at 100 ms meet any of these limits: only the requirement's value matters.
    const auto exactly = select(requirements(R"({"slo": {"ttft_ms": {"p95": 3000}}})"), std::nullopt,
                                {syntheticRun(1, {}, {}, 20)});
    EXPECT_FALSE(rule(exactly, "latency").fired) << rule(exactly, "latency").detail;
    EXPECT_NE(rule(exactly, "latency").detail.find("3000 ms is not under 3000 ms"), std::string::npos)
        << rule(exactly, "latency").detail;

    const auto under = select(requirements(R"({"slo": {"ttft_ms": {"p95": 2999}}})"), std::nullopt,
                              {syntheticRun(1, {}, {}, 20)});
    EXPECT_TRUE(rule(under, "latency").fired);
    EXPECT_EQ(under.recommendation, Mode::Fast);
    EXPECT_EQ(under.decidedBy, "latency");
    EXPECT_NE(rule(under, "latency").detail.find("2999 ms is under 3000 ms"), std::string::npos);
}

TEST(Selection, LatencyRuleFiresWhenOnlyFastMeetsTheMeasuredSlo) {
    Behaviour fast{.ttftMs = 900}, regular{.ttftMs = 6000};
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 5000}}})");
    const auto r = select(req, std::nullopt, {syntheticRun(1, fast, regular, 20)});
    EXPECT_TRUE(rule(r, "latency").fired);
    EXPECT_EQ(r.recommendation, Mode::Fast);
    const auto& detail = rule(r, "latency").detail;
    EXPECT_NE(detail.find("only fast meets it"), std::string::npos) << detail;
    EXPECT_NE(detail.find("900.0 ms"), std::string::npos) << detail;
    EXPECT_NE(detail.find("6000.0 ms"), std::string::npos) << detail;
    EXPECT_TRUE(r.score(Mode::Fast).meetsSlo);
    EXPECT_FALSE(r.score(Mode::Regular).meetsSlo);
    // Both meeting it: the rule does not fire.
    regular.ttftMs = 1200;
    EXPECT_FALSE(rule(select(req, std::nullopt, {syntheticRun(1, fast, regular, 20)}), "latency").fired);
}

TEST(Selection, ContextWinsOverLatencyAndTheConflictIsRecorded) {
    auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 500}}})");
    auto runs = runWithLongestPrompt(40000);
    const auto r = select(req, std::nullopt, runs);
    EXPECT_TRUE(rule(r, "context").fired);
    EXPECT_TRUE(rule(r, "latency").fired);
    EXPECT_EQ(r.recommendation, Mode::Regular);
    EXPECT_EQ(r.decidedBy, "context");
    ASSERT_EQ(r.conflicts.size(), 1u);
    EXPECT_NE(r.conflicts[0].find("context wins"), std::string::npos);
    EXPECT_NE(rule(r, "latency").detail.find("overridden"), std::string::npos);
}

TEST(Selection, CostRulePrefersTheLowerCostPerMillionWhenCostOutweighsFeatures) {
    // Fast serves 90% of its prompt tokens from the cache: cheaper at cache-hit prices.
    Behaviour fast{.cachedTokens = 90}, regular;
    const auto runs = std::vector{syntheticRun(1, fast, regular, 20)};
    auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 5000}},
                               "weights": {"latency": 0.2, "cost": 0.6, "features": 0.2}})");
    const auto r = select(req, examplePrices(), runs);
    EXPECT_TRUE(rule(r, "cost").fired) << rule(r, "cost").detail;
    EXPECT_EQ(r.decidedBy, "cost");
    EXPECT_EQ(r.recommendation, Mode::Fast);
    ASSERT_TRUE(r.score(Mode::Fast).cost);
    EXPECT_LT(r.score(Mode::Fast).cost->perMillionTokens, r.score(Mode::Regular).cost->perMillionTokens);
    EXPECT_NEAR(r.score(Mode::Fast).hitRate, 0.9, 1e-12);
    EXPECT_EQ(r.score(Mode::Fast).costScore, 1.0);
    EXPECT_LT(r.score(Mode::Regular).costScore, 1.0);

    // The cheaper candidate that misses the SLO is not preferred over one meeting it.
    Behaviour slowCheap{.ttftMs = 9000, .cachedTokens = 90};
    const auto r2 = select(req, examplePrices(), {syntheticRun(1, slowCheap, regular, 20)});
    EXPECT_TRUE(rule(r2, "latency").fired == false);
    EXPECT_EQ(r2.recommendation, Mode::Regular);
    EXPECT_NE(rule(r2, "cost").detail.find("the only one meeting every SLO"), std::string::npos);

    // Cost weight equal to the features weight: the rule does not fire, the score decides.
    req.weights = {0.6, 0.2, 0.2};
    const auto r3 = select(req, examplePrices(), runs);
    EXPECT_FALSE(rule(r3, "cost").fired);
    EXPECT_NE(rule(r3, "cost").detail.find("does not exceed"), std::string::npos);
    EXPECT_EQ(r3.decidedBy, "score");

    // No price sheet: no cost, and the cost weight is dropped from the score.
    const auto r4 = select(req, std::nullopt, runs);
    EXPECT_FALSE(rule(r4, "cost").fired);
    EXPECT_EQ(r4.weights.cost, 0.0);
    EXPECT_NEAR(r4.weights.latency + r4.weights.features, 1.0, 1e-12);
}

TEST(Selection, LowOperationsCapabilityPenalisesFastAndListsMonitoring) {
    Behaviour fast{.cachedTokens = 50};
    auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 5000}, "e2e_ms": {"p99": 9000}},
                               "ops_capability": "low"})");
    const auto low = select(req, std::nullopt, {syntheticRun(1, fast, {}, 20)});
    EXPECT_TRUE(rule(low, "operations").fired);
    EXPECT_EQ(low.score(Mode::Fast).opsPenalty, kLowOpsPenalty);
    EXPECT_EQ(low.score(Mode::Regular).opsPenalty, 0.0);
    const auto& detail = rule(low, "operations").detail;
    // Low capability: three alerts, each acting by rolling back over a sustained window.
    EXPECT_NE(detail.find("a simpler plan of three alerts"), std::string::npos) << detail;
    EXPECT_NE(detail.find("roll back to regular when the prefix hit rate stays below 0.400 for 10 minutes "
                          "(measured 0.500)"),
              std::string::npos)
        << detail;
    EXPECT_EQ(low.monitoring.size(), 3u);
    EXPECT_EQ(detail.find("KV cache memory"), std::string::npos) << detail;
    EXPECT_NE(detail.find("without it the scores would tie: the penalty decides for regular"), std::string::npos)
        << detail;
    // Identical latency and features: the penalty alone decides for regular.
    EXPECT_EQ(low.decidedBy, "score");
    EXPECT_EQ(low.recommendation, Mode::Regular);
    EXPECT_NEAR(low.score(Mode::Regular).total - low.score(Mode::Fast).total, kLowOpsPenalty, 1e-12);

    req.opsCapability = OpsCapability::High;
    const auto high = select(req, std::nullopt, {syntheticRun(1, fast, {}, 20)});
    EXPECT_FALSE(rule(high, "operations").fired);
    EXPECT_EQ(high.score(Mode::Fast).opsPenalty, 0.0);
    // Medium: every bound with its p99, the hit rate and KV memory; high adds the scaling signals.
    req.opsCapability = OpsCapability::Medium;
    const auto medium = select(req, std::nullopt, {syntheticRun(1, fast, {}, 20)});
    const auto& plan = rule(medium, "operations").detail;
    EXPECT_NE(plan.find("prefix hit rate >= 0.400 (measured 0.500)"), std::string::npos) << plan;
    EXPECT_NE(plan.find("KV cache memory"), std::string::npos) << plan;
    EXPECT_NE(plan.find("e2e_ms.p99"), std::string::npos) << plan;
    EXPECT_GT(medium.monitoring.size(), low.monitoring.size());
    EXPECT_EQ(high.monitoring.size(), medium.monitoring.size() + 1);
    EXPECT_NE(high.monitoring.back().find("modebench_requests_waiting"), std::string::npos);
}

TEST(Selection, FeaturesComeFromTheStoredProfiles) {
    auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 5000}}, "needs": {"hot_updates": true}})");
    const auto r = select(req, std::nullopt, {syntheticRun(1, {}, {}, 10)});
    EXPECT_FALSE(r.score(Mode::Fast).hotUpdates);
    EXPECT_TRUE(r.score(Mode::Regular).hotUpdates);
    EXPECT_EQ(r.score(Mode::Fast).features, 0.0);
    EXPECT_EQ(r.score(Mode::Regular).features, 1.0);
    EXPECT_EQ(r.recommendation, Mode::Regular);
    // A fast profile configured for hot reload and dynamic batching supports both.
    auto run = syntheticRun(1, {}, {}, 10);
    run.candidates[0].info.profileJson = R"({"name":"fast-hot","base":"fast","reload":"hot","batching":"dynamic"})";
    req.needs.customBatching = true;
    const auto r2 = select(req, std::nullopt, {run});
    EXPECT_EQ(r2.score(Mode::Fast).features, 1.0);
    EXPECT_EQ(r2.score(Mode::Fast).profile, "fast-hot");
}

TEST(Selection, TheOnlyFeasibleCandidateIsChosenWithItsRivalsGap) {
    Behaviour fast{.ttftMs = 2000, .jitterMs = 100}, regular{.ttftMs = 8000, .jitterMs = 100};
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 4000}, "e2e_ms": {"p95": 4000}}})");
    // Fast meets both bounds and regular neither: feasibility decides, before any rule or score.
    const auto r = select(req, std::nullopt, {syntheticRun(1, fast, regular, 40)});
    EXPECT_EQ(r.recommendation, Mode::Fast);
    EXPECT_EQ(r.decidedBy, "feasibility");
    EXPECT_TRUE(rule(r, "feasibility").fired);
    EXPECT_NE(r.headline.find("regular E2E p95 8,430 ms vs 4,000 ms: 2.1× over; regular TTFT p95 8,400 ms"),
              std::string::npos)
        << r.headline;
    // One run: a within-run bootstrap, no confidence figure, and a warning.
    EXPECT_EQ(r.noise.method, "requests");
    EXPECT_EQ(r.noise.replicates, 200);
    EXPECT_FALSE(r.confidence.has_value());
    ASSERT_FALSE(r.warnings.empty());
}

TEST(Selection, IdenticalCandidatesAreWithinTheNoise) {
    // Same behaviour, both meeting the bound (p50 4000 ms <= 5000 ms, not under 3000 ms, so
    // the latency rule is silent): the score ties on the pooled data and the replicates split.
    Behaviour b{.ttftMs = 2000, .jitterMs = 1000};
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p50": 5000}}})");
    const auto r = select(req, std::nullopt, {syntheticRun(1, b, b, 40)});
    EXPECT_EQ(r.decidedBy, "score");
    EXPECT_EQ(r.verdict, Verdict::NoClearWinner);
    EXPECT_TRUE(r.marginWithinNoise);
    EXPECT_FALSE(r.confidence.has_value());
    EXPECT_LE(r.noise.ci95Low, 0.0);
    // Seeded: the same seed gives the same replicates.
    EXPECT_EQ(select(req, std::nullopt, {syntheticRun(1, b, b, 40)}).noise.agreeing, r.noise.agreeing);
}

TEST(Selection, RepeatedRunsAreBootstrappedOverRuns) {
    // Both meet the bound; the headroom (limit / measured, on a log scale) tells them apart.
    Behaviour fast{.ttftMs = 2000}, regular{.ttftMs = 4000};
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p50": 5000}}})");
    // Run 3: regular was faster. Pooled medians: fast 2000 ms, regular 4000 ms.
    std::vector<StoredRun> runs = {syntheticRun(1, fast, regular, 10), syntheticRun(2, fast, regular, 10),
                                   syntheticRun(3, Behaviour{.ttftMs = 4000}, Behaviour{.ttftMs = 3900}, 10)};
    const auto r = select(req, std::nullopt, runs);
    EXPECT_EQ(r.noise.method, "runs");
    EXPECT_EQ(r.noise.replicates, 200);
    EXPECT_EQ(r.runIds, (std::vector<int64_t>{1, 2, 3}));
    EXPECT_GT(r.noise.scoreMargin, kTieMargin);
    // Replicates that draw run 3 twice or more favour regular: the runs do not agree.
    EXPECT_LT(r.noise.agreeing, r.noise.replicates * 9 / 10);
    EXPECT_GT(r.noise.agreeing, r.noise.replicates / 2);
    EXPECT_EQ(r.verdict, Verdict::NoClearWinner);
    EXPECT_TRUE(r.marginWithinNoise);
    // All three agreeing: every replicate gives fast, a confidence from the runs and a clear margin.
    runs[2] = syntheticRun(3, fast, regular, 10);
    const auto clear = select(req, std::nullopt, runs);
    ASSERT_TRUE(clear.confidence.has_value());
    EXPECT_EQ(*clear.confidence, 1.0);
    EXPECT_FALSE(clear.marginWithinNoise);
    EXPECT_EQ(clear.verdict, Verdict::Recommended);
}

TEST(Selection, RunsThatCannotBeComparedAreRefused) {
    auto run = syntheticRun(7, {}, {}, 5);
    run.candidates.pop_back();
    try {
        select(kRelaxed, std::nullopt, {run});
        FAIL();
    } catch (const SelectionError& e) {
        EXPECT_NE(std::string(e.what()).find("run 7 needs one fast and one regular candidate (has a:fast)"),
                  std::string::npos)
            << e.what();
    }
    auto noRequests = syntheticRun(8, {}, {}, 5);
    noRequests.candidates[1].requests.clear();
    EXPECT_THROW(select(kRelaxed, std::nullopt, {noRequests}), SelectionError);
    auto twoFast = syntheticRun(9, {}, {}, 5);
    twoFast.candidates[1].info.profileJson = mb::test::kFastProfile;
    EXPECT_THROW(select(kRelaxed, std::nullopt, {twoFast}), SelectionError);
    EXPECT_THROW(select(kRelaxed, std::nullopt, {}), SelectionError);
}

TEST(Selection, ModeOfProfileReadsBaseThenName) {
    EXPECT_EQ(modeOfProfile(R"({"name":"fast-4k","base":"fast"})"), Mode::Fast);
    EXPECT_EQ(modeOfProfile(R"({"name":"regular"})"), Mode::Regular);
    EXPECT_EQ(modeOfProfile(R"({"name":"custom"})"), std::nullopt);
    EXPECT_EQ(modeOfProfile("not json"), std::nullopt);
}

TEST(Selection, ResultRoundTripsThroughJson) {
    Behaviour fast{.cachedTokens = 40};
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 2500}}, "ops_capability": "low"})");
    const auto r = select(req, examplePrices(), {syntheticRun(1, fast, {}, 10)});
    const auto j = toJson(r);
    EXPECT_EQ(j["recommendation"], "fast");
    ASSERT_EQ(j["trace"].size(), 6u);
    EXPECT_EQ(j["trace"][0]["rule"], "feasibility");
    EXPECT_EQ(j["trace"][1]["rule"], "quality");
    EXPECT_EQ(j["trace"][2]["rule"], "context");
    EXPECT_EQ(j["trace"][5]["rule"], "operations");
    EXPECT_TRUE(j["cost"]["fast"]["total"].is_number());
    EXPECT_TRUE(j["scores"]["regular"]["total"].is_number());
    EXPECT_EQ(toJson(selectionResultFromJson(j)), j);
    EXPECT_THROW(selectionResultFromJson(nlohmann::json::object()), SelectionError);
}

// Selections saved before feasibility, headroom and verdicts still read back: a recommended
// mode, a numeric confidence, and no new keys.
TEST(Selection, SelectionsSavedBeforeVerdictsReadBack) {
    auto j = nlohmann::json::parse(toJson(select(kRelaxed, std::nullopt, {syntheticRun(1, {}, {}, 10)})).dump());
    for (const char* key : {"verdict", "headline", "rule_margin", "basis", "dominance", "dominant", "tie_reasons",
                            "warnings"})
        j.erase(key);
    for (const char* mode : {"fast", "regular"})
        for (const char* key : {"precision", "context", "feasible", "gaps", "remedies", "spread"})
            j["scores"][mode].erase(key);
    j["recommendation"] = "fast";
    j["confidence"] = 0.97;
    const auto r = selectionResultFromJson(j);
    EXPECT_EQ(r.verdict, Verdict::Recommended);
    EXPECT_EQ(r.recommendation, Mode::Fast);
    EXPECT_EQ(r.confidence, 0.97);
    EXPECT_EQ(r.score(Mode::Fast).feasible, r.score(Mode::Fast).meetsSlo);
    // A recommended verdict needs a mode.
    j["recommendation"] = nullptr;
    EXPECT_THROW(selectionResultFromJson(j), SelectionError);
}

// A candidate whose requests were all rejected has no p95: the trace says so (not "0.0 ms >
// limit") and warns that its figures rest on no request.
TEST(Selection, CandidateWithoutSuccessfulRequestsIsNotComparedAsZero) {
    auto run = syntheticRun(1, Behaviour{.ttftMs = 200}, Behaviour{.ttftMs = 200}, 20);
    for (auto& r : run.candidates[1].requests) {
        r.status = RequestStatus::Rejected;
        r.error = "prompt longer than the context";
        r.promptTokens = r.outputTokens = 0;
        r.scheduledMs = r.firstTokenMs = r.finishedMs = -1;
        r.tokenTimesMs.clear();
    }
    for (size_t i = 0; i < 15; ++i) run.candidates[0].requests[i].truncatedTokens = 600;
    const auto r = select(requirements(R"({"slo": {"ttft_ms": {"p95": 10000}}})"), std::nullopt, {run});
    const std::string& latency = rule(r, "latency").detail;
    EXPECT_EQ(latency.find("0.0 ms >"), std::string::npos) << latency;
    EXPECT_NE(latency.find("regular ttft_ms.p95 not measured (no successful requests"), std::string::npos)
        << latency;
    EXPECT_NE(latency.find("caution: fast had 15 of 20 requests truncated"), std::string::npos) << latency;
    EXPECT_NE(latency.find("caution: regular had 0 of 20 requests succeed (20 rejected, 0 failed)"),
              std::string::npos)
        << latency;
    const auto& regular = r.score(Mode::Regular);
    EXPECT_FALSE(regular.slo.front().measured);
    EXPECT_TRUE(r.score(Mode::Fast).slo.front().measured);
    EXPECT_EQ(dataCaveat(r.score(Mode::Fast)), "fast had 15 of 20 requests truncated to its context cap");
    // The counts survive the stored JSON.
    const auto back = selectionResultFromJson(nlohmann::json::parse(toJson(r).dump()));
    EXPECT_EQ(dataCaveat(back.score(Mode::Regular)), dataCaveat(regular));
    EXPECT_FALSE(back.score(Mode::Regular).slo.front().measured);
}

TEST(Selection, TheSameRunTwiceIsNotARepeat) {
    const auto run = syntheticRun(3, {}, {}, 10);
    try {
        select(kRelaxed, std::nullopt, {run, run});
        FAIL() << "a run given twice was counted as two repeats";
    } catch (const SelectionError& e) {
        EXPECT_NE(std::string(e.what()).find("run 3 is given more than once"), std::string::npos) << e.what();
    }
}

TEST(Selection, RepeatsWithDifferentWorkloadsAreNamed) {
    auto a = syntheticRun(1, {}, {}, 10), b = syntheticRun(2, {}, {}, 10), c = syntheticRun(3, {}, {}, 10);
    EXPECT_TRUE(workloadMismatches({a, b}).empty());
    c.info.workloadJson = R"({"name":"shared-prefix","seed":7})";
    const auto m = workloadMismatches({a, b, c});
    ASSERT_EQ(m.size(), 1u);
    EXPECT_NE(m[0].find("run 3 has a different workload from run 1 (seed differ)"), std::string::npos) << m[0];
    b.info.configJson = R"({"prompts":"other.txt"})";
    EXPECT_EQ(workloadMismatches({a, b}).size(), 1u);
}
