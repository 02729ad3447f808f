// Issue 19's situations as scenarios: measured runs from hand-made request records, requirements and
// prices in, the headline, the deciding rule and its key sentences out.
#include "lab/selection.h"
#include "selection_fixtures.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace mb::lab;
using mb::test::Behaviour;
using mb::test::syntheticRun;

namespace {

Requirements requirements(const std::string& json) { return parseRequirements(nlohmann::json::parse(json)); }

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const TraceEntry& rule(const SelectionResult& r, const std::string& name) {
    for (const auto& t : r.trace)
        if (t.rule == name) return t;
    throw std::runtime_error("no trace entry " + name);
}

// Finding 1's measurements, by hand: fast answers in ~68 ms with 2 ms gaps, regular in ~814 ms
// with 20 ms gaps (jitter keeps the percentiles apart from the means).
const Behaviour kFast{.ttftMs = 60, .gapMs = 2, .outputTokens = 4, .jitterMs = 2};
const Behaviour kRegular{.ttftMs = 800, .gapMs = 20, .outputTokens = 4, .jitterMs = 4};

// `n` repeats of the same two candidates (run ids 1..n).
std::vector<StoredRun> repeats(int n, const Behaviour& fast, const Behaviour& regular, int requests = 20) {
    std::vector<StoredRun> runs;
    for (int i = 1; i <= n; ++i) runs.push_back(syntheticRun(i, fast, regular, requests));
    return runs;
}

// A run on a model whose own context is `modelContext`, with a fast profile capped at
// `fastCap`: every prompt has `promptTokens` tokens before truncation.
StoredRun shortContextRun(int64_t modelContext, int64_t fastCap, int64_t promptTokens) {
    StoredRun run = syntheticRun(1, kFast, kRegular, 20);
    const int64_t fastLimit = std::min(fastCap, modelContext - 1);
    for (auto& c : run.candidates) c.info.shapeJson = R"({"dim":64,"context_length":)" + std::to_string(modelContext) + "}";
    run.candidates[0].info.profileJson =
        R"({"name":"fast-small","base":"fast","max_context":)" + std::to_string(fastCap) + "}";
    for (auto& r : run.candidates[0].requests) {
        r.promptTokens = std::min(promptTokens, fastLimit);
        r.truncatedTokens = promptTokens - r.promptTokens;
    }
    for (auto& r : run.candidates[1].requests) {
        r.promptTokens = promptTokens;
        if (promptTokens > modelContext - 1) { // regular rejects what it cannot hold
            r.status = RequestStatus::Rejected;
            r.scheduledMs = r.firstTokenMs = r.finishedMs = -1;
            r.tokenTimesMs.clear();
            r.outputTokens = 0;
        }
    }
    return run;
}

const Requirements kFinding1 = requirements(R"({"slo": {"ttft_ms": {"p95": 3000}, "e2e_ms": {"p99": 10000}}})");

} // namespace

// Finding 1: a mode 12× faster on every metric must not lose a tie with confidence 1.000.
TEST(SelectionScenarios, DominanceIsStatedAndTheFasterModeWins) {
    const auto r = select(kFinding1, std::nullopt, repeats(3, kFast, kRegular));
    EXPECT_EQ(r.verdict, Verdict::Recommended);
    EXPECT_EQ(r.recommendation, Mode::Fast);
    EXPECT_EQ(r.decidedBy, "score");
    EXPECT_TRUE(has(r.headline, "fast mode, decided by the weighted score")) << r.headline;
    EXPECT_TRUE(has(r.dominance, "fast is better on all 8 measured metrics")) << r.dominance;
    EXPECT_TRUE(has(r.dominance, "in each of the 3 runs")) << r.dominance;
    EXPECT_TRUE(has(r.headline, r.dominance)) << r.headline;
    // Headroom, not pass/fail: both meet both bounds, fast by far more.
    EXPECT_TRUE(r.score(Mode::Fast).meetsSlo && r.score(Mode::Regular).meetsSlo);
    EXPECT_GT(r.score(Mode::Fast).latency, r.score(Mode::Regular).latency + 0.1);
    EXPECT_LT(r.score(Mode::Fast).latency, 1.0);
    ASSERT_TRUE(r.confidence.has_value());
    EXPECT_GE(*r.confidence, kClearConfidence);
    EXPECT_EQ(r.noise.method, "runs");
    EXPECT_FALSE(r.marginWithinNoise);
}

