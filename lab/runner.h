// Drives a workload against a target: closed or open loop, multi-turn order, warm-up, sampling.
#pragma once

#include "engine/sampler.h"
#include "lab/request_record.h"
#include "lab/run_sink.h"
#include "lab/target.h"
#include "lab/workload.h"
#include "plugins/chain.h"

#include <atomic>
#include <functional>
#include <vector>

namespace mb::lab {

struct RunProgress {
    int64_t done = 0;     // measured requests finished
    int64_t total = 0;    // measured requests in the workload
    double elapsedMs = 0; // since the measured start
};

struct RunOptions {
    ArrivalSpec arrival;              // Closed: keep `concurrency` in flight; else use each request's arrivalMs
    engine::SamplerParams sampling;   // the same for every request
    bool stopAtEos = true;
    double sampleIntervalMs = 100;    // how often the target's counters are sampled
    std::function<void(const RunProgress&)> onProgress; // on the caller's thread, after each submit and finish
    const std::atomic<bool>* cancel = nullptr;          // polled; in-flight requests are cancelled
    RunSink* sink = nullptr;          // when set, each measured request is written as it finishes
    int64_t candidateId = 0;          // the sink's candidate id for this run
    // Live views (the GUI). Called on the target's event thread for measured requests:
    // every engine event with the request's record updated by it (times relative to the
    // run's start, `id` = workload index), then the finished record once more.
    // They must be quick and must not call back into the runner.
    std::function<void(const RequestRecord& soFar, const engine::RequestEvent&)> onEvent;
    std::function<void(const RequestRecord&)> onRecord;
    // Each counter sample as it is taken, on the runner's sampling thread.
    std::function<void(const StatsSample&)> onSample;
    // The post-processing chain for measured requests (PRODUCT.md §11), run on a stage
    // thread per request (lab/postprocess_stage.h); null or empty: output is the raw text.
    // onEvent then sees each record with `output` as shown so far.
    const plugins::Chain* plugins = nullptr;
    std::string mode;                 // what plugins are told the candidate is: fast, regular, remote
};

struct RunResult {
    std::vector<RequestRecord> records; // measured requests that were submitted, in workload order
    std::vector<StatsSample> samples;   // prefix counters relative to the measured start
    bool cancelled = false;
    double warmupMs = 0;                // time spent on warm-up requests
};

// Runs on the calling thread (a sampling thread runs beside it). Warm-up requests go
// first, unrecorded, in closed loop; then the measured ones. A multi-turn request is
// issued only after the previous turn of its conversation finished. Never throws for
// request failures: they are records with their status.
RunResult runWorkload(Target& target, const std::vector<WorkloadRequest>& requests, const RunOptions& options);

} // namespace mb::lab
