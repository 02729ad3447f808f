// Capacity from a load sweep (issue 19 item 4): sweep runs from hand-made records, the knee, the
// replicas for the month's peak, the thresholds, hardware cost and the deployment's figures.
#include "lab/capacity.h"
#include "lab/deploy_export.h"
#include "lab/report.h"
#include "lab/report_render.h"
#include "lab/run_config.h"
#include "lab/selection.h"
#include "lab/sweep.h"
#include "selection_fixtures.h"
#include "sweep_fixtures.h"

#include <gtest/gtest.h>

using namespace mb::lab;
using mb::test::Behaviour;
using mb::test::syntheticRun;
using mb::test::concurrencySweep;
using mb::test::sweepRun;

namespace {

Requirements requirements(const std::string& json) { return parseRequirements(nlohmann::json::parse(json)); }

const ModeCapacity& of(const std::vector<ModeCapacity>& c, Mode m) {
    for (const auto& x : c)
        if (x.mode == m) return x;
    throw std::runtime_error("no capacity for the mode");
}

constexpr const char* kReq = R"({"slo": {"ttft_ms": {"p95": 300}}, "monthly": {"requests": 100000000}})";

} // namespace

TEST(Capacity, TheKneeIsTheHighestLoadThatStillMeetsTheSlos) {
    const auto caps = capacityOf(requirements(kReq), concurrencySweep());
    ASSERT_EQ(caps.size(), 2u);
    const ModeCapacity& fast = of(caps, Mode::Fast);
    ASSERT_TRUE(fast.knee.has_value());
    EXPECT_EQ(fast.points[*fast.knee].level, 4); // concurrency 8 misses TTFT p95 (400 ms vs 300)
    EXPECT_NEAR(fast.perReplicaPerS, 40 / (39 * 0.0263 + 0.085), 0.5);
    EXPECT_FALSE(fast.points[3].meets);
    EXPECT_NE(fast.points[3].miss.find("ttft_ms.p95"), std::string::npos);
    const ModeCapacity& regular = of(caps, Mode::Regular);
    ASSERT_TRUE(regular.knee.has_value());
    EXPECT_EQ(regular.points[*regular.knee].level, 2); // 600 ms at concurrency 4
}

TEST(Capacity, ReplicasCarryTheMonthsPeakAtThePeakToMeanFactor) {
    const auto caps = capacityOf(requirements(kReq), concurrencySweep());
    const ModeCapacity& fast = of(caps, Mode::Fast);
    ASSERT_TRUE(fast.sized);
    const double mean = 1e8 / kSecondsPerMonth; // 38.58 requests/s
    EXPECT_NEAR(fast.meanPerS, mean, 1e-9);
    EXPECT_NEAR(fast.peakPerS, 3 * mean, 1e-9);
    EXPECT_EQ(fast.replicas, static_cast<int>(std::ceil(3 * mean / fast.perReplicaPerS)));
    EXPECT_EQ(fast.minReplicas, static_cast<int>(std::ceil(mean / fast.perReplicaPerS)));
    EXPECT_NEAR(fast.utilisationPeak, 3 * mean / (fast.replicas * fast.perReplicaPerS), 1e-12);
    EXPECT_LE(fast.utilisationPeak, 1.0);
    // A different factor in the requirements sizes a different peak.
    const auto five = capacityOf(requirements(R"({"slo": {"ttft_ms": {"p95": 300}},
        "monthly": {"requests": 100000000, "peak_to_mean": 5}})"), concurrencySweep());
    EXPECT_NEAR(of(five, Mode::Fast).peakPerS, 5 * mean, 1e-9);
    EXPECT_GE(of(five, Mode::Fast).replicas, fast.replicas);
    const ModeCapacity& regular = of(caps, Mode::Regular);
    EXPECT_GT(regular.replicas, fast.replicas); // the slower mode needs more replicas for the same month
}

