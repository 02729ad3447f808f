// A serving session: one model under one profile, an engine thread, a queue, streamed events.
//
// This is the API the CLI, the lab runner and the GUI all use. submit() is thread-safe
// and returns at once; every request then produces events on the session's engine
// thread: Scheduled (first compute), Token (one per output token, with the text it
// completed) and exactly one Finished. Event sinks must be quick and must not call back
// into the session except cancel().
#pragma once

#include "engine/devices.h"
#include "engine/generator.h"
#include "engine/model_config.h"
#include "engine/profile.h"
#include "engine/prompt_images.h"
#include "engine/sampler.h"
#include "engine/tokenizer.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mb::engine {

enum class FinishStatus { Ok, Error, Cancelled, Rejected };
const char* finishStatusName(FinishStatus s); // "ok", "error", "cancelled", "rejected"

// A reload the profile does not allow now (fast mode during its warm-up window), or a
// new model that cannot replace the current one.
class ReloadError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct InferenceRequest {
    std::vector<int32_t> prompt; // token ids, BOS included when wanted
    // Image embeddings at prompt positions (sorted, non-overlapping, inside the prompt); they
    // count toward the context. submit() writes their placeholder ids (prompt_images.h) into
    // `prompt` there, whatever the caller put. fromParts() builds both from text and image parts.
    std::vector<PromptImage> images;
    int32_t maxTokens = 128;
    SamplerParams sampling;
    bool stopAtEos = true;
};

enum class EventKind { Scheduled, Token, Finished };

struct RequestEvent {
    uint64_t id = 0;
    EventKind kind = EventKind::Token;
    int64_t timeNs = 0;      // std::chrono::steady_clock, nanoseconds since its epoch
    int32_t token = -1;      // Token: the generated id
    std::string text;        // Token: text this token completed; Finished: all generated text
    // Finished only:
    FinishStatus status = FinishStatus::Ok;
    StopReason stop = StopReason::Length;
    std::string error;       // one line for Error/Rejected
    int64_t promptTokens = 0;    // after truncation
    int64_t cachedTokens = 0;    // served from the prefix cache
    int64_t truncatedTokens = 0; // positions dropped by the truncation policy (image positions included)
    int64_t imagesDropped = 0;   // images the truncation dropped, each whole (it never cuts one)
    int64_t imageTokens = 0;     // image positions in the prompt after truncation
    int64_t outputTokens = 0;
    uint64_t kvBytesPeak = 0;
    uint64_t modelVersion = 0;   // which loaded model served it (1 = the first)
    std::vector<int32_t> tokens; // generated ids
    // What a remote server reported of its own timing (llama.cpp's `timings`): prompt
    // evaluation and the mean time per generated token, in ms; -1 where not reported.
    double serverPromptMs = -1;
    double serverPerTokenMs = -1;
    // Images encoded before the request reached the session (the lab's ImageTarget): how
    // many, and the time the vision encoder and projector took for them, preprocessing
    // included, in ms; -1 when no image was encoded for it.
    int64_t images = 0;
    double encodeMs = -1;
};
using EventSink = std::function<void(const RequestEvent&)>;

struct SessionOptions {
    int threads = 1;
    // Where the forward pass runs; resolve it first (engine::resolveDevice) so a missing GPU
    // becomes a CPU session with a note rather than an error here.
    Device device;
};

// A consistent snapshot of the session's counters.
struct SessionStats {
    uint64_t prefixQueries = 0; // monotonic, tokens looked up in the prefix cache
    uint64_t prefixHits = 0;    // monotonic, tokens found there
    uint64_t kvBytesInUse = 0;  // blocks holding K/V (referenced or cached)
    uint64_t kvBytesCapacity = 0; // the pool's size (pool mode); in use (per-request mode)
    bool kvPooled = false;        // a fixed KV pool: kvBytesCapacity is its size
    int64_t running = 0;
    int64_t waiting = 0;
    int64_t finished = 0;
    bool modelLoaded = false;
    bool warmingUp = false;     // the warm-up window is open
    double warmupMs = 0;        // the current model version's warm-up: preload + warm pass + all
                                // priming so far (after a reload: its re-priming)
    double loadMs = 0;          // last model load
    uint64_t modelVersion = 0;
    uint64_t weightBytes = 0;
};

class Session {
public:
    // Opens the model file's header and tokenizer now (throws GgufError/ModelError on a bad
    // file) and starts the engine thread. Preload profiles load the weights there at once
    // and run the warm-up; on-demand profiles load them when the first request arrives.
    static std::unique_ptr<Session> start(const std::string& modelPath, const Profile& profile,
                                          const SessionOptions& options = {});
    virtual ~Session() = default;

    virtual const Profile& profile() const = 0;
    virtual const Tokenizer& tokenizer() const = 0;
    // The header of the model the session started with. A reload keeps its vocabulary,
    // layers and KV width; only the context length may change (see contextLimit()).
    virtual const ModelConfig& config() const = 0;
    // Input tokens accepted: min(profile max_context, current model's context - 1).
    virtual int64_t contextLimit() const = 0;
    // What a prompt over contextLimit() is told under Truncation::Reject: "the prompt has
    // <tokens> tokens; this profile accepts at most ...". `tokens` is text, so a front end
    // that stopped counting early can say "more than 511" or "at least 9000".
    virtual std::string promptOverContext(const std::string& tokens) const = 0;

    // Queues a request; returns its id (> 0). A request that cannot be served (empty,
    // bad images, over the context limit under `reject`, bigger than the KV pool, queue full) gets
    // its Finished{Rejected} event before submit returns.
    virtual uint64_t submit(InferenceRequest request, EventSink sink) = 0;
    // Cancels a waiting or running request (its Finished{Cancelled} follows); false if
    // the id is unknown or already finished.
    virtual bool cancel(uint64_t id) = 0;

    // Fast mode warm-up: prefills each prompt so its full blocks enter the prefix cache.
    // The warm-up window is open until it is done. Asynchronous; see waitIdle().
    virtual void primePrefixes(std::vector<std::vector<int32_t>> prompts) = 0;
    // The same for prompts with images (`prompt` and `images` as submit() takes them; the
    // other fields are ignored): the image positions are keyed by the images' content, so a
    // later request with the same image and text hits what this primed. A prompt whose
    // images do not fit it (validateImages) is skipped, as is any on a backend that takes
    // no input embeddings (CUDA, for now).
    virtual void primePrompts(std::vector<InferenceRequest> prompts) = 0;
    // Replaces the model. `hot`: the new version loads beside the old one, new requests
    // go to it and in-flight ones finish on the old. `after_warmup`: refused with
    // ReloadError while the warm-up window is open; otherwise swapped when no request is
    // running, the prefix cache dropped and warmed again. Blocks until the swap is queued.
    // The new model must have the session's vocabulary, layers and KV width, and under a
    // hot reload with a KV pool the same pool size (ReloadError otherwise: another shape
    // needs a new session). A successful swap also clears an earlier load or warm-up failure;
    // a queued request longer than a new, shorter context fails at admission.
    virtual void reload(const std::string& modelPath) = 0;
    // Drops every cached prefix (blocks in use are kept).
    virtual void flushCache() = 0;

    virtual SessionStats stats() const = 0;
    // Blocks until nothing is waiting or running and no warm-up or reload is pending.
    virtual void waitIdle() = 0;
};

} // namespace mb::engine
