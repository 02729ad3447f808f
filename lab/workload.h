// Seeded, reproducible workloads (PRODUCT.md §4): synthetic token-id prompts, arrivals, files.
#pragma once

#include "engine/chat_template.h"
#include "lab/rng.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mb::lab {

// A distribution of token counts. Draws are rounded to the nearest integer, then clamped
// to [min, max].
struct LengthDist {
    enum class Kind { Fixed, Uniform, Normal, LogNormal };
    Kind kind = Kind::Fixed;
    // Fixed: a. Uniform: integers in [a, b], each equally likely. Normal: mean a, std b.
    // LogNormal: a and b are the MEAN and STD of the resulting lengths (not of the
    // underlying normal), converted to σ² = ln(1 + b²/a²), μ = ln a − σ²/2.
    double a = 0, b = 0;
    int64_t min = 1, max = int64_t{1} << 20;

    int64_t sample(Rng& rng) const;
    // The largest length a draw is expected to reach: a (fixed), b (uniform), a + 6 b
    // (normal, log-normal), within [min, max].
    double upperBound() const;
    // Empty when the parameters make sense, else a one-line reason naming the field.
    std::string validate() const;
};

// An image a request carries (issue 25, PRODUCT.md §4): a PNG or JPEG file, or a synthetic
// image drawn from a seed. The target encodes it with its candidate's mmproj and places its
// tokens right after the prompt's first token (BOS), images in order: llava's layout puts
// the image before the question.
struct WorkloadImage {
    std::string path;          // a file (absolute, or relative to the working folder); empty: synthetic
    int32_t width = 0;         // synthetic: size in pixels
    int32_t height = 0;
    uint64_t seed = 0;         // synthetic: same size and seed, same pixels (syntheticImage)
    bool synthetic() const { return path.empty(); }
    // "FILE" or "synthetic WxH #SEED", for messages.
    std::string describe() const;
    bool operator==(const WorkloadImage&) const = default;
};

// One request to issue. Prompts are token ids; the target decodes nothing.
struct WorkloadRequest {
    uint64_t index = 0;          // position in buildWorkload's result (warm-ups included)
    std::vector<int32_t> prompt; // token ids, BOS first
    int32_t maxTokens = 0;
    double arrivalMs = 0;      // open loop: issue at this time since the measured start;
                               // multi-turn: the earliest time, see `turn`
    int64_t conversation = -1; // multi-turn: which conversation, else -1
    int32_t turn = 0;          // multi-turn: issue turn t only after turn t−1 finished
    int64_t group = -1;        // shared-prefix: which group, else -1
    bool warmup = false;       // issued before measuring, never recorded
    std::vector<WorkloadImage> images; // in order, after the first prompt token; their
                                       // tokens count toward the context
};

// Which ids synthetic prompts use: BOS (none when negative), then ids drawn uniformly from
// [firstId, endId). The caller picks a range of ordinary tokens (no control tokens).
struct TokenSpace {
    int32_t bos = 1;
    int32_t firstId = 0;
    int32_t endId = 0;
};

struct ArrivalSpec {
    enum class Kind { Closed, Poisson, Gamma, Ramp };
    Kind kind = Kind::Closed;
    int32_t concurrency = 1; // closed loop: requests kept in flight
    double rate = 1;         // open loop: requests per second (Ramp: the final rate)
    double burstiness = 1;   // gamma shape of the intervals; 1 = Poisson, < 1 burstier
    double rampSeconds = 0;  // Ramp: rate rises linearly from 0 to `rate`, then stays
};

// Arrival times in ms since the measured start, increasing, the first at 0.
// Closed: all 0 (the runner keeps `concurrency` requests in flight). Poisson: exponential
// intervals of mean 1/rate. Gamma: gamma intervals of shape `burstiness` and mean 1/rate
// (coefficient of variation 1/√burstiness). Ramp: the same renewal draws (exponential, or
// gamma when burstiness != 1) time-warped through the cumulative rate Λ(t) = ∫λ, with
// λ(t) = rate·min(t/T, 1), so arrivals thin out near the start and settle at `rate`.
std::vector<double> arrivalTimesMs(const ArrivalSpec& spec, size_t n, Rng& rng);