TEST(Capacity, ThresholdsComeFromTheKnee) {
    const auto caps = capacityOf(requirements(kReq), concurrencySweep());
    const ModeCapacity& fast = of(caps, Mode::Fast);
    EXPECT_DOUBLE_EQ(fast.scaleOutQueueDepth, 3);  // the knee's waiting
    EXPECT_DOUBLE_EQ(fast.scaleInQueueDepth, 1);   // at concurrency 2, half the knee's load
    EXPECT_NEAR(fast.scaleOutTtftP95Ms, 80, 1e-9);
    ASSERT_TRUE(fast.scaleOutKvShare.has_value());
    EXPECT_NEAR(*fast.scaleOutKvShare, 0.25, 1e-12); // 1 MiB of a 4 MiB pool
    const ModeCapacity& regular = of(caps, Mode::Regular);
    EXPECT_DOUBLE_EQ(regular.scaleOutQueueDepth, 1); // at least one waiting request
    EXPECT_LT(regular.scaleInQueueDepth, regular.scaleOutQueueDepth);
}

TEST(Capacity, AFailureEndsTheSearchEvenWhenAHigherLevelPassesAgain) {
    auto runs = concurrencySweep();
    // Fast at concurrency 2 misses; at 4 it would pass: the knee stays at 1.
    runs[1] = sweepRun(11, SweepKind::Concurrency, 2, {50, 350, 0, 1}, {111, 240, 0, 1});
    const auto caps = capacityOf(requirements(kReq), runs);
    const ModeCapacity& fast = of(caps, Mode::Fast);
    ASSERT_TRUE(fast.knee.has_value());
    EXPECT_EQ(fast.points[*fast.knee].level, 1);
}

TEST(Capacity, RejectionsAboveOnePercentMissTheSlo) {
    auto runs = concurrencySweep();
    runs[2] = sweepRun(12, SweepKind::Concurrency, 4, {26.3, 80, 2, 3}, {83.3, 600, 0, 3}); // 2 of 40 rejected
    const auto caps = capacityOf(requirements(kReq), runs);
    const ModeCapacity& fast = of(caps, Mode::Fast);
    EXPECT_FALSE(fast.points[2].meets);
    EXPECT_NE(fast.points[2].miss.find("rejected or failed"), std::string::npos);
    EXPECT_EQ(fast.points[*fast.knee].level, 2);
}

TEST(Capacity, NoKneeOrNoVolumeIsSaidNotSized) {
    const auto tight = capacityOf(requirements(R"({"slo": {"ttft_ms": {"p95": 10}}, "monthly": {"requests": 1e6}})"),
                                  concurrencySweep());
    const ModeCapacity& fast = of(tight, Mode::Fast);
    EXPECT_FALSE(fast.knee.has_value());
    EXPECT_FALSE(fast.sized);
    EXPECT_NE(fast.notSized.find("no load level of the sweep met the SLOs"), std::string::npos);
    EXPECT_EQ(deployCapacityOf(SelectionResult{.capacity = tight}, Mode::Fast), std::nullopt);

    const auto unstated = capacityOf(requirements(R"({"slo": {"ttft_ms": {"p95": 300}}})"), concurrencySweep());
    const ModeCapacity& f = of(unstated, Mode::Fast);
    EXPECT_TRUE(f.knee.has_value());
    EXPECT_FALSE(f.sized);
    EXPECT_NE(f.notSized.find("monthly.requests is not stated"), std::string::npos);
    EXPECT_NE(capacitySentence(f).find("knee at concurrency 4"), std::string::npos);
}

TEST(Capacity, MixedKindsAreRefused) {
    auto runs = concurrencySweep();
    runs[3] = sweepRun(13, SweepKind::Rates, 30, {25, 80, 0, 3}, {83, 600, 0, 3});
    EXPECT_THROW(capacityOf(requirements(kReq), runs), SelectionError);
}

