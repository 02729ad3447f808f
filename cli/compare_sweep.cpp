// `compare --sweep`: runs lab::runSweep and prints each level's figures and how to select from them.
#include "cli/compare_sweep.h"

#include "cli/command_util.h"

#include <iomanip>
#include <iostream>
#include <sstream>

namespace mb::cli {

namespace {

std::string fixed(double v, int decimals) {
    std::ostringstream ss;
    ss << std::fixed << std::setprecision(decimals) << v;
    return ss.str();
}

std::string levelText(const lab::SweepTag& t) {
    if (t.probe) return "c=1 probe";
    return t.kind == lab::SweepKind::Concurrency ? "c=" + fixed(t.level, 0) : fixed(t.level, 3) + "/s";
}

void printLevels(const std::vector<lab::SweepLevel>& levels, std::ostream& out) {
    out << std::left << std::setw(6) << "run" << std::setw(14) << "level" << std::setw(10) << "candidate" << std::right
        << std::setw(12) << "req/s" << std::setw(14) << "TTFT p95 ms" << std::setw(13) << "e2e p99 ms" << std::setw(10)
        << "rejected" << '\n';
    for (const auto& l : levels)
        for (const auto& r : l.results) {
            const auto& s = r.summary;
            out << std::left << std::setw(6) << (l.runId > 0 ? std::to_string(l.runId) : "-") << std::setw(14)
                << levelText(l.tag) << std::setw(10) << (r.candidate.label + " " + r.candidate.profile.name).substr(0, 9)
                << std::right << std::setw(12) << fixed(s.requestsPerS, 2) << std::setw(14)
                << (s.ttftMs.count > 0 ? fixed(s.ttftMs.p95, 1) : "-") << std::setw(13)
                << (s.e2eMs.count > 0 ? fixed(s.e2eMs.p99, 1) : "-") << std::setw(10) << s.rejected << '\n';
        }
}

} // namespace

std::vector<lab::CandidateResult> runCompareSweep(const std::vector<lab::Candidate>& candidates,
                                                  const std::vector<lab::WorkloadRequest>& requests,
                                                  const lab::ComparisonOptions& options,
                                                  const lab::SweepOptions& sweep, uint64_t seed,
                                                  const std::string& dbPath) {
    lab::SweepOptions o = sweep;
    o.onLevel = [](const std::string& line) { std::cerr << "compare: " << line << '\n'; };
    std::vector<lab::SweepLevel> levels;
    try {
        levels = lab::runSweep(candidates, requests, options, o, seed);
    } catch (const std::invalid_argument& e) {
        throw UsageError(e.what());
    }
    printLevels(levels, std::cout);
    if (!dbPath.empty() && !levels.empty() && levels.front().runId > 0) {
        std::string runs;
        for (const auto& l : levels) runs += " --run " + std::to_string(l.runId);
        std::cerr << "compare: stored the sweep's " << levels.size() << " levels as runs in " << dbPath
                  << "\ncompare: size the capacity: modebench-cli select --db " << dbPath
                  << " --run COMPARISON_RUN..." << runs << " --requirements FILE\n";
    }
    if (levels.empty()) return {};
    return levels.back().results;
}

} // namespace mb::cli