// Both far under generous bounds: the capped headroom scores tie at 1, and dominance, which
// reads the measurements themselves, breaks the tie instead of handing it to regular.
TEST(SelectionScenarios, DominanceBreaksATieOfSaturatedScores) {
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 100000}, "e2e_ms": {"p99": 1000000}}})");
    const auto r = select(req, std::nullopt, repeats(3, kFast, kRegular));
    EXPECT_EQ(r.score(Mode::Fast).latency, 1.0);
    EXPECT_EQ(r.score(Mode::Regular).latency, 1.0);
    EXPECT_EQ(r.verdict, Verdict::Recommended);
    EXPECT_EQ(r.recommendation, Mode::Fast);
    EXPECT_EQ(r.decidedBy, "dominance");
    EXPECT_EQ(r.dominant, Mode::Fast);
    EXPECT_EQ(r.headline.rfind("fast mode, decided by dominance: fast is better on all 8 measured metrics", 0), 0u)
        << r.headline;
    EXPECT_TRUE(has(r.headline, "the weighted scores tie at")) << r.headline;
    EXPECT_FALSE(r.confidence.has_value());
    const auto j = toJson(r);
    EXPECT_EQ(j["dominant"], "fast");
    EXPECT_EQ(toJson(selectionResultFromJson(j)), j);
}

TEST(SelectionScenarios, HeadroomScoreIsContinuousInTheRatio) {
    // One bound, both candidates feasible: the candidate further under the limit scores higher,
    // and the score moves with every millisecond instead of saturating at 1 when met.
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 3000}}})");
    const auto near = select(req, std::nullopt, repeats(1, Behaviour{.ttftMs = 2900}, Behaviour{.ttftMs = 2950}));
    EXPECT_GT(near.score(Mode::Fast).slo[0].headroom, near.score(Mode::Regular).slo[0].headroom);
    EXPECT_NEAR(near.score(Mode::Fast).slo[0].headroom, 0.5 - std::log(2900.0 / 3000) / (2 * std::log(kHeadroomSpan)),
                1e-12);
    const auto atLimit = select(req, std::nullopt, repeats(1, Behaviour{.ttftMs = 3000}, Behaviour{.ttftMs = 3000}));
    EXPECT_NEAR(atLimit.score(Mode::Fast).slo[0].headroom, 0.5, 1e-12);
}

// A true tie is a tie: no winner, the reasons, and the measurement that would separate them.
TEST(SelectionScenarios, IdenticalCandidatesAreNoClearWinner) {
    const Behaviour same{.ttftMs = 500, .jitterMs = 50};
    const auto r = select(kFinding1, std::nullopt, repeats(3, same, same));
    EXPECT_EQ(r.verdict, Verdict::NoClearWinner);
    EXPECT_TRUE(has(r.headline, "no clear winner: weighted scores fast")) << r.headline;
    EXPECT_TRUE(has(r.headline, "under the 0.02 tie margin")) << r.headline;
    EXPECT_FALSE(r.confidence.has_value());
    EXPECT_TRUE(r.marginWithinNoise);
    EXPECT_TRUE(r.dominance.empty());
    bool separator = false;
    for (const auto& t : r.tieReasons) separator = separator || has(t, "to separate them: a price sheet");
    EXPECT_TRUE(separator);
    const auto j = toJson(r);
    EXPECT_TRUE(j["recommendation"].is_null());
    EXPECT_EQ(j["verdict"], "no_clear_winner");
}

// Finding 3: runs that disagree give no clear winner, whatever the pooled score says.
TEST(SelectionScenarios, RunsThatDisagreeAreNoClearWinner) {
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p50": 3000}}})");
    std::vector<StoredRun> runs = {syntheticRun(1, Behaviour{.ttftMs = 500}, Behaviour{.ttftMs = 1500}),
                                   syntheticRun(2, Behaviour{.ttftMs = 500}, Behaviour{.ttftMs = 1500}),
                                   syntheticRun(3, Behaviour{.ttftMs = 1500}, Behaviour{.ttftMs = 500})};
    const auto r = select(req, std::nullopt, runs);
    EXPECT_EQ(r.noise.method, "runs");
    EXPECT_LT(r.noise.agreeing, r.noise.replicates);
    EXPECT_EQ(r.verdict, Verdict::NoClearWinner) << r.headline;
    EXPECT_FALSE(r.confidence.has_value());
    bool cv = false;
    for (const auto& w : r.warnings) cv = cv || has(w, "fast TTFT p50 varies across the 3 runs: CV");
    EXPECT_TRUE(cv);
}