TEST(Capacity, SelectUsesSweepRunsForCapacityOnlyAndChargesReplicaHours) {
    std::vector<StoredRun> runs{syntheticRun(1, Behaviour{.ttftMs = 60}, Behaviour{.ttftMs = 200}),
                                syntheticRun(2, Behaviour{.ttftMs = 62}, Behaviour{.ttftMs = 210}),
                                syntheticRun(3, Behaviour{.ttftMs = 61}, Behaviour{.ttftMs = 205})};
    for (auto& r : concurrencySweep()) runs.push_back(r);
    PriceSheet prices;
    prices.currency = "USD";
    prices.acceleratorHour = 2.5;
    const SelectionResult r = select(requirements(kReq), prices, runs);
    ASSERT_EQ(r.capacity.size(), 2u);
    EXPECT_EQ(r.runIds.size(), 7u);
    // The decision pools the three comparison runs only: 40 requests each.
    EXPECT_EQ(r.score(Mode::Fast).requests, 120);
    const ModeCapacity& fast = of(r.capacity, Mode::Fast);
    ASSERT_TRUE(r.score(Mode::Fast).cost.has_value());
    EXPECT_EQ(r.score(Mode::Fast).cost->replicas, fast.replicas);
    EXPECT_NEAR(r.score(Mode::Fast).cost->acceleratorCost, fast.replicas * kHoursPerMonth * 2.5, 1e-6);
    bool formula = false;
    for (const auto& line : costFormulaLines(prices, *r.score(Mode::Fast).cost))
        formula = formula || line.find("× 720 h × 2.50 USD/h") != std::string::npos;
    EXPECT_TRUE(formula);
    // Sweep runs replay the workload at other loads: no mismatch warnings for them.
    EXPECT_TRUE(workloadMismatches(runs).empty());
    // The JSON carries the capacity and reads back.
    const SelectionResult back = selectionResultFromJson(toJson(r));
    ASSERT_EQ(back.capacity.size(), 2u);
    EXPECT_EQ(toJson(back).dump(), toJson(r).dump());
    // The deployment takes the sweep's replicas and thresholds.
    const auto d = deployCapacityOf(r, Mode::Fast);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->replicas, fast.minReplicas);
    EXPECT_EQ(d->maxReplicas, fast.replicas);
    EXPECT_EQ(d->scaleOutQueueDepth, fast.scaleOutQueueDepth);
    EXPECT_NE(d->source.find("compare --sweep concurrency, runs 10, 11, 12, 13"), std::string::npos);
}

TEST(Capacity, OnlySweepRunsCannotDecide) {
    EXPECT_THROW(
        {
            try {
                select(requirements(kReq), std::nullopt, concurrencySweep());
            } catch (const SelectionError& e) {
                EXPECT_NE(std::string(e.what()).find("give the comparison run(s)"), std::string::npos);
                throw;
            }
        },
        SelectionError);
}

TEST(Sweep, DefaultRateLevelsSpanTheProbesGeometrically) {
    const auto levels = defaultRateLevels(2, 10, 6); // 1 to 40 requests/s
    ASSERT_EQ(levels.size(), 6u);
    EXPECT_DOUBLE_EQ(levels.front(), 1);
    EXPECT_DOUBLE_EQ(levels.back(), 40);
    for (size_t i = 1; i < levels.size(); ++i) EXPECT_NEAR(levels[i] / levels[i - 1], std::pow(40.0, 0.2), 0.01);
    EXPECT_THROW(defaultRateLevels(0, 10, 6), std::invalid_argument);
    EXPECT_THROW(defaultRateLevels(2, 10, 1), std::invalid_argument);
}

TEST(Sweep, OptionsAreChecked) {
    SweepOptions o;
    EXPECT_EQ(validateSweep(o), "");
    o.levels = {1, 2.5};
    EXPECT_NE(validateSweep(o).find("whole numbers"), std::string::npos);
    o.levels = {4, 2};
    EXPECT_NE(validateSweep(o).find("strictly increasing"), std::string::npos);
    o.kind = SweepKind::Rates;
    o.levels = {0.5, 2.5};
    EXPECT_EQ(validateSweep(o), "");
    o.levels = {-1};
    EXPECT_NE(validateSweep(o).find("positive"), std::string::npos);
}

TEST(Sweep, RetimingKeepsConversationsTogetherAndWarmupsAtZero) {
    std::vector<WorkloadRequest> rs(5);
    rs[0].warmup = true;
    rs[1].conversation = 0;
    rs[2].conversation = 1;
    rs[3].conversation = 0;
    rs[3].turn = 1;
    rs[4].conversation = 1;
    rs[4].turn = 1;
    ArrivalSpec a;
    a.kind = ArrivalSpec::Kind::Poisson;
    a.rate = 10;
    retimeArrivals(rs, a, 7);
    EXPECT_EQ(rs[0].arrivalMs, 0);
    EXPECT_EQ(rs[1].arrivalMs, rs[3].arrivalMs);
    EXPECT_EQ(rs[2].arrivalMs, rs[4].arrivalMs);
    EXPECT_LT(rs[1].arrivalMs, rs[2].arrivalMs);
    auto again = rs;
    retimeArrivals(again, a, 7);
    for (size_t i = 0; i < rs.size(); ++i) EXPECT_EQ(again[i].arrivalMs, rs[i].arrivalMs); // seeded
}

