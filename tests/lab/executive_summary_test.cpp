// The executive summary and the score formulas: each kind of decision quotes its own numbers and
// says, from the measurements, what would change it.
#include "lab/executive_summary.h"
#include "lab/score_formulas.h"
#include "selection_fixtures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

using namespace mb::lab;
using mb::test::Behaviour;
using mb::test::syntheticRun;

namespace {

Requirements requirements(const std::string& json) {
    return parseRequirements(nlohmann::json::parse(json));
}

bool has(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

std::string joined(const ExecutiveSummary& s) {
    std::string all = s.verdictLine + "\n" + s.confidenceLine + "\n";
    for (const auto& n : s.numbers) all += n.text() + "\n";
    for (const auto& c : s.wouldChange) all += c + "\n";
    return all;
}

bool anyChange(const ExecutiveSummary& s, const std::string& part) {
    for (const auto& c : s.wouldChange)
        if (has(c, part)) return true;
    return false;
}

const Behaviour kFast{.ttftMs = 60, .gapMs = 2, .outputTokens = 4, .jitterMs = 2};
const Behaviour kRegular{.ttftMs = 800, .gapMs = 20, .outputTokens = 4, .jitterMs = 4};

std::vector<StoredRun> repeats(int n, const Behaviour& fast, const Behaviour& regular) {
    std::vector<StoredRun> runs;
    for (int i = 1; i <= n; ++i) runs.push_back(syntheticRun(i, fast, regular, 20));
    return runs;
}

PriceSheet prices(const char* baseFee = "5") {
    return parsePriceSheet(nlohmann::json::parse(
        std::string(
            R"({"currency": "CNY", "per_million": {"input": 0.2, "cached_input": 0.02, "output": 0.8}, "base_fee": )") +
        baseFee + "}"));
}

} // namespace

// Rule 2 decided: the requirement against the 3 s threshold, fast's TTFT against its bound, and
// the requirement that would leave the rule unfired, computed from regular's measurement.
TEST(ExecutiveSummary, ALatencyRuleDecisionQuotesTheThresholdAndTheRequirementThatWouldChangeIt) {
    const auto r = select(
        requirements(R"({"slo": {"ttft_ms": {"p95": 2000}}, "monthly": {"requests": 1000000}})"),
        prices(), {syntheticRun(1, Behaviour{.ttftMs = 300, .cachedTokens = 60}, kRegular)});
    ASSERT_EQ(r.decidedBy, "latency");
    const auto s = executiveSummary(r);
    EXPECT_EQ(s.verdictLine, "Recommendation: deploy fast mode, decided by the latency rule.");
    EXPECT_EQ(s.recommendation, Mode::Fast);
    EXPECT_FALSE(s.confidence.has_value());
    EXPECT_EQ(s.confidenceLine.rfind("No confidence figure: the latency rule decided", 0), 0u)
        << s.confidenceLine;
    ASSERT_EQ(s.numbers.size(), kMaxDecidingNumbers) << joined(s);
    EXPECT_EQ(
        s.numbers[0].text(),
        "TTFT requirement 2,000 ms vs < 3,000 ms, below which the latency rule requires fast mode");
    EXPECT_EQ(s.numbers[1].label, "fast TTFT p95");
    EXPECT_EQ(s.numbers[1].value, "300 ms");
    EXPECT_EQ(s.numbers[1].against, "≤ 2,000 ms (6.7× under)");
    // The month's bill with the price sheet's currency.
    EXPECT_EQ(s.numbers[2].label, "fast monthly bill");
    EXPECT_TRUE(has(s.numbers[2].value, " CNY")) << s.numbers[2].value;
    EXPECT_TRUE(has(s.numbers[2].against, "regular ") && has(s.numbers[2].against, "CNY ("))
        << s.numbers[2].against;
    // Regular measured 800-816 ms: a requirement of 3 s already leaves the rule unfired.
    EXPECT_TRUE(anyChange(
        s, "A TTFT requirement of 3,000 ms or more (the latency rule fires under 3,000 ms; regular "
           "measured TTFT p95"))
        << joined(s);
    EXPECT_TRUE(anyChange(s, "Fast's TTFT p95 rising above 2,000 ms")) << joined(s);
    const auto j = toJson(s);
    EXPECT_EQ(j["verdict"], "recommended");
    EXPECT_EQ(j["recommendation"], "fast");
    EXPECT_TRUE(j["confidence"].is_null());
    EXPECT_EQ(j["numbers"].size(), 3u);
    EXPECT_EQ(j["numbers"][0]["value"], "2,000 ms");
}

// A regular mode slower than 3 s: the requirement that unfires the rule is regular's own figure.
TEST(ExecutiveSummary, TheRequirementThatWouldChangeALatencyDecisionCoversRegularsMeasurement) {
    const auto r = select(requirements(R"({"slo": {"ttft_ms": {"p95": 2000}}})"), std::nullopt,
                          {syntheticRun(1, Behaviour{.ttftMs = 300}, Behaviour{.ttftMs = 4200})});
    ASSERT_EQ(r.decidedBy, "feasibility") << "regular misses 2 s itself";
    const auto s = executiveSummary(r);
    EXPECT_EQ(
        s.verdictLine,
        "Recommendation: deploy fast mode, decided by feasibility: only fast mode meets every "
        "requirement.");
    ASSERT_FALSE(s.numbers.empty());
    EXPECT_EQ(s.numbers[0].text(), "regular TTFT p95 4,200 ms vs ≤ 2,000 ms (2.1× over)");
    bool remedy = false;
    for (const auto& m : r.score(Mode::Regular).remedies) remedy = remedy || anyChange(s, m);
    EXPECT_TRUE(remedy) << joined(s);
}

// The context rule: the share over the cap and the longest input against fast's cap.
TEST(ExecutiveSummary, AContextDecisionQuotesTheInputsOverTheCap) {
    StoredRun run = syntheticRun(1, kFast, kRegular, 20);
    for (auto& c : run.candidates) c.requests[3].promptTokens = 40000;
    const auto r =
        select(requirements(R"({"slo": {"ttft_ms": {"p95": 5000}}})"), std::nullopt, {run});
    ASSERT_EQ(r.decidedBy, "context");
    const auto s = executiveSummary(r);
    EXPECT_EQ(s.verdictLine, "Recommendation: run regular mode, decided by the context rule.");
    ASSERT_GE(s.numbers.size(), 2u);
    EXPECT_EQ(
        s.numbers[0].text(),
        "inputs longer than fast's context cap 1 of 20 (5.0%) vs fast's cap of 32,768 tokens");
    EXPECT_EQ(s.numbers[1].text(), "longest input 40,000 tokens vs fast's cap of 32,768 tokens");
    EXPECT_TRUE(anyChange(s, "An over-cap tolerance of at least 5.0%")) << joined(s);
    EXPECT_TRUE(anyChange(s, "(40,000 tokens)")) << joined(s);
}

// A score decision over three runs: the margin against the tie margin, the confidence, and how far
// the leading component would have to fall for a tie.
TEST(ExecutiveSummary, AScoreDecisionCarriesItsConfidenceAndTheMarginToATie) {
    const auto r =
        select(requirements(R"({"slo": {"ttft_ms": {"p95": 3000}, "e2e_ms": {"p99": 10000}}})"),
               std::nullopt, repeats(3, kFast, kRegular));
    ASSERT_EQ(r.decidedBy, "score");
    ASSERT_TRUE(r.confidence.has_value());
    const auto s = executiveSummary(r);
    EXPECT_EQ(s.verdictLine, "Recommendation: deploy fast mode, decided by the weighted score.");
    EXPECT_EQ(s.confidence, r.confidence);
    EXPECT_EQ(s.confidenceLine.rfind("Confidence 1.000: ", 0), 0u) << s.confidenceLine;
    ASSERT_GE(s.numbers.size(), 2u);
    EXPECT_EQ(s.numbers[0].label, "weighted score margin");
    char margin[16];
    std::snprintf(margin, sizeof margin, "%.3f", r.noise.scoreMargin);
    EXPECT_EQ(s.numbers[0].value, margin);
    EXPECT_TRUE(has(s.numbers[0].against, "the 0.02 tie margin (95% interval"))
        << s.numbers[0].against;
    EXPECT_EQ(s.numbers[1].label, "fast latency score");
    // The drop that would tie: (margin − 0.02) / latency weight, from fast's latency score.
    const double drop = (r.noise.scoreMargin - kTieMargin) / r.weights.latency;
    char expected[96];
    std::snprintf(expected, sizeof expected,
                  "Fast's latency score falling by more than %.3f (from %.3f", drop,
                  r.score(Mode::Fast).latency);
    EXPECT_TRUE(anyChange(s, expected)) << joined(s);
    EXPECT_TRUE(anyChange(s, "A confidence under 0.95 (now 1.000)")) << joined(s);
    // Fast also dominates: a tied score would not be a tie (selection.cpp's conclude).
    ASSERT_EQ(r.dominant, Mode::Fast);
    EXPECT_TRUE(anyChange(s, "tie margin: dominance would decide (for fast).")) << joined(s);
}

// Saturated scores tie and dominance decides: the measured ratio and the tie of the scores.
TEST(ExecutiveSummary, ADominanceDecisionQuotesTheRatioAndTheTiedScores) {
    const auto r =
        select(requirements(R"({"slo": {"ttft_ms": {"p95": 100000}, "e2e_ms": {"p99": 1000000}}})"),
               std::nullopt, repeats(3, kFast, kRegular));
    ASSERT_EQ(r.decidedBy, "dominance");
    const auto s = executiveSummary(r);
    EXPECT_EQ(
        s.verdictLine.rfind(
            "Recommendation: deploy fast mode, decided by dominance (fast is better on all 8", 0),
        0u)
        << s.verdictLine;
    ASSERT_GE(s.numbers.size(), 2u);
    EXPECT_EQ(s.numbers[0].label.rfind("fast ", 0), 0u)
        << s.numbers[0].label; // the first bound both measured
    EXPECT_TRUE(has(s.numbers[0].against, "regular ") && has(s.numbers[0].against, "× fast's)"))
        << s.numbers[0].against;
    EXPECT_EQ(s.numbers[1].label, "weighted score margin");
    EXPECT_TRUE(anyChange(s, "Regular coming within 1.05× of fast")) << joined(s);
}

// A tie: the measurements that would separate them are the result's own tie reasons.
TEST(ExecutiveSummary, NoClearWinnerSaysWhatWouldSeparateThem) {
    const Behaviour same{.ttftMs = 500, .jitterMs = 50};
    const auto r = select(requirements(R"({"slo": {"ttft_ms": {"p95": 3000}}})"), std::nullopt,
                          repeats(3, same, same));
    ASSERT_EQ(r.verdict, Verdict::NoClearWinner);
    const auto s = executiveSummary(r);
    EXPECT_FALSE(s.recommendation.has_value());
    EXPECT_EQ(s.verdictLine.rfind("No clear winner: neither mode is recommended", 0), 0u)
        << s.verdictLine;
    EXPECT_TRUE(has(s.verdictLine, "neither candidate is better on every measured metric"))
        << s.verdictLine;
    ASSERT_FALSE(s.numbers.empty());
    EXPECT_EQ(s.numbers[0].label, "weighted score margin");
    EXPECT_TRUE(anyChange(s, "A price sheet, so that the month's cost enters the score"))
        << joined(s);
    EXPECT_TRUE(anyChange(s, "A run at the production load")) << joined(s);
    EXPECT_EQ(toJson(s)["recommendation"], nullptr);
}

// None feasible: each candidate's worst gap, the bounds that would admit it, and the remedies.
TEST(ExecutiveSummary, NoneFeasibleQuotesEachGapAndItsRemedies) {
    const auto r = select(requirements(R"({"slo": {"ttft_ms": {"p95": 20}}})"), std::nullopt,
                          repeats(1, Behaviour{.ttftMs = 68.5}, Behaviour{.ttftMs = 814}));
    ASSERT_EQ(r.verdict, Verdict::NoneFeasible);
    const auto s = executiveSummary(r);
    EXPECT_EQ(
        s.verdictLine,
        "None feasible: neither candidate meets the requirements (fast has 1 gap, regular has 1 "
        "gap); deploy neither until a gap is closed.");
    ASSERT_EQ(s.numbers.size(), 2u);
    EXPECT_EQ(s.numbers[0].text(), "fast TTFT p95 68.5 ms vs ≤ 20 ms (3.4× over)");
    EXPECT_EQ(s.numbers[1].text(), "regular TTFT p95 814 ms vs ≤ 20 ms (41× over)");
    EXPECT_TRUE(anyChange(
        s, "Bounds at fast's measured figures (TTFT p95 ≤ 68.5 ms) would make fast feasible"))
        << joined(s);
    ASSERT_FALSE(r.score(Mode::Fast).remedies.empty());
    EXPECT_TRUE(anyChange(s, "For fast: " + r.score(Mode::Fast).remedies.front())) << joined(s);
}

// The cost rule: both bills with the currency, and the materiality that would take cost out.
TEST(ExecutiveSummary, ACostDecisionQuotesBothBillsAndTheirDistance) {
    const auto r =
        select(requirements(R"({"slo": {"ttft_ms": {"p95": 5000}}, "monthly": {"requests": 3000000},
                                          "weights": {"latency": 0.2, "cost": 0.6, "features": 0.2}})"),
               prices("0"), {syntheticRun(1, Behaviour{.cachedTokens = 90}, Behaviour{}, 20)});
    ASSERT_EQ(r.decidedBy, "cost");
    const auto s = executiveSummary(r);
    EXPECT_EQ(s.verdictLine, "Recommendation: deploy fast mode, decided by the cost rule.");
    ASSERT_FALSE(s.numbers.empty());
    EXPECT_EQ(s.numbers[0].label, "fast monthly bill");
    EXPECT_TRUE(has(s.numbers[0].against, "% apart)")) << s.numbers[0].against;
    EXPECT_TRUE(anyChange(s, "apart: a cost materiality threshold above")) << joined(s);
    EXPECT_TRUE(anyChange(s, "as used 0.60 and 0.20")) << joined(s);
}

