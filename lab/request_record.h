// What one request did, as the runner records it: counts, status and timestamps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mb::lab {

// Status of a finished request (PRODUCT.md §3).
enum class RequestStatus { Ok, Error, Cancelled, Rejected };
// "ok", "error", "cancelled", "rejected"
const char* requestStatusName(RequestStatus s);

// All times are milliseconds since the start of the run (steady clock), so records from
// one run are comparable. A time is negative when the event never happened (e.g. a
// rejected request has no scheduledMs, firstTokenMs or token times).
struct RequestRecord {
    uint64_t id = 0;                // index in the workload
    RequestStatus status = RequestStatus::Ok;
    std::string error;              // one line when status is Error or Rejected
    int64_t promptTokens = 0;       // after truncation
    int64_t cachedTokens = 0;       // prompt tokens served from the prefix cache
    int64_t truncatedTokens = 0;    // prompt tokens dropped by the fast-mode truncation policy
    int64_t outputTokens = 0;
    double submittedMs = -1;
    double scheduledMs = -1;        // first time the scheduler gave it compute
    double firstTokenMs = -1;
    double finishedMs = -1;
    std::vector<double> tokenTimesMs; // one per output token, increasing
    uint64_t kvBytesPeak = 0;       // KV bytes this request held at its peak
    std::vector<int32_t> tokens;    // generated ids
    std::string text;               // generated text, as the model produced it (raw_output)
    // Post-processing by the run's plugin chain (PRODUCT.md §11, docs/PLUGINS.md). Without
    // a chain `output` is `text` and the rest keep their defaults.
    bool postprocessed = false;         // a chain ran on this request
    std::string output;                 // what the user is shown: the chain's output
    std::string postprocessStatus;      // "" when the chain passed the whole output; else
                                        // "ended: REASON" (a plugin ended the response) or
                                        // "failed: MESSAGE" (a plugin broke: output stops there)
    double postprocessMs = 0;           // time spent inside the plugins, all calls and their set-up
    double postprocessStartMs = 0;      // of which setting them up (a script: taking its process)
    double postprocessMaxCallMs = 0;    // the slowest single call (one chunk, or the flush)
    int64_t postprocessCalls = 0;       // chunks passed in, plus the flush
    std::vector<double> outputTimesMs;  // when each non-empty piece of output was shown
    // Images (PRODUCT.md §3): the request's images, the prompt positions they fill after
    // truncation (counted in promptTokens), the images truncation dropped whole, and the
    // time the vision encoder and projector took for them (preprocessing included; part of
    // TTFT, before the prompt reaches the engine). encodeMs is 0 without images.
    int64_t images = 0;
    int64_t imageTokens = 0;
    int64_t imagesDropped = 0;
    double encodeMs = 0;

    // Derived metrics (PRODUCT.md §3); negative when undefined for this request.
    double queueMs() const;   // scheduled - submitted
    double prefillMs() const; // first token - scheduled: the prompt's compute (and any chunking waits)
    double ttftMs() const;    // first token - submitted
    double e2eMs() const;     // finished - submitted
    double tpotMs() const;    // (e2e - ttft) / (output_tokens - 1); needs >= 2 tokens
    // Post-processed output: the time its first piece was shown, minus the first token's
    // (what held-back text and plugin time add to TTFT); needs a chain and shown output.
    double extraTtftMs() const;
    // encodeMs / ttftMs: TTFT's share spent encoding images; needs images and a first token.
    double encodeShare() const;
};

// The engine's counters sampled during a run (the runner takes one every ~100 ms).
struct StatsSample {
    double timeMs = 0;
    uint64_t prefixQueries = 0; // monotonic: prompt tokens looked up in the prefix cache
    uint64_t prefixHits = 0;    // monotonic: prompt tokens found there
    uint64_t kvBytesInUse = 0;
    int64_t running = 0;
    int64_t waiting = 0;
};

} // namespace mb::lab
