// The score's formulas: latency headroom (a capped log ratio), features from needs and outcomes, dominance.
#include "lab/selection_internal.h"

#include "lab/metrics.h"

#include <algorithm>
#include <cmath>

namespace mb::lab::selection_detail {

namespace {

struct Metric {
    std::string name;
    double value = 0; // ms: lower is better
};

// The figures dominance compares: p50 and p95 of each latency metric the side measured.
// Throughput is left out: under an open-loop arrival it measures the offered load, not the mode.
std::vector<Metric> metricsOf(const Side& s) {
    std::vector<double> v[4]; // ttft, e2e, tpot, itl
    for (const Req& q : s.reqs) {
        if (!q.ok) continue;
        if (q.ttft >= 0) v[0].push_back(q.ttft);
        if (q.e2e >= 0) v[1].push_back(q.e2e);
        if (q.tpot >= 0) v[2].push_back(q.tpot);
        v[3].insert(v[3].end(), q.gaps.begin(), q.gaps.end());
    }
    static const char* const kNames[] = {"TTFT", "E2E", "TPOT", "ITL"};
    std::vector<Metric> out;
    for (int m = 0; m < 4; ++m) {
        const Distribution d = describe(std::move(v[m]));
        if (d.count == 0) continue;
        out.push_back({std::string(kNames[m]) + " p50", d.p50});
        out.push_back({std::string(kNames[m]) + " p95", d.p95});
    }
    return out;
}

// worse / better for each metric both sides measured (> 0), oriented so that > 1 favours `a`.
std::vector<std::pair<std::string, double>> ratiosFavouring(const Side& a, const Side& b) {
    const auto ma = metricsOf(a), mb = metricsOf(b);
    std::vector<std::pair<std::string, double>> out;
    for (const Metric& x : ma)
        for (const Metric& y : mb)
            if (x.name == y.name && x.value > 0 && y.value > 0)
                out.emplace_back(x.name, y.value / x.value);
    return out;
}

bool allAtLeast(const std::vector<std::pair<std::string, double>>& ratios, double floor) {
    return !ratios.empty() &&
           std::all_of(ratios.begin(), ratios.end(), [&](const auto& r) { return r.second >= floor; });
}

} // namespace

double headroomScore(double measuredMs, double limitMs) {
    if (measuredMs <= 0) return 1.0;
    const double s = 0.5 - std::log(measuredMs / limitMs) / (2.0 * std::log(kHeadroomSpan));
    return std::clamp(s, 0.0, 1.0);
}

double featuresScore(const CandidateScore& c, const Requirements& req) {
    const int needs = int{req.needs.hotUpdates} + int{req.needs.customBatching};
    const double needsMet = needs == 0 ? 1.0
                                       : (double(req.needs.hotUpdates && c.hotUpdates) +
                                          double(req.needs.customBatching && c.customBatching)) /
                                             needs;
    // What the workload showed: a request cut to the cap or refused was not served as asked.
    const double whole = c.requests > 0 ? std::max<double>(0, static_cast<double>(c.requests - c.truncated - c.rejected)) /
                                              static_cast<double>(c.requests)
                                        : 0.0;
    return needsMet * whole;
}

Dominance dominanceOf(const Side& fast, const Side& regular, const std::vector<std::pair<Side, Side>>& perRun) {
    for (const Mode winner : {Mode::Fast, Mode::Regular}) {
        const bool isFast = winner == Mode::Fast;
        const auto ratios = isFast ? ratiosFavouring(fast, regular) : ratiosFavouring(regular, fast);
        if (!allAtLeast(ratios, kDominanceMinRatio)) continue;
        // Beyond run-to-run noise: better on every metric in every run, not only when pooled.
        bool everyRun = true;
        for (const auto& [f, r] : perRun)
            everyRun = everyRun && allAtLeast(isFast ? ratiosFavouring(f, r) : ratiosFavouring(r, f), 1.0);
        if (perRun.size() > 1 && !everyRun) continue;
        double lo = ratios.front().second, hi = lo;
        std::string names;
        for (const auto& [name, ratio] : ratios) {
            lo = std::min(lo, ratio);
            hi = std::max(hi, ratio);
            names += (names.empty() ? "" : ", ") + name;
        }
        return {winner, std::string(modeName(winner)) + " is better on all " + std::to_string(ratios.size()) +
               " measured metrics (" + names + "), by " + (lo == hi ? ratioText(lo) : num(lo, 1) + "–" + ratioText(hi)) +
               (perRun.size() > 1 ? ", in each of the " + std::to_string(perRun.size()) + " runs"
                                  : " (one run: run-to-run noise not measured)")};
    }
    return {};
}

} // namespace mb::lab::selection_detail
