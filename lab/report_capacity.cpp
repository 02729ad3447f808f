// The report's Capacity section: each mode's load sweep, its goodput knee and the replicas for the month.
#include "lab/report.h"

#include <cmath>
#include <cstdio>

namespace mb::lab {

namespace {

std::string fixed(double v, int decimals) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string loadText(const ModeCapacity& c, const SweepPoint& p) {
    if (p.probe) return "c=1 probe";
    return c.kind == SweepKind::Concurrency ? "concurrency " + fixed(p.level, 0) : fixed(p.level, 3) + " req/s offered";
}

ReportTable pointsTable(const ModeCapacity& c) {
    ReportTable t{std::string(modeName(c.mode)) + " sweep (" + sweepKindName(c.kind) + ")",
                  {"run", "load", "achieved req/s", "goodput req/s", "TTFT p95 (ms)", "waiting p90", "meets the SLOs"},
                  {}};
    for (size_t i = 0; i < c.points.size(); ++i) {
        const SweepPoint& p = c.points[i];
        const std::string verdict = p.meets ? (c.knee && *c.knee == i ? "yes (the knee)" : "yes") : "no: " + p.miss;
        t.rows.push_back({std::to_string(p.runId), loadText(c, p), fixed(p.achievedPerS, 2), fixed(p.goodputPerS, 2),
                          fixed(p.ttftP95Ms, 1), fixed(p.queueDepthP90, 1), verdict});
    }
    return t;
}

} // namespace

ReportSection capacitySection(const std::optional<ReportSelection>& sel) {
    ReportSection s{"capacity", "Capacity", {}, {}, {}};
    if (!sel || sel->result.capacity.empty()) {
        s.paragraphs.push_back(
            "No load sweep among the runs: the replicas and autoscaling thresholds were not measured. Run "
            "modebench-cli compare --sweep concurrency (or rates) with the same candidates and pass its runs to "
            "select with the comparison runs.");
        return s;
    }
    s.paragraphs.push_back(
        "Each candidate ran the workload at rising load; a level meets the SLOs when every bound holds at its own "
        "statistic and at most 1% of the requests were rejected or failed. The knee is the highest load at which "
        "it and every lower level meet; one replica carries what the knee achieved. The month's mean rate is "
        "monthly.requests over 30 days, its peak the mean times monthly.peak_to_mean.");
    ReportTable sizing{"Replicas for the month",
                       {"mode", "per replica (req/s)", "mean (req/s)", "peak (req/s)", "replicas (min to max)",
                        "utilisation at the peak", "scale out", "scale in"},
                       {}};
    for (const ModeCapacity& c : sel->result.capacity) {
        s.paragraphs.push_back(capacitySentence(c) + ".");
        for (const auto& line : capacityFormulaLines(c)) s.paragraphs.push_back(line + ".");
        if (!c.knee) continue;
        std::string out = "waiting > " + fixed(c.scaleOutQueueDepth, 1) + ", TTFT p95 > " + fixed(c.scaleOutTtftP95Ms, 1) +
                          " ms" + (c.scaleOutKvShare ? ", KV use > " + fixed(100 * *c.scaleOutKvShare, 1) + "%" : "");
        sizing.rows.push_back({modeName(c.mode), fixed(c.perReplicaPerS, 2), c.sized ? fixed(c.meanPerS, 3) : "-",
                               c.sized ? fixed(c.peakPerS, 3) : "-",
                               c.sized ? std::to_string(c.minReplicas) + " to " + std::to_string(c.replicas) : "not sized",
                               c.sized ? fixed(100 * c.utilisationPeak, 1) + "%" : "-", out,
                               "waiting < " + fixed(c.scaleInQueueDepth, 1)});
    }
    if (!sizing.rows.empty()) s.tables.push_back(std::move(sizing));
    for (const ModeCapacity& c : sel->result.capacity) s.tables.push_back(pointsTable(c));
    return s;
}

} // namespace mb::lab
