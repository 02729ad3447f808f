// The report's Migration section: the monitoring plan, the flowchart state, warm-up, monitoring
// passes, checklist.
#include "lab/report.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

namespace mb::lab {

namespace {

std::string num(double v, int decimals) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(decimals) << v;
    return s.str();
}

ReportTable flowchartTable(const MigrationState& m) {
    ReportTable flow{"Flowchart", {"node", "step", "state", "visits"}, {}};
    for (int i = 0; i <= static_cast<int>(MigrationNode::I); ++i) {
        const auto n = static_cast<MigrationNode>(i);
        const auto visits = std::count(m.path.begin(), m.path.end(), n);
        flow.rows.push_back({nodeName(n), nodeTitle(n),
                             n == m.node  ? "current"
                             : visits > 0 ? "passed"
                                          : "pending",
                             std::to_string(visits)});
    }
    return flow;
}

ReportTable warmupTable(const WarmupResult& w) {
    return {
        "Warm-up (node D)",
        {"wall (ms)", "engine warm-up (ms)", "primed prompts", "cached KV (MiB)",
         "model update during warm-up"},
        {{num(w.wallMs, 1), num(w.engineWarmupMs, 1), std::to_string(w.primedPrompts),
          num(static_cast<double>(w.cachedBytes) / 1048576.0, 2),
          !w.reloadAttempted ? "not attempted"
          : w.reloadRefused  ? "refused" + (w.reloadMessage.empty() ? "" : ": " + w.reloadMessage)
                             : "accepted"}}};
}

// One row per F pass: what it measured, and every bound against it.
ReportTable monitoringTable(const MigrationState& m) {
    ReportTable t{"Monitoring runs (node F)",
                  {"pass", "run id", "requests", "requests/s", "hit rate", "hit-rate floor",
                   "TTFT p95 (ms)", "queue p95 (ms)", "bounds", "p99 (shown)"},
                  {}};
    for (size_t i = 0; i < m.monitoring.size(); ++i) {
        const MonitorResult& r = m.monitoring[i];
        auto checks = [](const std::vector<SloCheck>& ks) {
            std::string s;
            for (const auto& k : ks)
                s += (s.empty() ? "" : "; ") + k.key + " " +
                     (k.measured ? num(k.measuredMs, 1) + " ms" : "not measured") + " vs " +
                     num(k.limitMs, 0) + " ms" + (k.met ? " (met)" : " (missed)");
            return s;
        };
        t.rows.push_back({std::to_string(i + 1),
                          r.runId > 0 ? std::to_string(r.runId) : "not stored",
                          std::to_string(r.requests), num(r.requestsPerS, 2), num(r.hitRate, 3),
                          num(m.trigger.hitRateFloor, 3), num(r.ttftP95Ms, 1), num(r.queueP95Ms, 1),
                          checks(r.slo), checks(r.p99)});
    }
    return t;
}

} // namespace

ReportSection migrationSection(const std::optional<ReportSelection>& sel) {
    ReportSection mig{"migration", "Migration checklist and flowchart", {}, {}, {}};
    if (sel && !sel->result.monitoring.empty()) {
        std::string plan;
        for (const auto& x : sel->result.monitoring) plan += (plan.empty() ? "" : "; ") + x;
        mig.paragraphs.push_back("Monitoring plan for fast mode: " + plan + ".");
    }
    if (!sel || !sel->migration) {
        mig.paragraphs.push_back(
            "The migration walk-through has not been started for this selection.");
        return mig;
    }
    const MigrationState& m = *sel->migration;
    mig.paragraphs.push_back(std::string("Current node: ") + nodeName(m.node) + " (" +
                             nodeTitle(m.node) + "). " + m.lastNote +
                             (m.rolledBack ? " Rolled back: " + m.rollbackReason + "." : ""));
    if (m.monitoring.empty())
        mig.paragraphs.push_back(
            "No monitoring run yet: node F replays the selection's workload on fast mode.");
    mig.tables.push_back(flowchartTable(m));
    if (m.warmup) mig.tables.push_back(warmupTable(*m.warmup));
    if (!m.monitoring.empty()) mig.tables.push_back(monitoringTable(m));
    const Checklist& c = m.checklist;
    std::string metrics;
    for (const auto& x : c.monitoringMetrics) metrics += (metrics.empty() ? "" : "; ") + x;
    mig.tables.push_back(
        {"Checklist",
         {"item", "answer"},
         {{"client streams", c.clientStreams ? (*c.clientStreams ? "yes" : "no") : "not answered"},
          {"warm-up plan", c.warmupPlan},
          {"monitoring metrics", metrics},
          {"rollback plan", c.rollbackPlan}}});
    if (!m.proposals.empty()) {
        ReportTable p{
            "Batching adjustments", {"max_batch", "max_batch_tokens", "max_wait_ms", "reason"}, {}};
        for (const auto& x : m.proposals)
            p.rows.push_back(
                {std::to_string(x.from.maxBatch) + " -> " + std::to_string(x.to.maxBatch),
                 std::to_string(x.from.maxBatchTokens) + " -> " +
                     std::to_string(x.to.maxBatchTokens),
                 num(x.from.maxWaitMs, 1) + " -> " + num(x.to.maxWaitMs, 1), x.reason});
        mig.tables.push_back(std::move(p));
    }
    return mig;
}

} // namespace mb::lab
