// Running two (or more) candidates on the identical request list and collecting their results.
#pragma once

#include "engine/profile.h"
#include "lab/metrics.h"
#include "lab/precision_check.h"
#include "lab/runner.h"
#include "lab/workload.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mb::lab {

// A candidate: a model file under a profile on the embedded engine, or (when `remote` is
// set) an OpenAI-compatible server ("remote:http://HOST:PORT[/v1][#MODEL]").
struct Candidate {
    std::string label;     // "a", "b"
    std::string modelPath; // embedded: the GGUF file; remote: ignored
    engine::Profile profile;
    int threads = 1;
    engine::Device device; // embedded: resolved (engine::resolveDevice)
    std::string remote;    // non-empty: a remote target (lab/remote_target.h)
    std::string apiKeyEnv; // remote: the environment variable holding its API key
    std::string mmprojPath; // embedded: the vision encoder + projector (llava mmproj GGUF) for
                            // requests with images (lab/image_target.h); empty: none
    bool isRemote() const { return !remote.empty(); }
    // This candidate's sampling; unset: ComparisonOptions::run.sampling (the same for all).
    std::optional<engine::SamplerParams> sampling;
    // Its output plugin chain (PRODUCT.md §11); null or empty: none.
    std::shared_ptr<const plugins::Chain> plugins;
    bool hasPlugins() const { return plugins && !plugins->empty(); }
    // What plugins are told this candidate is: "remote", else the profile's name.
    std::string mode() const { return isRemote() ? "remote" : profile.name; }
};

// One line saying what a candidate runs, e.g. "embedded fast on cpu, 2 threads: mixed
// precision (K/V F16), batching off, prefix cache on" or "remote http://host:8000/v1"; the
// precision and batching are what a throughput comparison of two modes mostly depends on.
std::string describeCandidate(const Candidate& c);

struct CandidateResult {
    Candidate candidate;
    int64_t storeId = 0;        // the sink's candidate id (0 without a sink)
    RunResult run;
    RunSummary summary;
    engine::SessionStats stats; // at the end of the run
    double startupMs = 0;       // Session::start until the target was idle (load + warm-up for preload)
    std::string description;
};

struct ComparisonOptions {
    RunOptions run;
    // Alternate the candidates over `slices` parts of the workload on long-lived sessions
    // instead of running each whole workload in turn; spreads machine drift over both.
    bool interleave = false;
    int slices = 4;
    // Unrecorded requests issued to every candidate before measuring (e.g. one per
    // shared-prefix group: the fast profile's prefix priming through real requests).
    std::vector<WorkloadRequest> primers;
    // Run the candidates at the same time, each on its own thread (a visual race: the
    // playground's "at once"); otherwise one after the other (fair timing). Not with
    // `interleave`.
    bool concurrent = false;
    // Called with the candidate's label and its progress.
    std::function<void(const std::string&, const RunProgress&)> onProgress;
    // Live views, as RunOptions::onEvent/onRecord/onSample, with the candidate's label.
    // With `concurrent` they are called from both candidates' threads at once.
    std::function<void(const std::string&, const RequestRecord&, const engine::RequestEvent&)> onEvent;
    std::function<void(const std::string&, const RequestRecord&)> onRecord;
    std::function<void(const std::string&, const StatsSample&)> onSample;
    Slo slo;
    // Precision A/B after the timed run (precision.prompts > 0): each embedded candidate's
    // precision against its model file in F32, on the first measured prompts; the figures
    // land in the candidate's summary (RunSummary::precision) and so in the store.
    PrecisionCheckOptions precision;
    // When set, the run is recorded as it happens: beginRun, one candidate per side,
    // every request as it finishes, then summaries and the final status.
    RunSink* sink = nullptr;
    RunInfo runInfo;
};

// The parts `interleave` alternates the candidates over: `slices` runs of consecutive
// arrivals (a multi-turn conversation stays whole in one part), each part's arrival times
// shifted back by the previous part's last arrival, so an open loop keeps its offered rate
// inside every part and the parts' spans add up to the workload's.
// Parts may be empty when there are fewer units (requests or conversations) than slices.
std::vector<std::vector<WorkloadRequest>> interleaveSlices(const std::vector<WorkloadRequest>& measured, int slices);

// The prompts of `requests` cut to BOS + `prefixTokens`, one per shared-prefix group,
// each asking for one token: a cheap way to warm a prefix cache with a workload's prefixes.
std::vector<WorkloadRequest> prefixPrimers(const std::vector<WorkloadRequest>& requests, int64_t prefixTokens);

// A token range for synthetic prompts: the vocabulary's ordinary (Normal) tokens.
TokenSpace tokenSpaceFor(const engine::Tokenizer& tokenizer);

// Each candidate gets a fresh session and the identical request list. Throws what
// Session::start throws (bad model file, bad profile); with a sink the run is then
// marked failed. The sink's run id (0 without one) is returned through `runId`.
std::vector<CandidateResult> runComparison(const std::vector<Candidate>& candidates,
                                           const std::vector<WorkloadRequest>& requests,
                                           const ComparisonOptions& options, int64_t* runId = nullptr);

// Why `candidates` cannot run `requests` (images for a candidate without an mmproj, or a
// remote one); empty when they can. runComparison throws std::invalid_argument with it.
std::string imagesRefused(const std::vector<Candidate>& candidates, const std::vector<WorkloadRequest>& requests);

// What the store records about a candidate (file size, sha256 of the model, shapes, profile).
CandidateInfo candidateInfo(const Candidate& c, bool hashModel);

// {"label", "profile", "target", "startup_ms", "warmup_ms", "summary", "requests"}.
nlohmann::ordered_json toJson(const CandidateResult& r, bool withTokenTimes = false);

} // namespace mb::lab
