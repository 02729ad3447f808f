// Capacity from a load sweep: each point measured, the goodput knee, replicas and thresholds.
#include "lab/capacity.h"

#include "lab/metrics.h"
#include "lab/run_config.h"
#include "lab/selection_internal.h"

#include <algorithm>
#include <cmath>

namespace mb::lab {

using namespace selection_detail;

std::optional<SweepTag> sweepTagOf(const StoredRun& run) {
    const RunConfig config = runConfigFromText(run.info.configJson);
    if (config.sweep) return config.sweep;
    if (!config.extra.contains("sweep")) return std::nullopt;
    std::string why; // a "sweep" that did not read as a tag stays in extra
    sweepTagFromJson(config.extra["sweep"], why);
    throw SelectionError("run " + std::to_string(run.id) + ": " + why);
}

namespace {

const StoredCandidate* candidateOf(const StoredRun& run, Mode mode) {
    for (const auto& c : run.candidates)
        if (modeOfProfile(c.info.profileJson) == mode) return &c;
    return nullptr;
}

const std::vector<std::pair<double, double>>* seriesOf(const StoredCandidate& c, const std::string& name) {
    for (const auto& [n, points] : c.series)
        if (n == name) return &points;
    return nullptr;
}

// The request's own value of a bound's metric (-1 when it defines none): ITL is its largest gap.
double ownValue(const Req& q, SloMetric m) {
    switch (m) {
    case SloMetric::TtftMs: return q.ttft;
    case SloMetric::E2eMs: return q.e2e;
    case SloMetric::TpotMs: return q.tpot;
    case SloMetric::ItlMs: return q.gaps.empty() ? -1.0 : *std::max_element(q.gaps.begin(), q.gaps.end());
    }
    return -1;
}

SweepPoint pointOf(const StoredRun& run, const SweepTag& tag, const Side& side, const Requirements& req) {
    SweepPoint p;
    p.runId = run.id;
    p.probe = tag.probe;
    const CandidateScore m = measure(side, allIndices(side.reqs.size()), req, std::nullopt, Workload{});
    p.achievedPerS = m.requestsPerS;
    p.level = tag.probe ? p.achievedPerS : tag.level;
    p.load = p.level; // a probe offers exactly what it serves
    p.slo = m.slo;
    p.failedShare = m.requests > 0 ? static_cast<double>(m.rejected + m.failed) / static_cast<double>(m.requests) : 0;
    double good = 0;
    for (const Req& q : side.reqs) {
        bool within = q.ok;
        for (const SloEntry& e : req.slo) {
            const double v = ownValue(q, e.metric);
            within = within && (v < 0 || v <= e.limitMs);
        }
        good += within ? 1 : 0;
    }
    p.goodputPerS = side.durationS > 0 ? good / side.durationS : 0;
    for (const SloCheck& k : m.slo)
        if (!k.met) p.miss += (p.miss.empty() ? "" : "; ") + k.key + " " + (k.measured ? ms(k.measuredMs) : "unmeasured") +
                              " vs " + ms(k.limitMs);
    if (p.failedShare > kSweepMaxFailedShare)
        p.miss += (p.miss.empty() ? "" : "; ") + pct(p.failedShare) + " of the requests rejected or failed";
    p.meets = p.miss.empty();
    std::vector<double> ttft;
    for (const Req& q : side.reqs)
        if (q.ok && q.ttft >= 0) ttft.push_back(q.ttft);
    p.ttftP95Ms = describe(std::move(ttft)).p95;
    if (const StoredCandidate* c = candidateOf(run, side.mode)) {
        std::vector<double> waiting;
        if (const auto* s = seriesOf(*c, "queue_depth"))
            for (const auto& [second, v] : *s) waiting.push_back(v);
        p.queueDepthP90 = describe(std::move(waiting)).p90;
        const nlohmann::json summary = parsedOrEmpty(c->summaryJson);
        if (summary.is_object() && summary.contains("kv_bytes_capacity") && summary["kv_bytes_capacity"].is_number() &&
            summary["kv_bytes_capacity"].get<double>() > 0)
            p.kvShare = static_cast<double>(side.kvBytesPeak) / summary["kv_bytes_capacity"].get<double>();
    }
    return p;
}

void findKnee(ModeCapacity& c) {
    for (size_t i = 0; i < c.points.size() && c.points[i].meets; ++i) c.knee = i;
    if (!c.knee) return;
    const SweepPoint& k = c.points[*c.knee];
    c.perReplicaPerS = k.achievedPerS;
    c.scaleOutQueueDepth = std::max(1.0, k.queueDepthP90);
    c.scaleOutTtftP95Ms = k.ttftP95Ms;
    c.scaleOutKvShare = k.kvShare;
    std::optional<double> in;
    for (const SweepPoint& p : c.points)
        if (p.load <= kScaleInLoadShare * k.load) in = p.queueDepthP90;
    c.scaleInQueueDepth = in && *in < c.scaleOutQueueDepth ? *in : c.scaleOutQueueDepth / 2;
}

void sizeForVolume(ModeCapacity& c, const Requirements& req) {
    c.peakToMean = req.monthly.peakToMean;
    if (!c.knee) {
        c.notSized = "no load level of the sweep met the SLOs" +
                     (c.points.empty() ? std::string() : " (the lowest: " + c.points.front().miss + ")") +
                     ", so no replica count carries the month";
        return;
    }
    if (!req.monthly.requests) {
        c.notSized = "monthly.requests is not stated: one replica carries " + num(c.perReplicaPerS, 2) +
                     " requests/s; state the team's volume to size the replicas";
        return;
    }
    if (!(c.perReplicaPerS > 0)) {
        c.notSized = "the knee served no requests per second";
        return;
    }
    c.sized = true;
    c.meanPerS = *req.monthly.requests / kSecondsPerMonth;
    c.peakPerS = c.meanPerS * c.peakToMean;
    c.replicas = std::max(1, static_cast<int>(std::ceil(c.peakPerS / c.perReplicaPerS - 1e-9)));
    c.minReplicas = std::max(1, static_cast<int>(std::ceil(c.meanPerS / c.perReplicaPerS - 1e-9)));
    c.utilisationPeak = c.peakPerS / (c.replicas * c.perReplicaPerS);
    c.utilisationMean = c.meanPerS / (c.minReplicas * c.perReplicaPerS);
}

} // namespace

std::vector<ModeCapacity> capacityOf(const Requirements& req, const std::vector<StoredRun>& sweepRuns) {
    if (sweepRuns.empty()) return {};
    std::vector<SweepTag> tags;
    for (const StoredRun& run : sweepRuns) {
        const auto tag = sweepTagOf(run);
        if (!tag) throw SelectionError("run " + std::to_string(run.id) + " is not a sweep point");
        if (!tags.empty() && tag->kind != tags.front().kind)
            throw SelectionError("the sweep runs mix rates and concurrency levels (run " + std::to_string(run.id) +
                                 "); give one sweep");
        tags.push_back(*tag);
    }
    const auto sides = sidesOf(sweepRuns);
    std::vector<ModeCapacity> out;
    for (const Mode mode : {Mode::Fast, Mode::Regular}) {
        ModeCapacity c;
        c.mode = mode;
        c.kind = tags.front().kind;
        for (size_t i = 0; i < sweepRuns.size(); ++i) {
            c.points.push_back(pointOf(sweepRuns[i], tags[i], mode == Mode::Fast ? sides[i].first : sides[i].second, req));
            c.runIds.push_back(sweepRuns[i].id);
        }
        std::stable_sort(c.points.begin(), c.points.end(),
                         [](const SweepPoint& a, const SweepPoint& b) { return a.load < b.load; });
        findKnee(c);
        sizeForVolume(c, req);
        out.push_back(std::move(c));
    }
    return out;
}

namespace {
std::string levelText(const ModeCapacity& c, const SweepPoint& p) {
    if (p.probe) return "the concurrency-1 probe (" + num(p.level, 2) + " requests/s)";
    return c.kind == SweepKind::Rates ? num(p.level, 2) + " requests/s offered" : "concurrency " + num(p.level, 0);
}
} // namespace

std::string capacitySentence(const ModeCapacity& c) {
    std::string s = std::string(modeName(c.mode)) + ": ";
    if (!c.knee) return s + c.notSized;
    s += "knee at " + levelText(c, c.points[*c.knee]) + ", " + num(c.perReplicaPerS, 2) + " requests/s per replica";
    if (*c.knee + 1 < c.points.size()) s += " (next level: " + c.points[*c.knee + 1].miss + ")";
    if (!c.sized) return s + "; " + c.notSized;
    return s + "; the month's peak " + num(c.peakPerS, 2) + " requests/s (" + num(c.peakToMean, 1) + "× the mean " +
           num(c.meanPerS, 2) + ") needs " + std::to_string(c.replicas) + (c.replicas == 1 ? " replica" : " replicas") +
           " at " + pct(c.utilisationPeak) + " utilisation, the mean " + std::to_string(c.minReplicas) + " at " +
           pct(c.utilisationMean);
}

std::vector<std::string> capacityFormulaLines(const ModeCapacity& c) {
    std::vector<std::string> lines;
    const std::string mode = modeName(c.mode);
    if (!c.knee) return {mode + ": " + c.notSized};
    const SweepPoint& k = c.points[*c.knee];
    lines.push_back(mode + " per replica C = " + num(c.perReplicaPerS, 3) + " requests/s (achieved at " +
                    levelText(c, k) + ", run " + std::to_string(k.runId) + ")");
    if (c.sized) {
        lines.push_back("mean m = monthly.requests / 2,592,000 s = " + num(c.meanPerS, 3) + " requests/s; peak p = m × " +
                        num(c.peakToMean, 2) + " = " + num(c.peakPerS, 3) + " requests/s");
        lines.push_back("replicas R = ceil(p / C) = " + std::to_string(c.replicas) + ", Rmin = ceil(m / C) = " +
                        std::to_string(c.minReplicas) + "; utilisation p / (R × C) = " + pct(c.utilisationPeak));
    } else {
        lines.push_back(c.notSized);
    }
    std::string out = "scale out above " + num(c.scaleOutQueueDepth, 1) + " waiting requests per pod (p90 at the knee)";
    out += ", TTFT p95 " + ms(c.scaleOutTtftP95Ms);
    if (c.scaleOutKvShare) out += ", KV use " + pct(*c.scaleOutKvShare);
    lines.push_back(out + "; scale in below " + num(c.scaleInQueueDepth, 1) + " waiting");
    return lines;
}

nlohmann::ordered_json toJson(const ModeCapacity& c) {
    nlohmann::ordered_json points = nlohmann::ordered_json::array();
    for (const SweepPoint& p : c.points) {
        nlohmann::ordered_json slo = nlohmann::ordered_json::array();
        for (const SloCheck& k : p.slo)
            slo.push_back({{"key", k.key}, {"limit_ms", k.limitMs}, {"measured_ms", k.measuredMs}, {"met", k.met},
                           {"measured", k.measured}});
        points.push_back({{"run_id", p.runId}, {"level", p.level}, {"probe", p.probe}, {"load", p.load},
                          {"achieved_per_s", p.achievedPerS}, {"goodput_per_s", p.goodputPerS}, {"slo", slo},
                          {"failed_share", p.failedShare}, {"meets", p.meets}, {"miss", p.miss},
                          {"queue_depth_p90", p.queueDepthP90}, {"ttft_p95_ms", p.ttftP95Ms},
                          {"kv_share", p.kvShare ? nlohmann::ordered_json(*p.kvShare) : nlohmann::ordered_json(nullptr)}});
    }
    auto opt = [](const std::optional<double>& v) { return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr); };
    return {{"mode", modeName(c.mode)},
            {"kind", sweepKindName(c.kind)},
            {"points", points},
            {"knee", c.knee ? nlohmann::ordered_json(*c.knee) : nlohmann::ordered_json(nullptr)},
            {"per_replica_per_s", c.perReplicaPerS},
            {"sized", c.sized},
            {"not_sized", c.notSized},
            {"peak_to_mean", c.peakToMean},
            {"mean_per_s", c.meanPerS},
            {"peak_per_s", c.peakPerS},
            {"replicas", c.replicas},
            {"min_replicas", c.minReplicas},
            {"utilisation_peak", c.utilisationPeak},
            {"utilisation_mean", c.utilisationMean},
            {"scale_out_queue_depth", c.scaleOutQueueDepth},
            {"scale_in_queue_depth", c.scaleInQueueDepth},
            {"scale_out_ttft_p95_ms", c.scaleOutTtftP95Ms},
            {"scale_out_kv_share", opt(c.scaleOutKvShare)},
            {"run_ids", c.runIds}};
}

