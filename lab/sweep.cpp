// A load sweep: the comparison at each level, each stored as its own tagged run.
#include "lab/sweep.h"

#include "lab/rng.h"
#include "lab/run_config.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace mb::lab {

std::string validateSweep(const SweepOptions& o) {
    if (o.kind == SweepKind::Rates && o.levels.empty() && o.ratePoints < 2) return "sweep-points: at least 2";
    for (size_t i = 0; i < o.levels.size(); ++i) {
        const double l = o.levels[i];
        if (!(l > 0) || !std::isfinite(l)) return "sweep-levels: each must be a positive number";
        if (o.kind == SweepKind::Concurrency && (l != std::floor(l) || l > 4096))
            return "sweep-levels: concurrency levels are whole numbers from 1 to 4096";
        if (i > 0 && !(l > o.levels[i - 1])) return "sweep-levels: must be strictly increasing";
    }
    return {};
}

std::vector<double> defaultConcurrencyLevels() { return {1, 2, 4, 8, 16, 32, 64}; }

std::vector<double> defaultRateLevels(double slowest, double fastest, int points) {
    if (!(slowest > 0) || !(fastest >= slowest) || points < 2)
        throw std::invalid_argument("rate levels need 0 < slowest <= fastest and at least 2 points");
    const double lo = 0.5 * slowest, hi = 4 * fastest;
    std::vector<double> out;
    for (int i = 0; i < points; ++i) {
        const double r = lo * std::pow(hi / lo, static_cast<double>(i) / (points - 1));
        const double scale = std::pow(10.0, std::floor(std::log10(r)) - 2); // 3 significant digits
        const double rounded = std::round(r / scale) * scale;
        if (out.empty() || rounded > out.back()) out.push_back(rounded);
    }
    return out;
}

void retimeArrivals(std::vector<WorkloadRequest>& requests, const ArrivalSpec& arrival, uint64_t seed) {
    // Units in order of first appearance: a conversation, or a lone request.
    std::map<int64_t, size_t> unitOfConversation;
    std::vector<size_t> unit(requests.size(), 0);
    size_t units = 0;
    for (size_t i = 0; i < requests.size(); ++i) {
        if (requests[i].warmup) continue;
        const int64_t c = requests[i].conversation;
        if (c < 0) {
            unit[i] = units++;
            continue;
        }
        auto [it, fresh] = unitOfConversation.emplace(c, units);
        if (fresh) ++units;
        unit[i] = it->second;
    }
    Rng rng(seed);
    const std::vector<double> times = arrivalTimesMs(arrival, units, rng);
    for (size_t i = 0; i < requests.size(); ++i) requests[i].arrivalMs = requests[i].warmup ? 0 : times[unit[i]];
}

namespace {

ArrivalSpec arrivalAt(const ArrivalSpec& base, SweepKind kind, double level) {
    ArrivalSpec a = base;
    if (kind == SweepKind::Concurrency) {
        a.kind = ArrivalSpec::Kind::Closed;
        a.concurrency = static_cast<int32_t>(level);
    } else {
        if (a.kind == ArrivalSpec::Kind::Closed) a.kind = ArrivalSpec::Kind::Poisson;
        a.rate = level;
    }
    return a;
}

// The stored texts of one level: its name, the "sweep" tag and the arrival it ran with.
RunInfo infoAt(const RunInfo& base, const SweepTag& tag, const ArrivalSpec& a, const std::string& what) {
    RunInfo info = base;
    info.name = base.name + " (sweep: " + what + ")";
    if (std::find(info.tags.begin(), info.tags.end(), "sweep") == info.tags.end()) info.tags.push_back("sweep");
    RunConfig config = runConfigFromText(base.configJson);
    config.sweep = tag;
    config.arrival = a;
    info.configJson = toJson(config).dump();
    // The workload spec records its arrival too: the level's.
    auto workload = nlohmann::ordered_json::parse(base.workloadJson.empty() ? "{}" : base.workloadJson, nullptr, false);
    if (!workload.is_object()) workload = nlohmann::ordered_json::object();
    workload["arrival"] = {{"kind", arrivalKindName(a.kind)}, {"concurrency", a.concurrency}, {"rate", a.rate},
                           {"burstiness", a.burstiness}, {"ramp_seconds", a.rampSeconds}};
    info.workloadJson = workload.dump();
    return info;
}

std::string levelName(SweepKind kind, double level, bool probe) {
    if (probe) return "concurrency-1 probe";
    if (kind == SweepKind::Concurrency) return "concurrency " + std::to_string(static_cast<int64_t>(level));
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3g requests/s", level);
    return buf;
}

} // namespace