// Finding 5: no candidate meets TTFT p95 <= 20 ms; the headline says so with each gap and no confidence.
TEST(SelectionScenarios, NoCandidateMeetsTheSlo) {
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 20}}})");
    const auto r = select(req, std::nullopt, repeats(3, Behaviour{.ttftMs = 68.5}, Behaviour{.ttftMs = 814}));
    EXPECT_EQ(r.verdict, Verdict::NoneFeasible);
    EXPECT_EQ(r.decidedBy, "feasibility");
    // Three identical runs: the interval across them is 0.
    EXPECT_EQ(r.headline, "none feasible: fast TTFT p95 68.5 ± 0 ms vs 20 ms: 3.4× over; "
                          "regular TTFT p95 814 ± 0 ms vs 20 ms: 41× over");
    EXPECT_FALSE(r.confidence.has_value());
    EXPECT_TRUE(has(r.basis, "no confidence figure")) << r.basis;
    // What could close it: another precision, batching knobs, a faster device.
    const auto& fast = r.score(Mode::Fast);
    const auto& regular = r.score(Mode::Regular);
    EXPECT_FALSE(fast.feasible);
    bool precision = false, device = false, knobs = false;
    for (const auto& m : fast.remedies) precision = precision || has(m, "another precision (fast runs mixed");
    for (const auto& m : regular.remedies) {
        device = device || has(m, "a faster device or a smaller model");
        knobs = knobs || has(m, "batching knobs");
    }
    EXPECT_TRUE(precision && device && knobs);
    EXPECT_TRUE(rule(r, "latency").fired);
    EXPECT_TRUE(has(rule(r, "latency").detail, "overridden: fast mode is not feasible")) << rule(r, "latency").detail;
    const auto j = toJson(r);
    EXPECT_TRUE(j["confidence"].is_null());
    EXPECT_TRUE(j["recommendation"].is_null());
    EXPECT_EQ(toJson(selectionResultFromJson(j)), j);
}

// One feasible candidate wins by feasibility, with the other's gap as the margin.
TEST(SelectionScenarios, TheOnlyFeasibleCandidateWins) {
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 5000}}})");
    const auto r = select(req, std::nullopt, repeats(3, Behaviour{.ttftMs = 900}, Behaviour{.ttftMs = 6000}));
    EXPECT_EQ(r.verdict, Verdict::Recommended);
    EXPECT_EQ(r.decidedBy, "feasibility");
    EXPECT_EQ(r.headline, "fast mode, decided by the feasibility rule: regular TTFT p95 6,000 ± 0 ms vs 5,000 ms: "
                          "1.2× over");
    EXPECT_FALSE(r.confidence.has_value());
}