struct WorkloadSpec {
    std::string name;
    int64_t requests = 64; // plain workloads; ignored for shared-prefix and multi-turn
    LengthDist input;      // prompt tokens after BOS (multi-turn: the first user turn)
    LengthDist output;     // maxTokens of every request
    struct SharedPrefix {
        int32_t groups = 0, perGroup = 0; // groups > 0 switches this shape on
        int64_t prefixTokens = 0, suffixTokens = 0;
    } sharedPrefix;
    struct MultiTurn {
        int32_t conversations = 0, turns = 0; // conversations > 0 switches this shape on
        LengthDist userTokens;                // user part of turns after the first
    } multiTurn;
    ArrivalSpec arrival;
    int32_t warmupRequests = 0;
    uint64_t seed = 0;
    // Synthetic images (perRequest > 0 switches them on): every request carries perRequest
    // images of width x height px. Images belong to a request (plain), a group
    // (shared-prefix: its requests share them) or a conversation (multi-turn: every turn
    // repeats them); `distinct` > 0 folds those owners onto that many different image sets,
    // so distinct = 1 gives every request the same images (the prefix cache's case). Warm-ups
    // get images of their own, never a measured one.
    struct Images {
        int32_t perRequest = 0;
        int32_t width = 336, height = 336;
        int32_t distinct = 0;
        static constexpr int32_t kMaxPerRequest = 64;
    } images;

    // Empty when valid, else a one-line reason naming the JSON key (e.g. "arrival.rate").
    // Includes a bound on the prompts' total size (kMaxPromptTokens).
    std::string validate() const;
    // Prompt ids the built requests can hold at most (warm-ups included; normal and
    // log-normal lengths counted at mean + 6 std, within min and max).
    double promptTokensBound() const;
    static constexpr double kMaxPromptTokens = double(1 << 28);
};

// Builds the requests: `warmupRequests` warm-ups first (warmup = true), then the measured
// ones, `index` = position. Same spec and token space → identical requests.
// - Plain: `requests` prompts of BOS + input.sample() ids.
// - Shared-prefix: groups × perGroup requests; each group has its own random prefix of
//   prefixTokens (after BOS), each request a random suffix of suffixTokens. Requests are
//   ordered round-robin across groups (g0r0, g1r0, ..., g0r1, ...) so that caching has to
//   survive interleaving. Leading tokens of different groups, and first suffix tokens
//   within a group, are made distinct, so the shared part is exactly BOS + prefix.
// - Multi-turn: conversations × turns; turn t's prompt = turn t−1's prompt + a synthetic
//   assistant reply of turn t−1's maxTokens ids + userTokens new ids. Ordered turn-major
//   (c0t0, c1t0, ..., c0t1, ...); every turn carries its conversation's arrival time.
// Warm-ups are plain prompts drawn from `input` (shared-prefix: prefix+suffix long) from
// their own stream: they warm the engine, not the prefix cache, and adding them does not
// change the measured requests. Throws std::invalid_argument when the spec or the token
// space is invalid.
std::vector<WorkloadRequest> buildWorkload(const WorkloadSpec& spec, const TokenSpace& tokens);


// The measured requests `spec` runs (warm-ups not counted): groups × perGroup for
// shared-prefix, conversations × turns for multi-turn, else `requests`. The one count that
// compare, the GUI's progress and designer, and buildWorkload agree on.
int64_t measuredRequestCount(const WorkloadSpec& spec);

// The spec a prompt file runs as: name "file:" + `path`, `requests` = the prompts, input a
// uniform range over the file's own prompt lengths, output fixed at `maxTokens`, a closed
// loop of 1, seed 0 and no warm-ups (callers then set arrivals, seed and warm-ups).
// Precondition: `prompts` is not empty.
WorkloadSpec promptFileSpec(const std::string& path, const std::vector<WorkloadRequest>& prompts, int32_t maxTokens);

