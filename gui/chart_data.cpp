// Chart points: histogram with shared bins, empirical CDFs, per-second throughput.
#include "gui/chart_data.h"

#include <algorithm>
#include <cmath>

namespace mb::gui {

namespace {

QList<QPointF> cdf(std::vector<double> v, int maxPoints) {
    QList<QPointF> out;
    if (v.empty()) return out;
    if (v.size() > kMaxCdfSamples) { // an even stride through the values, the extremes kept
        const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
        const double least = *lo, most = *hi;
        const double stride = static_cast<double>(v.size()) / static_cast<double>(kMaxCdfSamples - 2);
        std::vector<double> sample{least, most};
        sample.reserve(kMaxCdfSamples);
        for (size_t i = 0; sample.size() < kMaxCdfSamples; ++i) {
            const auto at = static_cast<size_t>(static_cast<double>(i) * stride);
            if (at >= v.size()) break;
            sample.push_back(v[at]);
        }
        v = std::move(sample);
    }
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    const size_t step = std::max<size_t>(1, n / static_cast<size_t>(std::max(1, maxPoints)));
    for (size_t i = 0; i < n; i += step) out.append({v[i], static_cast<double>(i + 1) / static_cast<double>(n)});
    if (out.back().y() < 1.0) out.append({v.back(), 1.0});
    return out;
}

} // namespace

void appendSamples(ChartInput& input, const std::vector<lab::StatsSample>& samples) {
    for (const auto& s : samples) {
        const double t = s.timeMs / 1000.0;
        if (s.prefixQueries > 0)
            input.hitRate.emplace_back(t, static_cast<double>(s.prefixHits) / static_cast<double>(s.prefixQueries));
        input.kvMiB.emplace_back(t, static_cast<double>(s.kvBytesInUse) / (1024.0 * 1024.0));
    }
}

std::map<std::string, ChartPoints> chartPoints(const std::map<std::string, ChartInput>& inputs, int bins,
                                               int maxCdfPoints) {
    bins = std::max(1, bins);
    double maxTtft = 0;
    for (const auto& [label, in] : inputs)
        for (const auto& r : in.records)
            if (r.status == lab::RequestStatus::Ok) maxTtft = std::max(maxTtft, r.ttftMs());
    const double width = maxTtft > 0 ? maxTtft / bins : 1.0;
    // Throughput buckets: 1 s for runs of 20 s or more, else a twentieth of the run (at
    // least 50 ms), so that a short run still draws a curve.
    double spanMs = 0;
    for (const auto& [label, in] : inputs)
        for (const auto& r : in.records)
            if (!r.tokenTimesMs.empty()) spanMs = std::max(spanMs, r.tokenTimesMs.back());
    const double bucketMs = spanMs >= 20000 ? 1000.0 : std::max(50.0, spanMs / 20.0);

    std::map<std::string, ChartPoints> out;
    for (const auto& [label, in] : inputs) {
        ChartPoints& p = out[label];
        std::vector<double> counts(static_cast<size_t>(bins), 0.0), e2e, itl;
        std::vector<double> tokensPerBucket;
        std::vector<QPointF> scatter;
        double lastFirstToken = 0;
        for (const auto& r : in.records) {
            if (r.status != lab::RequestStatus::Ok) continue;
            const double ttft = r.ttftMs();
            if (ttft >= 0) {
                const auto b = std::min<size_t>(static_cast<size_t>(ttft / width), static_cast<size_t>(bins - 1));
                counts[b] += 1;
                scatter.emplace_back(r.firstTokenMs / 1000.0, ttft);
                lastFirstToken = std::max(lastFirstToken, r.firstTokenMs / 1000.0);
            }
            if (r.e2eMs() >= 0) e2e.push_back(r.e2eMs());
            for (size_t k = 1; k < r.tokenTimesMs.size(); ++k) itl.push_back(r.tokenTimesMs[k] - r.tokenTimesMs[k - 1]);
            for (double t : r.tokenTimesMs) {
                const auto bucket = static_cast<size_t>(std::max(0.0, std::floor(t / bucketMs)));
                if (bucket >= tokensPerBucket.size()) tokensPerBucket.resize(bucket + 1, 0.0);
                tokensPerBucket[bucket] += 1;
            }
        }
        if (!in.records.empty()) {
            for (int b = 0; b < bins; ++b) {
                p.ttftHistogram.append({b * width, counts[static_cast<size_t>(b)]});
                p.ttftHistogram.append({(b + 1) * width, counts[static_cast<size_t>(b)]});
            }
        }
        p.e2eCdf = cdf(std::move(e2e), maxCdfPoints);
        p.itlCdf = cdf(std::move(itl), maxCdfPoints);
        if (scatter.size() > static_cast<size_t>(2 * kMaxScatterBins)) {
            // The envelope: per time bin, the request with the lowest and the highest TTFT.
            std::vector<std::pair<int, int>> extremes(kMaxScatterBins, {-1, -1}); // indices into scatter
            const double binS = std::max(lastFirstToken, 1e-9) / kMaxScatterBins;
            for (size_t i = 0; i < scatter.size(); ++i) {
                const auto b = std::min<size_t>(static_cast<size_t>(std::max(0.0, scatter[i].x()) / binS),
                                                kMaxScatterBins - 1);
                auto& [lo, hi] = extremes[b];
                if (lo < 0 || scatter[i].y() < scatter[static_cast<size_t>(lo)].y()) lo = static_cast<int>(i);
                if (hi < 0 || scatter[i].y() > scatter[static_cast<size_t>(hi)].y()) hi = static_cast<int>(i);
            }
            std::vector<QPointF> kept;
            for (const auto& [lo, hi] : extremes) {
                if (lo >= 0) kept.push_back(scatter[static_cast<size_t>(lo)]);
                if (hi >= 0 && hi != lo) kept.push_back(scatter[static_cast<size_t>(hi)]);
            }
            scatter = std::move(kept);
        }
        std::sort(scatter.begin(), scatter.end(), [](const QPointF& x, const QPointF& y) { return x.x() < y.x(); });
        p.ttftOverTime = QList<QPointF>(scatter.begin(), scatter.end());
        for (size_t s = 0; s < tokensPerBucket.size(); ++s)
            p.throughput.append({static_cast<double>(s) * bucketMs / 1000.0, tokensPerBucket[s] * 1000.0 / bucketMs});
        p.hitRate = QList<QPointF>(in.hitRate.begin(), in.hitRate.end());
        p.kvMiB = QList<QPointF>(in.kvMiB.begin(), in.kvMiB.end());
    }
    return out;
}

} // namespace mb::gui