// Finding 5's second half: the context rule uses min(profile cap, model context − 1).
TEST(SelectionScenarios, EffectiveContextCapIsTheSmallerOfProfileAndModel) {
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 3000}}})");
    // Model context 256, fast profile 512: the engine truncates at 255, so 300-token prompts
    // are all cut, and regular rejects them all: nobody can serve this workload.
    const auto none = select(req, std::nullopt, {shortContextRun(256, 512, 300)});
    EXPECT_EQ(none.inputs.cap, 255);
    EXPECT_EQ(none.inputs.overCap, 20);
    EXPECT_TRUE(rule(none, "context").fired);
    EXPECT_TRUE(has(rule(none, "context").detail, "min of profile max_context 512 and model context 256 − 1"))
        << rule(none, "context").detail;
    EXPECT_EQ(none.verdict, Verdict::NoneFeasible) << none.headline;
    EXPECT_TRUE(has(none.headline, "fast truncates 20 of 20 inputs (100.0%) longer than its cap of 255 tokens"))
        << none.headline;
    EXPECT_TRUE(has(none.headline, "regular rejects 20 of 20 inputs")) << none.headline;
    // Finding 7: a fast mode that truncated every prompt does not score 1 on features.
    EXPECT_EQ(none.score(Mode::Fast).features, 0.0);

    // Fast profile capped at 128 on the same model: regular (cap 255) takes the 200-token prompts.
    const auto regular = select(req, std::nullopt, {shortContextRun(256, 128, 200)});
    EXPECT_EQ(regular.inputs.cap, 128);
    EXPECT_EQ(regular.verdict, Verdict::Recommended);
    EXPECT_EQ(regular.recommendation, Mode::Regular);
    EXPECT_EQ(regular.decidedBy, "context");
    EXPECT_TRUE(has(regular.headline, "20 of 20 inputs (100.0%) longer than fast's cap of 128 tokens (min of profile "
                                      "max_context 128 and model context 256 − 1) vs tolerance 0.0%"))
        << regular.headline;
    EXPECT_EQ(regular.score(Mode::Regular).contextCap, 255);
    EXPECT_TRUE(regular.score(Mode::Regular).feasible);
}

// Item 3: a rule reports its margin, not "confidence 1.000" by construction.
TEST(SelectionScenarios, RuleDecisionsReportTheirMargin) {
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 2999}}})");
    // Three runs of fast at 2,400, 2,410 and 2,420 ms: the margin carries their spread.
    const std::vector<StoredRun> runs = {syntheticRun(1, Behaviour{.ttftMs = 2400}, Behaviour{.ttftMs = 2600}),
                                         syntheticRun(2, Behaviour{.ttftMs = 2410}, Behaviour{.ttftMs = 2600}),
                                         syntheticRun(3, Behaviour{.ttftMs = 2420}, Behaviour{.ttftMs = 2600})};
    const auto r = select(req, std::nullopt, runs);
    EXPECT_EQ(r.decidedBy, "latency");
    // ± half the Student-t 95% interval of the per-run p95s: 4.303 × 10 / √3 = 24.8 ms.
    EXPECT_EQ(r.headline, "fast mode, decided by the latency rule: TTFT requirement 2,999 ms < 3,000 ms; "
                          "fast TTFT p95 2,420 ± 24.8 ms vs ≤ 2,999 ms");
    EXPECT_FALSE(r.confidence.has_value());
    EXPECT_TRUE(has(r.basis, "no confidence figure: the latency rule decided")) << r.basis;
    EXPECT_TRUE(has(r.basis, "200 of 200 bootstraps over the 3 runs give the same mode")) << r.basis;
}

// Item 3: one run per candidate warns and gives no confidence; three runs give one from the runs.
TEST(SelectionScenarios, OneRunWarnsAndThreeRunsGiveAConfidence) {
    const auto one = select(kFinding1, std::nullopt, repeats(1, kFast, kRegular));
    EXPECT_EQ(one.recommendation, Mode::Fast);
    EXPECT_FALSE(one.confidence.has_value());
    ASSERT_FALSE(one.warnings.empty());
    EXPECT_TRUE(has(one.warnings[0], "rests on one run per candidate")) << one.warnings[0];
    EXPECT_TRUE(has(one.basis, "one run per candidate measures no run-to-run noise")) << one.basis;
    EXPECT_EQ(one.noise.method, "requests");
    EXPECT_TRUE(one.marginWithinNoise);
    EXPECT_TRUE(has(one.dominance, "(one run: run-to-run noise not measured)")) << one.dominance;

    const auto three = select(kFinding1, std::nullopt, repeats(3, kFast, kRegular));
    ASSERT_TRUE(three.confidence.has_value());
    for (const auto& w : three.warnings) EXPECT_FALSE(has(w, "one run")) << w;
    ASSERT_FALSE(three.score(Mode::Fast).spread.empty());
    EXPECT_EQ(three.score(Mode::Fast).spread[0].key, "e2e_ms.p99");
    EXPECT_EQ(three.score(Mode::Fast).spread[0].runs, 3);
    EXPECT_TRUE(has(three.basis, "bootstraps over the 3 runs agree")) << three.basis;
}