// A prompt file's requests as they run: `spec.warmupRequests` warm-ups first (the file's
// prompts again from the first, warmup = true, arriving at 0), then `prompts` once each in
// file order with spec.arrival's times drawn from Rng(spec.seed); `index` = position. The
// same spec and file give the same requests in compare, migrate's replay and the GUI.
// Precondition: `prompts` is not empty.
std::vector<WorkloadRequest> promptFileWorkload(const WorkloadSpec& spec, std::vector<WorkloadRequest> prompts);

// "shared-prefix", "chat", "long-context", "multi-turn"; nullopt for other names.
std::optional<WorkloadSpec> builtinWorkload(const std::string& name);
std::vector<std::string> builtinWorkloadNames();

// Prompts from a file, never a workload spec (parseWorkloadSpec reads those). The format
// is the file's extension, in any case: ".jsonl" is JSONL, ".txt" plain text; any other
// name is JSONL when its first non-blank character is '{', else plain text (the
// prompt-file format's own rule; name a plain-text file whose first prompt starts with '{'
// ".txt"). JSONL: one object a line, {"prompt": "...", "max_tokens": N} or {"messages":
// [{"role", "content"}...], "max_tokens": N}; messages become `chat`'s ids when given
// (engine::chatPrompt with the model's template family), else "role: content\n" lines for
// `tokenize`; "images": ["a.png", ...] lists PNG or JPEG files the request carries
// (WorkloadImage, relative paths from the prompt file's folder; at most
// WorkloadSpec::Images::kMaxPerRequest); other keys are ignored; max_tokens defaults to `defaultMaxTokens`. Plain
// text: one prompt per non-blank line (a trailing \r is dropped). `tokenize` turns text
// into ids (add BOS there if the target wants it).
// Throws std::runtime_error("FILE:LINE: reason") for malformed JSON, a missing or empty
// prompt, a non-positive max_tokens, a line over kMaxPromptLineBytes (refused before it is
// read whole), or a tokenizer failure (running out of memory included); "FILE: cannot
// open" when unreadable. An empty file gives no requests. The file is read a block at a
// time: memory holds one line, not the file.
// The longest line a prompt file may have: the server's request-body limit, far above any
// context (a 131,072-token prompt is well under 1 MiB).
inline constexpr size_t kMaxPromptLineBytes = size_t{16} << 20;
using ChatTokenize = std::function<std::vector<int32_t>(const std::vector<engine::ChatMessage>&)>;
// engine::chatPrompt with `tokenizer` (which must outlive the result) and the family.
inline ChatTokenize chatTokenizeFor(const engine::Tokenizer& tokenizer, engine::ChatFamily family) {
    return [&tokenizer, family](const std::vector<engine::ChatMessage>& m) {
        return engine::chatPrompt(tokenizer, family, m);
    };
}
std::vector<WorkloadRequest>
loadPromptFile(const std::string& path,
               const std::function<std::vector<int32_t>(const std::string&)>& tokenize,
               int32_t defaultMaxTokens, const ChatTokenize& chat = {});

// Workload files. Every key is optional (defaults as above); unknown keys and impossible
// values throw std::runtime_error naming the key ("workload spec: arrival.rate: ...").
// Keys: name, requests, input {kind: fixed|uniform|normal|lognormal, a, b, min, max},
// output {...}, shared_prefix {groups, per_group, prefix_tokens, suffix_tokens},
// multi_turn {conversations, turns, user_tokens {...}}, arrival {kind:
// closed|poisson|gamma|ramp, concurrency, rate, burstiness, ramp_seconds},
// warmup_requests, seed, images {per_request, width, height, distinct}.
WorkloadSpec parseWorkloadSpec(const nlohmann::json& j);
nlohmann::ordered_json toJson(const WorkloadSpec& spec); // all keys; parses back equal

const char* lengthKindName(LengthDist::Kind k);   // "fixed", "uniform", ...
const char* arrivalKindName(ArrivalSpec::Kind k); // "closed", "poisson", ...

} // namespace mb::lab
