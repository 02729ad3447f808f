// Run metrics: formulas of PRODUCT.md §3 over request records and engine stats samples.
#include "lab/metrics.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

namespace mb::lab {

namespace {

// Value at quantile q of sorted values: linear interpolation between closest ranks.
double quantileSorted(const std::vector<double>& v, double q) {
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    const double frac = pos - static_cast<double>(lo);
    return v[lo] + (v[hi] - v[lo]) * frac;
}

int64_t bucketOf(double timeMs) {
    return static_cast<int64_t>(std::floor(timeMs / 1000.0));
}

double perSecond(double amount, double durationS) {
    return durationS > 0 ? amount / durationS : 0.0;
}

nlohmann::ordered_json msOrNull(double ms) {
    return ms >= 0 ? nlohmann::ordered_json(ms) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json seriesJson(const std::vector<TimePoint>& points) {
    auto out = nlohmann::ordered_json::array();
    for (const TimePoint& p : points) out.push_back({p.second, p.value});
    return out;
}

} // namespace

Distribution describe(std::vector<double> values) {
    Distribution d;
    if (values.empty()) return d;
    std::sort(values.begin(), values.end());
    const auto n = static_cast<double>(values.size());
    d.count = static_cast<int64_t>(values.size());
    d.min = values.front();
    d.max = values.back();
    double sum = 0;
    for (double x : values) sum += x;
    d.mean = sum / n;
    if (values.size() >= 2) {
        // Two-pass variance: the mean is known, so no catastrophic cancellation.
        double ss = 0;
        for (double x : values) ss += (x - d.mean) * (x - d.mean);
        d.std = std::sqrt(ss / (n - 1));
    }
    d.p50 = quantileSorted(values, 0.50);
    d.p90 = quantileSorted(values, 0.90);
    d.p95 = quantileSorted(values, 0.95);
    d.p99 = quantileSorted(values, 0.99);
    d.p999 = quantileSorted(values, 0.999);
    return d;
}

bool Slo::metBy(const RequestRecord& r) const {
    if (r.status != RequestStatus::Ok) return false;
    auto holds = [](double bound, double value) {
        return bound < 0 || value < 0 || value <= bound;
    };
    return holds(ttftMs, r.ttftMs()) && holds(e2eMs, r.e2eMs()) && holds(tpotMs, r.tpotMs());
}

RunSummary summarize(const std::vector<RequestRecord>& records,
                     const std::vector<StatsSample>& samples, const Slo& slo) {
    RunSummary s;
    s.requests = static_cast<int64_t>(records.size());

    std::vector<double> ttft, tpot, e2e, queue, prefill, itl, prompt, output;
    double firstSubmit = std::numeric_limits<double>::infinity();
    double lastFinish = -std::numeric_limits<double>::infinity();
    double okPromptTokens = 0, okOutputTokens = 0;
    int64_t meetingSlo = 0;
    uint64_t recordQueries = 0, recordHits = 0;
    std::map<int64_t, double> tokensPerBucket;             // bucket -> output tokens
    std::map<int64_t, std::pair<double, int64_t>> ttftSum; // bucket -> (Σ ttft, count)

    for (const RequestRecord& r : records) {
        switch (r.status) {
        case RequestStatus::Ok:
            ++s.ok;
            break;
        case RequestStatus::Error:
            ++s.errors;
            break;
        case RequestStatus::Cancelled:
            ++s.cancelled;
            break;
        case RequestStatus::Rejected:
            ++s.rejected;
            break;
        }
        if (r.truncatedTokens > 0) ++s.truncated;
        if (r.submittedMs >= 0) firstSubmit = std::min(firstSubmit, r.submittedMs);
        if (r.finishedMs >= 0) lastFinish = std::max(lastFinish, r.finishedMs);
        s.kvBytesPeak = std::max(s.kvBytesPeak, r.kvBytesPeak);
        if (r.status != RequestStatus::Rejected) {
            recordQueries += static_cast<uint64_t>(std::max<int64_t>(r.promptTokens, 0));
            recordHits += static_cast<uint64_t>(std::max<int64_t>(r.cachedTokens, 0));
        }
        if (slo.metBy(r)) ++meetingSlo;
        if (r.status != RequestStatus::Ok) continue;

        okPromptTokens += static_cast<double>(r.promptTokens);
        okOutputTokens += static_cast<double>(r.outputTokens);
        prompt.push_back(static_cast<double>(r.promptTokens));
        output.push_back(static_cast<double>(r.outputTokens));
        if (double v = r.ttftMs(); v >= 0) {
            ttft.push_back(v);
            auto& [sum, count] = ttftSum[bucketOf(r.firstTokenMs)];
            sum += v;
            ++count;
        }
        if (double v = r.tpotMs(); v >= 0) tpot.push_back(v);
        if (double v = r.e2eMs(); v >= 0) e2e.push_back(v);
        if (double v = r.queueMs(); v >= 0) queue.push_back(v);
        if (double v = r.prefillMs(); v >= 0) prefill.push_back(v);
        for (size_t i = 0; i < r.tokenTimesMs.size(); ++i) {
            tokensPerBucket[bucketOf(r.tokenTimesMs[i])] += 1.0;
            if (i > 0) itl.push_back(r.tokenTimesMs[i] - r.tokenTimesMs[i - 1]);
            lastFinish = std::max(lastFinish, r.tokenTimesMs[i]);
        }
    }

    if (std::isfinite(firstSubmit) && std::isfinite(lastFinish) && lastFinish > firstSubmit)
        s.durationS = (lastFinish - firstSubmit) / 1000.0;
    s.requestsPerS = perSecond(static_cast<double>(s.ok), s.durationS);
    s.outputTokensPerS = perSecond(okOutputTokens, s.durationS);
    s.totalTokensPerS = perSecond(okPromptTokens + okOutputTokens, s.durationS);

    s.ttftMs = describe(std::move(ttft));
    s.tpotMs = describe(std::move(tpot));
    s.itlMs = describe(std::move(itl));
    s.e2eMs = describe(std::move(e2e));
    s.queueMs = describe(std::move(queue));
    s.prefillMs = describe(std::move(prefill));
    s.promptTokens = describe(std::move(prompt));
    s.outputTokens = describe(std::move(output));

    if (!samples.empty()) {
        // Samples arrive in time order; the last holds the run's totals.
        s.prefixQueries = samples.back().prefixQueries;
        s.prefixHits = samples.back().prefixHits;
    } else {
        s.prefixQueries = recordQueries;
        s.prefixHits = recordHits;
    }
    s.hitRate = s.prefixQueries > 0
                    ? static_cast<double>(s.prefixHits) / static_cast<double>(s.prefixQueries)
                    : 0.0;

    s.goodputPerS = perSecond(static_cast<double>(meetingSlo), s.durationS);
    s.sloAttainment =
        s.requests > 0 ? static_cast<double>(meetingSlo) / static_cast<double>(s.requests) : 0.0;

    // Series. Throughput is dense so that idle seconds show as zeros, not as gaps.
    if (std::isfinite(lastFinish) && lastFinish >= 0) {
        const int64_t last = bucketOf(lastFinish);
        for (int64_t b = 0; b <= last; ++b) {
            auto it = tokensPerBucket.find(b);
            s.series.throughput.push_back(
                {static_cast<double>(b), it == tokensPerBucket.end() ? 0.0 : it->second});
        }
    }
    for (const auto& [bucket, sumCount] : ttftSum)
        s.series.ttftMs.push_back(
            {static_cast<double>(bucket), sumCount.first / static_cast<double>(sumCount.second)});

    struct SampleBucket {
        uint64_t queries = 0, hits = 0, kvMax = 0;
        int64_t waitingMax = 0;
        double lastTime = -std::numeric_limits<double>::infinity();
    };
    std::map<int64_t, SampleBucket> sampleBuckets;
    for (const StatsSample& x : samples) {
        s.kvBytesPeak = std::max(s.kvBytesPeak, x.kvBytesInUse);
        const auto [it, fresh] = sampleBuckets.try_emplace(bucketOf(x.timeMs));
        SampleBucket& b = it->second;
        b.kvMax = fresh ? x.kvBytesInUse : std::max(b.kvMax, x.kvBytesInUse);
        b.waitingMax = fresh ? x.waiting : std::max(b.waitingMax, x.waiting);
        if (x.timeMs >= b.lastTime) {
            b.lastTime = x.timeMs;
            b.queries = x.prefixQueries;
            b.hits = x.prefixHits;
        }
    }
    for (const auto& [bucket, b] : sampleBuckets) {
        const auto sec = static_cast<double>(bucket);
        const double rate =
            b.queries > 0 ? static_cast<double>(b.hits) / static_cast<double>(b.queries) : 0.0;
        s.series.hitRate.push_back({sec, rate});
        s.series.kvBytes.push_back({sec, static_cast<double>(b.kvMax)});
        s.series.queueDepth.push_back({sec, static_cast<double>(b.waitingMax)});
    }
    s.postprocess = summarizePostprocess(records);
    s.images = summarizeImages(records);
    return s;
}

double studentT95(int64_t df) {
    // t_{0.975, df}, df = 1..30.
    static constexpr std::array<double, 30> kTable = {
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
        2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
        2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1) return std::numeric_limits<double>::infinity();
    if (df <= 30) return kTable[static_cast<size_t>(df - 1)];
    // Beyond 30 the critical value is close to linear in 1/df; anchors at 30, 40, 60, 120, ∞.
    static constexpr std::array<std::pair<double, double>, 5> kAnchors = {
        {{30, 2.042}, {40, 2.021}, {60, 2.000}, {120, 1.980}, {0, 1.960}}};
    const double x = 1.0 / static_cast<double>(df);
    for (size_t i = 0; i + 1 < kAnchors.size(); ++i) {
        const double x0 = 1.0 / kAnchors[i].first;
        const double x1 = kAnchors[i + 1].first > 0 ? 1.0 / kAnchors[i + 1].first : 0.0;
        if (x <= x0 && x >= x1) {
            const double t = (x - x1) / (x0 - x1);
            return kAnchors[i + 1].second + t * (kAnchors[i].second - kAnchors[i + 1].second);
        }
    }
    return 1.960;
}

RepeatedMetric repeated(const std::vector<double>& perRunValues) {
    RepeatedMetric m;
    if (perRunValues.empty()) return m;
    const Distribution d = describe(perRunValues);
    m.mean = d.mean;
    const double half =
        d.count >= 2 ? studentT95(d.count - 1) * d.std / std::sqrt(static_cast<double>(d.count))
                     : 0.0;
    m.ci95Low = m.mean - half;
    m.ci95High = m.mean + half;
    if (d.std == 0)
        m.cv = 0;
    else if (m.mean == 0)
        m.cv = std::numeric_limits<double>::infinity();
    else
        m.cv = d.std / std::fabs(m.mean);
    m.highVariance = m.cv > kHighVarianceCv;
    return m;
}

nlohmann::ordered_json toJson(const Distribution& d) {
    nlohmann::ordered_json j;
    j["p50"] = d.p50;
    j["p90"] = d.p90;
    j["p95"] = d.p95;
    j["p99"] = d.p99;
    j["p999"] = d.p999;
    j["mean"] = d.mean;
    j["std"] = d.std;
    j["min"] = d.min;
    j["max"] = d.max;
    j["count"] = d.count;
    return j;
}

nlohmann::ordered_json toJson(const RunSummary& s) {
    nlohmann::ordered_json j;
    j["requests"] = s.requests;
    j["ok"] = s.ok;
    j["errors"] = s.errors;
    j["cancelled"] = s.cancelled;
    j["rejected"] = s.rejected;
    j["truncated"] = s.truncated;
    j["duration_s"] = s.durationS;
    j["requests_per_s"] = s.requestsPerS;
    j["output_tokens_per_s"] = s.outputTokensPerS;
    j["total_tokens_per_s"] = s.totalTokensPerS;
    j["ttft_ms"] = toJson(s.ttftMs);
    j["tpot_ms"] = toJson(s.tpotMs);
    j["itl_ms"] = toJson(s.itlMs);
    j["e2e_ms"] = toJson(s.e2eMs);
    j["queue_ms"] = toJson(s.queueMs);
    j["prefill_ms"] = toJson(s.prefillMs);
    j["prompt_tokens"] = toJson(s.promptTokens);
    j["output_tokens"] = toJson(s.outputTokens);
    nlohmann::ordered_json cache;
    cache["queries"] = s.prefixQueries;
    cache["hits"] = s.prefixHits;
    cache["hit_rate"] = s.hitRate;
    j["prefix_cache"] = std::move(cache);
    j["kv_bytes_peak"] = s.kvBytesPeak;
    j["goodput_per_s"] = s.goodputPerS;
    j["slo_attainment"] = s.sloAttainment;
    if (s.precision) j["precision"] = toJson(*s.precision);
    if (s.postprocess) j["postprocess"] = toJson(*s.postprocess);
    if (s.images) j["images"] = toJson(*s.images);
    nlohmann::ordered_json series;
    series["throughput"] = seriesJson(s.series.throughput);
    series["ttft_ms"] = seriesJson(s.series.ttftMs);
    series["hit_rate"] = seriesJson(s.series.hitRate);
    series["kv_bytes"] = seriesJson(s.series.kvBytes);
    series["queue_depth"] = seriesJson(s.series.queueDepth);
    j["series"] = std::move(series);
    return j;
}

nlohmann::ordered_json toJson(const RepeatedMetric& m) {
    nlohmann::ordered_json j;
    j["mean"] = m.mean;
    j["ci95_low"] = m.ci95Low;
    j["ci95_high"] = m.ci95High;
    j["cv"] = std::isfinite(m.cv) ? nlohmann::ordered_json(m.cv) : nlohmann::ordered_json(nullptr);
    j["high_variance"] = m.highVariance;
    return j;
}

nlohmann::ordered_json toJson(const RequestRecord& r, bool withTokenTimes) {
    nlohmann::ordered_json j;
    j["id"] = r.id;
    j["status"] = requestStatusName(r.status);
    j["error"] = r.error;
    j["prompt_tokens"] = r.promptTokens;
    j["cached_tokens"] = r.cachedTokens;
    j["truncated_tokens"] = r.truncatedTokens;
    j["output_tokens"] = r.outputTokens;
    // The request's own times (ms since the run started), so token_times_ms can be tied to it.
    j["submitted_ms"] = msOrNull(r.submittedMs);
    j["scheduled_ms"] = msOrNull(r.scheduledMs);
    j["first_token_ms"] = msOrNull(r.firstTokenMs);
    j["finished_ms"] = msOrNull(r.finishedMs);
    j["queue_ms"] = msOrNull(r.queueMs());
    j["prefill_ms"] = msOrNull(r.prefillMs());
    j["ttft_ms"] = msOrNull(r.ttftMs());
    j["tpot_ms"] = msOrNull(r.tpotMs());
    j["e2e_ms"] = msOrNull(r.e2eMs());
    j["kv_bytes_peak"] = r.kvBytesPeak;
    j["tokens"] = r.tokens;
    j["text"] = r.text;
    j["raw_output"] = r.text;
    j["output"] = r.postprocessed ? r.output : r.text;
    j["postprocess_ms"] = r.postprocessMs;
    if (r.images > 0) {
        j["images"] = r.images;
        j["image_tokens"] = r.imageTokens;
        j["images_dropped"] = r.imagesDropped;
        j["encode_ms"] = r.encodeMs;
        j["encode_share"] = msOrNull(r.encodeShare());
    }
    if (r.postprocessed) {
        nlohmann::ordered_json p;
        p["status"] = r.postprocessStatus.empty() ? "ok" : r.postprocessStatus;
        p["calls"] = r.postprocessCalls;
        p["start_ms"] = r.postprocessStartMs;
        p["max_call_ms"] = r.postprocessMaxCallMs;
        p["extra_ttft_ms"] = msOrNull(r.extraTtftMs());
        if (withTokenTimes) p["output_times_ms"] = r.outputTimesMs;
        j["postprocess"] = std::move(p);
    }
    if (withTokenTimes) j["token_times_ms"] = r.tokenTimesMs;
    return j;
}

} // namespace mb::lab