// A result with nothing in it (an old stored selection, a GUI fixture) gives a short summary.
TEST(ExecutiveSummary, AnEmptyResultSaysLessAndDoesNotThrow) {
    SelectionResult r;
    r.recommendation = Mode::Fast;
    r.decidedBy = "score";
    const auto s = executiveSummary(r);
    EXPECT_EQ(s.verdictLine, "Recommendation: deploy fast mode, decided by the weighted score.");
    EXPECT_TRUE(s.numbers.empty());
    EXPECT_EQ(s.confidenceLine, "No confidence figure was recorded.");
    r.decidedBy.clear(); // selections saved before decided_by named no rule
    EXPECT_EQ(executiveSummary(r).verdictLine, "Recommendation: deploy fast mode.");
}

// The appendix: the constants of lab/selection.h written in, and the selection's figures through
// them.
TEST(ScoreFormulas, MatchTheCodesConstantsAndFigures) {
    const auto r =
        select(requirements(R"({"slo": {"ttft_ms": {"p95": 3000}, "e2e_ms": {"p99": 10000}}})"),
               prices(), repeats(3, kFast, kRegular));
    const auto lines = scoreFormulas(r);
    ASSERT_EQ(lines.size(), 10u);
    auto line = [&](const std::string& term) -> const FormulaLine& {
        for (const auto& l : lines)
            if (l.term.rfind(term, 0) == 0) return l;
        throw std::runtime_error("no formula " + term);
    };
    EXPECT_TRUE(has(line("latency headroom").formula, "2·ln 100"))
        << line("latency headroom").formula;
    EXPECT_TRUE(has(line("rules").formula, "< 3,000 ms")) << line("rules").formula;
    EXPECT_TRUE(has(line("tie").formula, "< 0.02")) << line("tie").formula;
    EXPECT_TRUE(has(line("tie").formula, "confidence < 0.95"));
    EXPECT_TRUE(has(line("dominance").formula, "≥ 1.05"));
    EXPECT_TRUE(has(line("total").formula, "ops_penalty 0.15"));
    EXPECT_TRUE(has(line("monthly cost").applied, "prices (CNY): input 0.2000 CNY/M"))
        << line("monthly cost").applied;
    // The figures through the formulas are the result's own.
    const auto& f = r.score(Mode::Fast);
    char headroom[32];
    std::snprintf(headroom, sizeof headroom, ": %.3f", f.slo[0].headroom);
    EXPECT_TRUE(has(line("latency headroom").applied, headroom))
        << line("latency headroom").applied;
    EXPECT_NEAR(f.slo[0].headroom,
                std::clamp(0.5 - std::log(f.slo[0].measuredMs / f.slo[0].limitMs) /
                                     (2 * std::log(kHeadroomSpan)),
                           0.0, 1.0),
                1e-12);
    char total[48];
    std::snprintf(total, sizeof total, "= %.3f", f.total);
    EXPECT_TRUE(has(line("total").applied, total)) << line("total").applied;
    char weights[64];
    std::snprintf(weights, sizeof weights, "weights as used: latency %.2f, cost %.2f",
                  r.weights.latency, r.weights.cost);
    EXPECT_TRUE(has(line("total").applied, weights)) << line("total").applied;
    EXPECT_TRUE(
        has(line("confidence").applied, "of 200 run bootstraps (seed 42) agree: confidence 1.000"))
        << line("confidence").applied;
}