TEST(Sweep, TagsReadBackAndBadTagsAreErrors) {
    StoredRun run;
    run.id = 5;
    run.info.configJson = R"({"sweep": {"kind": "rates", "level": 2.5, "index": 3}})";
    const auto tag = sweepTagOf(run);
    ASSERT_TRUE(tag.has_value());
    EXPECT_EQ(tag->kind, SweepKind::Rates);
    EXPECT_DOUBLE_EQ(tag->level, 2.5);
    EXPECT_EQ(tag->index, 3);
    run.info.configJson = R"({"sweep": {"kind": "bursts", "level": 2}})";
    EXPECT_THROW(sweepTagOf(run), SelectionError);
    run.info.configJson = R"({"sweep": {"kind": "rates", "level": -2}})";
    EXPECT_THROW(sweepTagOf(run), SelectionError);
    run.info.configJson = R"({"interleave": false})";
    EXPECT_FALSE(sweepTagOf(run).has_value());
}

TEST(Capacity, TheReportHasACapacitySectionInEveryFormat) {
    std::vector<StoredRun> runs{syntheticRun(1, Behaviour{.ttftMs = 60}, Behaviour{.ttftMs = 200})};
    for (auto& r : concurrencySweep()) runs.push_back(r);
    const Requirements req = requirements(kReq);
    ReportSelection sel;
    sel.result = select(req, std::nullopt, runs);
    sel.requirements = toJson(req);
    const Report rep = buildReport(runs, sel, "2026-12-02T00:00:00Z");
    const ReportSection* cap = nullptr;
    for (const auto& s : rep.sections)
        if (s.id == "capacity") cap = &s;
    ASSERT_NE(cap, nullptr);
    ASSERT_EQ(cap->tables.size(), 3u); // the sizing, then each mode's points
    EXPECT_EQ(cap->tables[0].title, "Replicas for the month");
    EXPECT_EQ(cap->tables[1].rows.size(), 4u);
    const std::string md = renderMarkdown(rep);
    EXPECT_NE(md.find("knee at concurrency 4"), std::string::npos);
    EXPECT_NE(md.find("yes (the knee)"), std::string::npos);
    EXPECT_NE(renderHtml(rep).find("Replicas for the month"), std::string::npos);
    EXPECT_NE(renderCsv(rep).find("Replicas for the month"), std::string::npos);
    EXPECT_NE(renderJson(rep).dump().find("\"capacity\""), std::string::npos);
    // Without a sweep the section says how to measure one.
    ReportSelection plain;
    plain.result = select(req, std::nullopt, {runs.front()});
    for (const auto& s : buildReport({runs.front()}, plain, "2026-12-02T00:00:00Z").sections)
        if (s.id == "capacity") {
            EXPECT_NE(s.paragraphs.front().find("compare --sweep"), std::string::npos);
        }
}

TEST(Sweep, TheTagIsPartOfTheTypedRunConfig) {
    RunConfig c;
    c.sweep = SweepTag{SweepKind::Rates, 0, 0, true};
    const RunConfig back = runConfigFromJson(toJson(c));
    ASSERT_TRUE(back.sweep.has_value());
    EXPECT_TRUE(back.sweep->probe);
    EXPECT_EQ(back.sweep->kind, SweepKind::Rates);
    EXPECT_FALSE(back.extra.contains("sweep"));
    // A malformed tag is kept as written (so sweepTagOf can say what is wrong), not dropped.
    const RunConfig bad = runConfigFromText(R"({"sweep": {"kind": "bursts"}})");
    EXPECT_FALSE(bad.sweep.has_value());
    EXPECT_TRUE(bad.extra.contains("sweep"));
}
