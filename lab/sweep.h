// A load sweep (PRODUCT.md §6, capacity): the same comparison at rising load levels, each level
// stored as its own run tagged with its place in the sweep, for the selection's capacity.
//
// Concurrency sweeps run closed loops at each level (default 1, 2, 4, ... 64). Rate sweeps run
// open loops (Poisson, or the workload's gamma burstiness) at offered rates; without explicit
// levels a closed-loop concurrency-1 probe comes first and the rates span 0.5× the slower
// candidate's probe rate to 4× the faster's, geometrically. The sweep stops early once every
// candidate has been saturated (served at most 5% more than at any lower level) at two
// consecutive levels. No Qt.
#pragma once

#include "lab/capacity.h"
#include "lab/comparison.h"

#include <atomic>
#include <functional>
#include <string>
#include <vector>

namespace mb::lab {

inline constexpr double kSaturationGain = 1.05;
inline constexpr int kSaturatedLevelsToStop = 2;

struct SweepOptions {
    SweepKind kind = SweepKind::Concurrency;
    std::vector<double> levels; // explicit levels, ascending; empty: the defaults above
    int ratePoints = 6;         // default rate levels (>= 2)
    bool stopWhenSaturated = true;
    // One line per level as it starts ("sweep: concurrency 4 (level 3 of 7)").
    std::function<void(const std::string&)> onLevel;
    const std::atomic<bool>* cancel = nullptr; // polled between levels (and by each run)
};

struct SweepLevel {
    SweepTag tag;
    int64_t runId = 0; // the sink's run id (0 without a sink)
    std::vector<CandidateResult> results;
};

// Empty when the options make sense, else one line naming the option.
std::string validateSweep(const SweepOptions& options);

std::vector<double> defaultConcurrencyLevels(); // 1, 2, 4, 8, 16, 32, 64
// `points` rates from 0.5 × slowest to 4 × fastest (requests/s), geometric, rounded to 3
// significant digits; requires 0 < slowest <= fastest and points >= 2.
std::vector<double> defaultRateLevels(double slowestPerS, double fastestPerS, int points);

// The measured requests' arrival times redrawn for `arrival` (warm-ups keep 0): one draw per
// conversation of a multi-turn workload (its turns share it), else one per request, in order.
void retimeArrivals(std::vector<WorkloadRequest>& requests, const ArrivalSpec& arrival, uint64_t seed);

// Runs the comparison at each level. `base` supplies everything but the arrival (its
// runInfo's name, tags, workload and configuration are extended with the level: the
// configuration's "sweep" and "arrival", the workload's "arrival"). A cancelled run ends the
// sweep after it. Throws what runComparison throws, and std::invalid_argument for bad options.
std::vector<SweepLevel> runSweep(const std::vector<Candidate>& candidates, const std::vector<WorkloadRequest>& requests,
                                 const ComparisonOptions& base, const SweepOptions& options, uint64_t seed);

} // namespace mb::lab
