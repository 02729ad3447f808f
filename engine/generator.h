// One streamed generation: prefill the prompt as a batch, then decode token by token.
#pragma once

#include "engine/devices.h"
#include "engine/llama_model.h"
#include "engine/sampler.h"
#include "kernels/cpu/thread_pool.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mb::engine {

struct GenerateOptions {
    int32_t maxTokens = 128;   // generated tokens at most (> 0)
    SamplerParams sampling;
    bool stopAtEos = true;
    Device device; // resolved (engine::resolveDevice); the CPU by default
};

enum class StopReason { Eos, Length, Context, Cancelled };
std::string_view stopReasonName(StopReason r); // "eos", "length", "context", "cancelled"

struct GenerateResult {
    std::vector<int32_t> tokens; // generated ids (EOS excluded)
    std::string text;            // their text
    StopReason stop = StopReason::Length;
    double ttftMs = 0;       // start of generate() to the first sampled token
    double prefillMs = 0;    // the prompt's forward pass
    double decodeMs = 0;     // first token to last token
    double prefillTokS = 0;  // prompt tokens / prefill time
    double decodeTokS = 0;   // (generated - 1) / decode time; 0 with fewer than 2 tokens
    uint64_t kvBytes = 0;    // KV cache allocated for this generation
};

// Called for every generated token with the text it completed (whole UTF-8 characters,
// possibly empty). Return false to stop (reported as Cancelled). At the end, bytes held
// back by the stream decoder (an unfinished character) arrive once with id -1.
using TokenCallback = std::function<bool(int32_t id, std::string_view text)>;

// One part of a prompt: token ids, or input embedding rows (an image's, from engine/clip_model.h:
// imageTokens rows of the model's `dim` floats, row-major). Exactly one of the two is set.
struct PromptPart {
    std::vector<int32_t> tokens;
    std::vector<float> embeddings;
    int64_t positions(int64_t dim) const {
        return tokens.empty() ? static_cast<int64_t>(embeddings.size()) / dim : static_cast<int64_t>(tokens.size());
    }
};

// Throws std::invalid_argument with a one-line message for an empty prompt, a prompt
// that does not fit the model's context, or bad options. Runs on the calling thread
// using `pool` for the matrix products; `cancel` (optional) is polled every token.
GenerateResult generate(const LlamaModel& model, kernels::ThreadPool& pool,
                        std::span<const int32_t> prompt, const GenerateOptions& options,
                        const TokenCallback& onToken = {}, const std::atomic<bool>* cancel = nullptr);
// The same for a prompt of text and image parts, laid out in order (llava: system text, the
// image's rows, the user's text); the parts' positions count toward the context.
GenerateResult generateFromParts(const LlamaModel& model, kernels::ThreadPool& pool, std::span<const PromptPart> prompt,
                        const GenerateOptions& options, const TokenCallback& onToken = {},
                        const std::atomic<bool>* cancel = nullptr);

} // namespace mb::engine
