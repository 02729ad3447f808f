// Run metrics (PRODUCT.md §3): distributions, per-run summary, SLO goodput, 1 s series, repeats.
#pragma once

#include "lab/precision_check.h"
#include "lab/request_record.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace mb::lab {

// Summary statistics of a sample. Percentiles interpolate linearly between closest ranks
// (numpy's default "linear" method: position p·(n−1) in the sorted values), so
// describe({1..10}).p90 == 9.1. std is the sample standard deviation (n−1), 0 for n < 2.
// All fields are zero when count == 0.
struct Distribution {
    int64_t count = 0;
    double mean = 0, std = 0, min = 0, max = 0;
    double p50 = 0, p90 = 0, p95 = 0, p99 = 0, p999 = 0;
};

// Takes the values by value because it sorts them. O(n log n).
Distribution describe(std::vector<double> values);

// Latency objectives in ms; a negative bound is "not set". A request meets the SLO when it
// is Ok and every set bound holds for it. A bound on a metric the request does not define
// (tpot of a one-token reply) is not violated: there was nothing to be slow at.
struct Slo {
    double ttftMs = -1;
    double e2eMs = -1;
    double tpotMs = -1;

    bool anySet() const { return ttftMs >= 0 || e2eMs >= 0 || tpotMs >= 0; }
    bool metBy(const RequestRecord& r) const;
};

// One point of a 1-second series: `second` is the bucket index floor(timeMs / 1000).
struct TimePoint {
    double second = 0;
    double value = 0;
};

// What the plugin chain did to a run's Ok requests (PRODUCT.md §11), when one ran.
struct PostprocessSummary {
    int64_t requests = 0;      // Ok requests the chain ran on
    int64_t ended = 0;         // ... that a plugin ended (refused, invalid JSON reported)
    int64_t failed = 0;        // ... whose post-processing failed (output stopped there)
    Distribution ms;           // per request: time inside the plugins, all calls and set-up
    Distribution startMs;      // per request: setting the plugins up (a script: its process)
    Distribution callMs;       // per request: its mean time per call (chunk or flush), set-up apart
    Distribution maxCallMs;    // per request: its slowest call
    Distribution extraTtftMs;  // per request: first shown output − first token
    Distribution outputItlMs;  // gaps between shown pieces of output, pooled
};

// What images did to a run's Ok requests (PRODUCT.md §3), when any carried one.
struct ImageSummary {
    int64_t requests = 0;       // Ok requests with images
    int64_t images = 0;         // their images, all told
    int64_t dropped = 0;        // images truncation dropped whole (requests of any status)
    Distribution imageTokens;   // per request with images: image positions in its prompt
    Distribution encodeMs;      // per request with images: the vision encoder + projector
    Distribution encodeShare;   // per request with images: encode_ms / TTFT, in [0, 1]
    Distribution ttftMs;        // TTFT of the requests with images
    Distribution cachedTokens;  // per request with images: prompt tokens from the prefix cache
};

// Everything one run reports. Latency and token distributions cover Ok requests only;
// errors, cancellations and rejections are counted, never averaged in.
struct RunSummary {
    int64_t requests = 0; // records passed in
    int64_t ok = 0;
    int64_t errors = 0;
    int64_t cancelled = 0;
    int64_t rejected = 0;
    int64_t truncated = 0; // requests with truncatedTokens > 0 (any status)

    double durationS = 0;        // first submit to last finish, any status
    double requestsPerS = 0;     // ok / durationS
    double outputTokensPerS = 0; // Σ outputTokens of Ok requests / durationS
    double totalTokensPerS = 0;  // Σ (promptTokens + outputTokens) of Ok requests / durationS

    Distribution ttftMs, tpotMs, e2eMs, queueMs, prefillMs;
    Distribution itlMs;        // every gap between consecutive token times, pooled
    Distribution promptTokens; // per request, tokens
    Distribution outputTokens;