ModeCapacity modeCapacityFromJson(const nlohmann::json& j) {
    ModeCapacity c;
    c.mode = j.at("mode").get<std::string>() == "fast" ? Mode::Fast : Mode::Regular;
    c.kind = sweepKindFromName(j.at("kind").get<std::string>()).value_or(SweepKind::Concurrency);
    for (const auto& p : j.at("points")) {
        SweepPoint s;
        s.runId = p.at("run_id").get<int64_t>();
        s.level = p.at("level").get<double>();
        s.probe = p.at("probe").get<bool>();
        s.load = p.at("load").get<double>();
        s.achievedPerS = p.at("achieved_per_s").get<double>();
        s.goodputPerS = p.at("goodput_per_s").get<double>();
        for (const auto& k : p.at("slo"))
            s.slo.push_back({k.at("key").get<std::string>(), k.at("limit_ms").get<double>(),
                             k.at("measured_ms").get<double>(), k.at("met").get<bool>(), k.at("measured").get<bool>()});
        s.failedShare = p.at("failed_share").get<double>();
        s.meets = p.at("meets").get<bool>();
        s.miss = p.at("miss").get<std::string>();
        s.queueDepthP90 = p.at("queue_depth_p90").get<double>();
        s.ttftP95Ms = p.at("ttft_p95_ms").get<double>();
        if (!p.at("kv_share").is_null()) s.kvShare = p.at("kv_share").get<double>();
        c.points.push_back(std::move(s));
    }
    if (!j.at("knee").is_null()) c.knee = j.at("knee").get<size_t>();
    c.perReplicaPerS = j.at("per_replica_per_s").get<double>();
    c.sized = j.at("sized").get<bool>();
    c.notSized = j.at("not_sized").get<std::string>();
    c.peakToMean = j.at("peak_to_mean").get<double>();
    c.meanPerS = j.at("mean_per_s").get<double>();
    c.peakPerS = j.at("peak_per_s").get<double>();
    c.replicas = j.at("replicas").get<int>();
    c.minReplicas = j.at("min_replicas").get<int>();
    c.utilisationPeak = j.at("utilisation_peak").get<double>();
    c.utilisationMean = j.at("utilisation_mean").get<double>();
    c.scaleOutQueueDepth = j.at("scale_out_queue_depth").get<double>();
    c.scaleInQueueDepth = j.at("scale_in_queue_depth").get<double>();
    c.scaleOutTtftP95Ms = j.at("scale_out_ttft_p95_ms").get<double>();
    if (!j.at("scale_out_kv_share").is_null()) c.scaleOutKvShare = j.at("scale_out_kv_share").get<double>();
    c.runIds = j.at("run_ids").get<std::vector<int64_t>>();
    if (c.knee && *c.knee >= c.points.size()) throw SelectionError("capacity: knee beyond the points");
    return c;
}

} // namespace mb::lab