TEST(SelectionScenarios, HighVariationAcrossRunsWarns) {
    auto runs = repeats(3, kFast, kRegular);
    runs[2] = syntheticRun(3, Behaviour{.ttftMs = 90, .gapMs = 2, .jitterMs = 2}, kRegular);
    const auto r = select(kFinding1, std::nullopt, runs);
    bool ttft = false;
    for (const auto& w : r.warnings) ttft = ttft || has(w, "fast TTFT p95 varies across the 3 runs: CV");
    EXPECT_TRUE(ttft);
    for (const auto& w : r.warnings) EXPECT_FALSE(has(w, "regular TTFT p95 varies")) << w;
}

// Finding 4: bills 0.04% apart cannot let cost decide against a 12× faster mode.
TEST(SelectionScenarios, ImmaterialCostDifferenceCannotDecide) {
    auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 3000}, "e2e_ms": {"p99": 10000}},
                               "monthly": {"requests": 3000000, "input_tokens_per_request": 100,
                                           "output_tokens_per_request": 50},
                               "weights": {"latency": 0.3, "cost": 0.5, "features": 0.2}})");
    // Fast serves half its prompt tokens from the cache, at a cached price a hair above the uncached one.
    const auto prices = parsePriceSheet(nlohmann::json::parse(
        R"({"currency": "CNY", "per_million": {"input": 0.2, "cached_input": 0.2001, "output": 0.8}})"));
    Behaviour fast = kFast;
    fast.cachedTokens = 50;
    const auto runs = repeats(3, fast, kRegular);
    const auto r = select(req, prices, runs);
    const auto& cost = rule(r, "cost");
    EXPECT_FALSE(cost.fired);
    EXPECT_TRUE(has(cost.detail, "0.01% apart, materiality threshold 5.0%: under the threshold, cost cannot decide"))
        << cost.detail;
    EXPECT_EQ(r.decidedBy, "score");
    EXPECT_EQ(r.recommendation, Mode::Fast);
    EXPECT_EQ(r.score(Mode::Fast).costScore, r.score(Mode::Regular).costScore);
    // Both costed on the same month: the stated inputs, not fast's own (possibly truncated) prompts.
    EXPECT_EQ(r.score(Mode::Fast).cost->inputTokens, r.score(Mode::Regular).cost->inputTokens);

    // With no materiality threshold the old behaviour returns: cost decides for regular.
    req.costMateriality = 0;
    const auto strict = select(req, prices, runs);
    EXPECT_EQ(strict.decidedBy, "cost");
    EXPECT_EQ(strict.recommendation, Mode::Regular);
    EXPECT_TRUE(has(strict.headline, "regular mode, decided by the cost rule: monthly bills fast")) << strict.headline;
}

TEST(SelectionScenarios, MaterialityIsARequirementsField) {
    auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 3000}}, "cost_materiality": 0.1})");
    EXPECT_EQ(req.costMateriality, 0.1);
    EXPECT_EQ(parseRequirements(nlohmann::json::parse(toJson(req).dump())).costMateriality, 0.1);
    EXPECT_EQ(requirements(R"({"slo": {"ttft_ms": {"p95": 3000}}})").costMateriality, 0.05);
    EXPECT_THROW(requirements(R"({"slo": {"ttft_ms": {"p95": 3000}}, "cost_materiality": 2})"), RequirementsError);
}

