// The generate loop: batch prefill, then sample/forward one token at a time with streaming text.
#include "engine/generator.h"

#include "engine/forward.h"
#include "engine/kv_cache.h"

#include <chrono>
#include <numeric>
#include <stdexcept>

namespace mb::engine {

namespace {
using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t0, Clock::time_point t1) {
    return std::chrono::duration<double, std::milli>(t1 - t0).count();
}
constexpr int64_t kBlockSize = 16;
} // namespace

std::string_view stopReasonName(StopReason r) {
    switch (r) {
    case StopReason::Eos: return "eos";
    case StopReason::Length: return "length";
    case StopReason::Context: return "context";
    case StopReason::Cancelled: return "cancelled";
    }
    return "?";
}

GenerateResult generate(const LlamaModel& model, kernels::ThreadPool& pool, std::span<const int32_t> prompt,
                        const GenerateOptions& options, const TokenCallback& onToken,
                        const std::atomic<bool>* cancel) {
    const PromptPart part{std::vector<int32_t>(prompt.begin(), prompt.end()), {}};
    return generateFromParts(model, pool, std::span(&part, 1), options, onToken, cancel);
}

GenerateResult generateFromParts(const LlamaModel& model, kernels::ThreadPool& pool, std::span<const PromptPart> parts,
                        const GenerateOptions& options, const TokenCallback& onToken,
                        const std::atomic<bool>* cancel) {
    const auto start = Clock::now();
    const ModelConfig& c = model.config();
    int64_t promptLen = 0;
    std::vector<int32_t> history; // the prompt's token ids (image positions have none)
    for (const PromptPart& p : parts) {
        if (p.tokens.empty() == p.embeddings.empty())
            throw std::invalid_argument("a prompt part holds token ids or embedding rows, one of the two");
        if (!p.embeddings.empty() && p.embeddings.size() % static_cast<size_t>(c.dim) != 0)
            throw std::invalid_argument("image embeddings of " + std::to_string(p.embeddings.size()) +
                                        " floats are not whole rows of the model's width " + std::to_string(c.dim));
        promptLen += p.positions(c.dim);
        history.insert(history.end(), p.tokens.begin(), p.tokens.end());
    }
    if (promptLen == 0) throw std::invalid_argument("the prompt is empty (no tokens)");
    if (options.maxTokens <= 0) throw std::invalid_argument("max tokens must be > 0");
    if (const std::string why = options.sampling.validate(); !why.empty()) throw std::invalid_argument(why);
    if (promptLen >= c.contextLength)
        throw std::invalid_argument("the prompt has " + std::to_string(promptLen) +
                                    " tokens but the model's context is " + std::to_string(c.contextLength) +
                                    " tokens (at least one must remain for output)");

    // KV sized to this request: prompt plus the tokens it may generate, within the context.
    const int64_t positions = std::min<int64_t>(c.contextLength, promptLen + options.maxTokens);
    const auto forward = makeForwardBackend(model, pool, {.maxChunk = std::min<int64_t>(256, promptLen)}, options.device);
    KvCache cache(c, blocksFor(positions, kBlockSize), kBlockSize, forward->kvStorage(),
                  kvTypeFor(model.precision(), forward->kvStorage()));
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);

    Sampler sampler(options.sampling);
    StreamDecoder decoder(model.tokenizer(), /*afterPrompt=*/true);
    std::vector<float> logits(static_cast<size_t>(c.vocabSize));
    GenerateResult result;
    result.kvBytes = cache.bytes();

    const auto prefillStart = Clock::now();
    int64_t at = 0;
    for (const PromptPart& p : parts) {
        if (p.tokens.empty()) forward->runEmbeddings(p.embeddings, at, cache, table, logits.data());
        else forward->runSequence(p.tokens, at, cache, table, logits.data());
        at += p.positions(c.dim);
    }
    const auto prefillEnd = Clock::now();
    result.prefillMs = msSince(prefillStart, prefillEnd);
    result.prefillTokS = result.prefillMs > 0 ? 1000.0 * static_cast<double>(promptLen) / result.prefillMs : 0;

    Clock::time_point firstToken{}, lastToken{};
    int64_t pos = promptLen;
    for (;;) {
        const int32_t id = sampler.sample(logits, history);
        const auto now = Clock::now();
        if (result.tokens.empty()) { // only true in the first iteration
            firstToken = now;
            result.ttftMs = msSince(start, now);
        }
        if (options.stopAtEos && id == model.tokenizer().eos()) {
            result.stop = StopReason::Eos;
            break;
        }
        lastToken = now;
        result.tokens.push_back(id);
        history.push_back(id);
        const std::string piece = decoder.push(id);
        result.text += piece;
        if (onToken && !onToken(id, piece)) {
            result.stop = StopReason::Cancelled;
            break;
        }
        if (cancel && cancel->load(std::memory_order_relaxed)) {
            result.stop = StopReason::Cancelled;
            break;
        }
        if (static_cast<int32_t>(result.tokens.size()) >= options.maxTokens) {
            result.stop = StopReason::Length;
            break;
        }
        if (pos >= c.contextLength) {
            result.stop = StopReason::Context;
            break;
        }
        const int32_t one[1] = {id};
        forward->runSequence(one, pos, cache, table, logits.data());
        ++pos;
    }
    const std::string tail = decoder.flush();
    result.text += tail;
    if (onToken && !tail.empty()) onToken(-1, tail);
    if (result.tokens.size() >= 2) {
        result.decodeMs = msSince(firstToken, lastToken);
        result.decodeTokS =
            result.decodeMs > 0 ? 1000.0 * static_cast<double>(result.tokens.size() - 1) / result.decodeMs : 0;
    }
    return result;
}

} // namespace mb::engine
