// `compare --sweep`: the comparison at rising load levels, each stored as its own run (lab/sweep.h).
#pragma once

#include "lab/comparison.h"
#include "lab/sweep.h"

#include <string>
#include <vector>

namespace mb::cli {

// Runs the sweep, prints one row per level and candidate (achieved requests/s, TTFT p95, e2e
// p99, rejected) and, with a store, the `select` command that takes the sweep's runs.
// Returns the results of the last level.
std::vector<lab::CandidateResult> runCompareSweep(const std::vector<lab::Candidate>& candidates,
                                                  const std::vector<lab::WorkloadRequest>& requests,
                                                  const lab::ComparisonOptions& options,
                                                  const lab::SweepOptions& sweep, uint64_t seed,
                                                  const std::string& dbPath);

} // namespace mb::cli