// Finding 6: the seed's example (100,000 requests a day × 30 days × 100 input tokens, 0.02 vs
// 0.2 per million for cache hits vs misses) appears exactly in the 0% and 100% reference rows,
// from the resources' sheet and requirements.
TEST(SelectionScenarios, SeedCostExampleAtTheReferenceHitRates) {
    const std::filesystem::path dir = std::filesystem::path(MODEBENCH_SOURCE_DIR) / "resources";
    const Requirements req = loadRequirements((dir / "requirements" / "seed-cost.json").string());
    const PriceSheet prices = loadPriceSheet((dir / "prices" / "seed-cache-hits.json").string());
    Behaviour fast = kFast;
    fast.cachedTokens = 50;
    const auto r = select(req, prices, repeats(3, fast, kRegular));
    for (const auto& c : r.scores) {
        ASSERT_TRUE(c.costNoHits && c.costAllHits);
        EXPECT_NEAR(c.costNoHits->total, 60.0, 1e-9);
        EXPECT_NEAR(c.costAllHits->total, 6.0, 1e-9);
        EXPECT_NEAR(c.cost->inputTokens, 300e6, 1e-3);
    }
    EXPECT_TRUE(has(rule(r, "cost").detail, "for reference, at 0% cache hits 60.00 CNY and at 100% 6.00 CNY"))
        << rule(r, "cost").detail;
    // Saved and read back, the rows and the sheet stay; the formula names the currency.
    const auto back = selectionResultFromJson(nlohmann::json::parse(toJson(r).dump()));
    ASSERT_TRUE(back.prices && back.score(Mode::Fast).costAllHits);
    EXPECT_NEAR(back.score(Mode::Fast).costAllHits->total, 6.0, 1e-9);
    const auto lines = costFormulaLines(*back.prices, *back.score(Mode::Fast).costNoHits);
    EXPECT_EQ(lines.front(), "uncached input 300,000,000 tokens × 0.2000 CNY/M = 60.00 CNY");
    EXPECT_EQ(lines.back(), "total 60.00 CNY a month (0.2000 CNY per million tokens)");
}

// Tier semantics are the sheet's: "above" discounts the tokens over the threshold, "whole"
// the whole volume once over it.
TEST(SelectionScenarios, TiersApplyToTheWholeVolumeOrAboveTheThreshold) {
    auto sheet = [](const char* apply) {
        return parsePriceSheet(nlohmann::json::parse(
            std::string(R"({"currency": "CNY", "per_million": {"input": 1.0, "output": 1.0},
                            "tiers": [{"above_tokens": 100000000, "discount": 0.2}], "tiers_apply": ")") +
            apply + "\"}"));
    };
    Volume v;
    v.requests = 1.5e6;
    v.inputTokensPerRequest = 100; // 150 M tokens: 50 M over the threshold
    const auto above = projectMonthlyCost(sheet("above"), v);
    const auto whole = projectMonthlyCost(sheet("whole"), v);
    EXPECT_NEAR(above.tierDiscount, 50e6 * 1e-6 * 0.2, 1e-9); // 10 CNY off
    EXPECT_NEAR(whole.tierDiscount, 150e6 * 1e-6 * 0.2, 1e-9); // 30 CNY off
    EXPECT_NEAR(whole.total, 120.0, 1e-9);
    v.requests = 0.5e6; // under the threshold: no tier applies either way
    EXPECT_EQ(projectMonthlyCost(sheet("whole"), v).tierDiscount, 0.0);
    EXPECT_EQ(parsePriceSheet(nlohmann::json::parse(toJson(sheet("whole")).dump())).tiersApply,
              PriceSheet::TiersApply::Whole);
    EXPECT_THROW(sheet("some"), RequirementsError);
    EXPECT_NE(costFormulaLines(sheet("whole"), whole)[3].find("tier discount (whole"), std::string::npos);
}

// Without a stated monthly volume the month is the run's own requests, and the selection says so.
TEST(SelectionScenarios, AnUnstatedMonthlyVolumeIsNamed) {
    const auto prices = parsePriceSheet(nlohmann::json::parse(R"({"per_million": {"input": 0.2, "output": 0.8}})"));
    const auto r = select(kFinding1, prices, repeats(3, kFast, kRegular));
    bool warned = false;
    for (const auto& w : r.warnings) warned = warned || has(w, "monthly.requests is not stated: the month is costed");
    EXPECT_TRUE(warned);
    EXPECT_TRUE(has(rule(r, "cost").detail, "requests (the runs' own; monthly.requests not stated)"))
        << rule(r, "cost").detail;
}

// Finding 7 (operations): when a rule decides, low capability still lowers fast's score and the
// trace says which rule overrode it.
TEST(SelectionScenarios, LowOperationsUnderARuleSaysWhichRuleOverrodeIt) {
    const auto req =
        requirements(R"({"slo": {"ttft_ms": {"p95": 1000}, "e2e_ms": {"p99": 10000}}, "ops_capability": "low"})");
    const auto r = select(req, std::nullopt, repeats(3, kFast, kRegular));
    EXPECT_EQ(r.decidedBy, "latency");
    EXPECT_EQ(r.recommendation, Mode::Fast);
    EXPECT_EQ(r.score(Mode::Fast).opsPenalty, kLowOpsPenalty);
    const auto& ops = rule(r, "operations");
    EXPECT_TRUE(ops.fired);
    EXPECT_TRUE(has(ops.detail, "overridden: the latency rule decided, so the penalty changes the scores only"))
        << ops.detail;
    EXPECT_EQ(r.monitoring.size(), 3u);
}