    // Prefix cache, in prompt tokens. Taken from the last StatsSample (the counters are
    // monotonic, so the last one holds the run's totals — the runner must reset or rebase
    // them at run start); without samples, Σ promptTokens / Σ cachedTokens of the records
    // that reached the engine (every status but Rejected).
    uint64_t prefixQueries = 0;
    uint64_t prefixHits = 0;
    double hitRate = 0; // hits / queries; 0 when there were no queries

    uint64_t kvBytesPeak = 0; // max of samples' kvBytesInUse and records' kvBytesPeak

    double goodputPerS = 0;   // requests meeting the SLO / durationS
    double sloAttainment = 0; // requests meeting the SLO / requests (no SLO: ok / requests)

    // 1-second buckets, bucket = floor(timeMs / 1000), times since run start.
    struct Series {
        // Output tokens of Ok requests whose token time falls in the bucket, per second.
        // Dense: every bucket from 0 to the bucket of the last finish, zeros included.
        std::vector<TimePoint> throughput;
        // Mean TTFT (ms) of Ok requests whose first token falls in the bucket; sparse.
        std::vector<TimePoint> ttftMs;
        // CUMULATIVE hits / queries at the last sample in the bucket (not the per-bucket
        // delta: a quiet second would give 0/0, and the cumulative curve is what converges
        // to the run's hitRate). Buckets with samples only.
        std::vector<TimePoint> hitRate;
        std::vector<TimePoint> kvBytes;    // max kvBytesInUse of the bucket's samples
        std::vector<TimePoint> queueDepth; // max `waiting` of the bucket's samples
    } series;

    // Precision A/B figures when the run asked for them (ComparisonOptions::precision);
    // summarize() never fills this, runComparison and the store do.
    std::optional<PrecisionCheck> precision;

    // Post-processing cost; summarize() fills it when any record was post-processed.
    std::optional<PostprocessSummary> postprocess;

    // Image input; summarize() fills it when any record carried images.
    std::optional<ImageSummary> images;
};

// O(R log R + T + S) for R records, T token times, S samples.
RunSummary summarize(const std::vector<RequestRecord>& records,
                     const std::vector<StatsSample>& samples, const Slo& slo = {});

// The post-processing figures of `records` (postprocess_metrics.cpp); unset when no Ok
// record was post-processed.
std::optional<PostprocessSummary> summarizePostprocess(const std::vector<RequestRecord>& records);

// The image figures of `records` (image_metrics.cpp); unset when none carried images.
std::optional<ImageSummary> summarizeImages(const std::vector<RequestRecord>& records);

// One metric over repeated runs: mean with a Student-t 95% confidence interval.
// n == 1 gives a zero-width interval; n == 0 all zeros. cv = sample std / |mean|
// (0 when every value is 0, +inf when the mean is 0 but values vary).
struct RepeatedMetric {
    double mean = 0;
    double ci95Low = 0;
    double ci95High = 0;
    double cv = 0;
    bool highVariance = false; // cv > kHighVarianceCv: warn that runs disagree
};
inline constexpr double kHighVarianceCv = 0.1;

RepeatedMetric repeated(const std::vector<double>& perRunValues);

// Two-sided 95% Student-t critical value for `df` degrees of freedom (df >= 1); exact
// table to 30, interpolated in 1/df beyond, 1.96 in the limit.
double studentT95(int64_t df);

// JSON shapes for reports and the run store. Undefined per-request metrics (negative in
// C++) are written as null.
nlohmann::ordered_json toJson(const Distribution& d);
nlohmann::ordered_json toJson(const RunSummary& s);
nlohmann::ordered_json toJson(const PostprocessSummary& p);
nlohmann::ordered_json toJson(const ImageSummary& s);
nlohmann::ordered_json toJson(const RepeatedMetric& m);
// The one serialiser of request records: compare --json, reports and the store's run
// documents (db/run_document.h, with token times) all write this shape, the workload
// index as "id".
nlohmann::ordered_json toJson(const RequestRecord& r, bool withTokenTimes = false);

} // namespace mb::lab
