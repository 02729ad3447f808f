// `compare`'s console output: the side-by-side table of two candidates and why requests failed.
#pragma once

#include "lab/comparison.h"

#include <ostream>
#include <vector>

namespace mb::cli {

// Metric rows of the first two results side by side with their ratio B/A ("-" without a sample).
void printTable(const std::vector<lab::CandidateResult>& results, std::ostream& out);
// Why requests failed, per candidate, most common reason first (stderr): the table only
// counts them. True when some candidate had requests and not one of them succeeded.
bool reportFailures(const std::vector<lab::CandidateResult>& results);

} // namespace mb::cli