std::vector<SweepLevel> runSweep(const std::vector<Candidate>& candidates, const std::vector<WorkloadRequest>& requests,
                                 const ComparisonOptions& base, const SweepOptions& o, uint64_t seed) {
    if (const std::string why = validateSweep(o); !why.empty()) throw std::invalid_argument(why);
    std::vector<SweepLevel> out;
    auto stop = [&] { return o.cancel && o.cancel->load(); };
    auto runLevel = [&](SweepTag tag, const std::string& what, int of) {
        ComparisonOptions opts = base;
        const double level = tag.probe ? 1 : tag.level;
        const SweepKind kind = tag.probe ? SweepKind::Concurrency : tag.kind;
        opts.run.arrival = arrivalAt(base.run.arrival, kind, level);
        opts.run.cancel = o.cancel;
        opts.precision.prompts = 0; // precision does not change with load: the comparison runs measure it
        std::vector<WorkloadRequest> timed = requests;
        retimeArrivals(timed, opts.run.arrival, seed);
        if (base.sink) opts.runInfo = infoAt(base.runInfo, tag, opts.run.arrival, what);
        if (o.onLevel)
            o.onLevel("sweep: " + what + " (level " + std::to_string(tag.index + 1) + " of " + std::to_string(of) + ")");
        SweepLevel l;
        l.tag = tag;
        l.results = runComparison(candidates, timed, opts, &l.runId);
        out.push_back(std::move(l));
        return std::any_of(out.back().results.begin(), out.back().results.end(),
                           [](const CandidateResult& r) { return r.run.cancelled; });
    };
    std::vector<double> levels = o.levels;
    int index = 0;
    if (levels.empty() && o.kind == SweepKind::Rates) {
        SweepTag probe{SweepKind::Rates, 0, index++, true};
        if (runLevel(probe, levelName(o.kind, 0, true), o.ratePoints + 1) || stop()) return out;
        double slowest = 0, fastest = 0;
        for (const auto& r : out.back().results) {
            const double v = r.summary.requestsPerS;
            slowest = slowest == 0 ? v : std::min(slowest, v);
            fastest = std::max(fastest, v);
        }
        if (!(slowest > 0)) throw std::runtime_error("sweep: the concurrency-1 probe served no request, so no rates "
                                                     "can be derived; give --sweep-levels");
        levels = defaultRateLevels(slowest, fastest, o.ratePoints);
    } else if (levels.empty()) {
        levels = defaultConcurrencyLevels();
    }
    const int total = index + static_cast<int>(levels.size());
    std::vector<double> best(candidates.size(), 0); // the most each served at a lower level (the probe included)
    for (const SweepLevel& l : out)
        for (size_t c = 0; c < candidates.size(); ++c) best[c] = std::max(best[c], l.results[c].summary.requestsPerS);
    std::vector<int> saturatedRun(candidates.size(), 0);
    for (const double level : levels) {
        const SweepTag tag{o.kind, level, index++, false};
        if (runLevel(tag, levelName(o.kind, level, false), total) || stop()) break;
        bool allSaturated = true;
        for (size_t c = 0; c < candidates.size(); ++c) {
            const double achieved = out.back().results[c].summary.requestsPerS;
            const bool gained = achieved > kSaturationGain * best[c];
            saturatedRun[c] = gained ? 0 : saturatedRun[c] + 1;
            best[c] = std::max(best[c], achieved);
            allSaturated = allSaturated && saturatedRun[c] >= kSaturatedLevelsToStop;
        }
        if (o.stopWhenSaturated && allSaturated) {
            if (o.onLevel) o.onLevel("sweep: every candidate saturated at two consecutive levels; stopping");
            break;
        }
    }
    return out;
}

} // namespace mb::lab