namespace {
// Gives each run's candidate in `mode` a stored precision A/B with these figures.
void withQuality(std::vector<StoredRun>& runs, int candidate, double agreement, double meanKl, double pplRatio) {
    for (auto& run : runs)
        run.candidates[static_cast<size_t>(candidate)].summaryJson =
            nlohmann::json{{"ok", 20},
                           {"precision",
                            {{"reference", "f32"}, {"precision", candidate == 0 ? "mixed" : "native"},
                             {"prompts", 8}, {"positions", 128}, {"agreement", agreement}, {"mean_kl", meanKl},
                             {"reference_perplexity", 10.0}, {"candidate_perplexity", 10.0 * pplRatio}}}}
                .dump();
}
} // namespace

// Finding 7 (quality): a floor on the precision A/B excludes a fast candidate whose
// quantised weights drift too far, however fast; the trace names the precisions.
TEST(SelectionScenarios, AQualityFloorExcludesTheCandidateBelowIt) {
    const auto req = requirements(R"({"slo": {"ttft_ms": {"p95": 3000}, "e2e_ms": {"p99": 10000}},
                                      "quality": {"min_agreement": 0.95, "max_mean_kl": 0.01}})");
    auto runs = repeats(3, kFast, kRegular);
    withQuality(runs, 0, 0.90, 0.02, 1.03);
    withQuality(runs, 1, 1.0, 0.0, 1.0);
    const auto r = select(req, std::nullopt, runs);
    EXPECT_EQ(r.recommendation, Mode::Regular);
    EXPECT_EQ(r.decidedBy, "feasibility");
    const auto& fast = r.score(Mode::Fast);
    ASSERT_TRUE(fast.quality);
    EXPECT_FALSE(fast.feasible);
    EXPECT_TRUE(has(r.headline + " " + r.ruleMargin, "fast greedy agreement 0.900 vs ≥ 0.950"))
        << r.headline << " | " << r.ruleMargin;
    const auto& quality = rule(r, "quality");
    EXPECT_TRUE(quality.fired);
    EXPECT_TRUE(has(quality.detail, "fast runs mixed: greedy agreement 0.900, mean KL 0.0200 nats, perplexity ratio "
                                    "1.030 (mixed vs f32, 8 prompts)"))
        << quality.detail;
    EXPECT_TRUE(has(quality.detail, "the candidates differ in precision as well as in serving knobs")) << quality.detail;
    EXPECT_TRUE(has(quality.detail, R"({"base": "fast", "precision": "native"})")) << quality.detail;
    // Saved and read back, the figures stay.
    const auto back = selectionResultFromJson(nlohmann::json::parse(toJson(r).dump()));
    ASSERT_TRUE(back.score(Mode::Fast).quality);
    EXPECT_DOUBLE_EQ(back.score(Mode::Fast).quality->agreement, 0.90);

    // Above the floor fast is feasible again and wins; without a measurement the floor cannot be shown to hold.
    withQuality(runs, 0, 0.99, 0.001, 1.001);
    EXPECT_EQ(select(req, std::nullopt, runs).recommendation, Mode::Fast);
    const auto unmeasured = select(req, std::nullopt, repeats(3, kFast, kRegular));
    EXPECT_EQ(unmeasured.verdict, Verdict::NoneFeasible);
    bool named = false;
    for (const auto& g : unmeasured.score(Mode::Fast).gaps) named = named || has(g, "fast quality not measured");
    EXPECT_TRUE(named);
    // A bad floor names its key.
    EXPECT_THROW(requirements(R"({"slo": {"ttft_ms": {"p95": 3000}}, "quality": {"min_agreement": 2}})"),
                 RequirementsError);
    EXPECT_EQ(parseRequirements(nlohmann::json::parse(toJson(req).dump())).quality.minAgreement, 0.95);
}
