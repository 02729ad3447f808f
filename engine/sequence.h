// One request inside a session's engine thread: its tokens, KV blocks, sampler and timing.
#pragma once

#include "engine/kv_cache.h"
#include "engine/sampler.h"
#include "engine/session.h"
#include "engine/tokenizer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

namespace mb::engine {

struct ModelVersion; // session_impl.h

// Owned by the engine thread; never shared.
struct Sequence {
    uint64_t id = 0;
    InferenceRequest request;      // prompt after truncation
    EventSink sink;
    int64_t submittedNs = 0;
    int64_t truncatedTokens = 0;
    int64_t imagesDropped = 0;
    // Per prompt position: the image row fed in place of the token, or nullptr; empty when the
    // prompt (after truncation) has no image. Points into request.images' rows.
    std::vector<const float*> inputRows;

    // Set at admission.
    std::shared_ptr<ModelVersion> version;
    std::vector<int32_t> tokens;   // prompt, then generated ids
    int64_t promptLen = 0;
    int64_t computed = 0;          // positions whose K/V are in the cache
    int64_t cachedTokens = 0;
    std::vector<int32_t> blockTable;
    std::unique_ptr<KvCache> ownCache; // per-request KV; null in pool mode
    uint64_t lastHash = 0;         // prefix-cache chain value of the last published block
    int64_t publishedBlocks = 0;
    uint64_t cacheEpoch = 0;       // the session's cache epoch at admission
    uint64_t kvBytes = 0;
    bool scheduled = false;
    bool done = false;             // Finished was emitted

    std::optional<Sampler> sampler;
    std::optional<StreamDecoder> decoder;
    std::vector<int32_t> generated;
    std::string text;
    // Tokens this iteration feeds (prefill chunk or the last sampled token).
    int64_t stepBegin = 0;
    int64_t stepCount = 0;
};

} // namespace mb::engine
