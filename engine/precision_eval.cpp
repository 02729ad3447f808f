// Perplexity and reference-vs-candidate agreement/KL, from batched logits of every position.
#include "engine/precision_eval.h"

#include "engine/forward.h"
#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace mb::engine {

namespace {

// log-softmax of one row, in double.
void logSoftmax(std::span<const float> logits, std::vector<double>& out) {
    out.resize(logits.size());
    const double mx = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (float l : logits) sum += std::exp(static_cast<double>(l) - mx);
    const double lse = mx + std::log(sum);
    for (size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<double>(logits[i]) - lse;
}

// Sum of -log p(tokens[i + 1]) over rows i of `logits` (rows, vocab); adds to `nll`.
void addNll(std::span<const float> logits, std::span<const int32_t> tokens, int64_t vocab, double& nll,
            int64_t& count) {
    std::vector<double> lp;
    for (size_t i = 0; i + 1 < tokens.size(); ++i) {
        logSoftmax(logits.subspan(i * static_cast<size_t>(vocab), static_cast<size_t>(vocab)), lp);
        nll -= lp[static_cast<size_t>(tokens[i + 1])];
        ++count;
    }
}

std::vector<int32_t> greedyContinuation(const LlamaModel& model, kernels::ThreadPool& pool,
                                        std::span<const int32_t> prompt, int64_t genTokens) {
    const ModelConfig& c = model.config();
    const int64_t bs = 16, n = static_cast<int64_t>(prompt.size());
    KvCache cache(c, blocksFor(n + genTokens, bs), bs, KvStorage::Host, kvTypeFor(model.precision(), KvStorage::Host));
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);
    Forward forward(model, pool, {.maxChunk = std::min<int64_t>(256, n)});
    std::vector<float> logits(static_cast<size_t>(c.vocabSize));
    forward.runSequence(prompt, 0, cache, table, logits.data());
    std::vector<int32_t> out;
    for (int64_t i = 0; i < genTokens; ++i) {
        out.push_back(argmax(logits));
        if (i + 1 < genTokens) forward.runSequence(std::span(&out.back(), 1), n + i, cache, table, logits.data());
    }
    return out;
}

} // namespace

std::vector<float> allLogits(const LlamaModel& model, kernels::ThreadPool& pool, std::span<const int32_t> tokens) {
    const ModelConfig& c = model.config();
    const auto n = static_cast<int64_t>(tokens.size());
    if (n < 1) throw std::invalid_argument("no tokens to evaluate");
    if (n > c.contextLength)
        throw std::invalid_argument("sequence of " + std::to_string(n) + " tokens exceeds the model's context of " +
                                    std::to_string(c.contextLength));
    const int64_t bs = 16;
    // The cache type the precision is served with (F16 for mixed and f16), so the comparison
    // measures what a session computes.
    KvCache cache(c, blocksFor(n, bs), bs, KvStorage::Host, kvTypeFor(model.precision(), KvStorage::Host));
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);
    std::vector<int64_t> positions(static_cast<size_t>(n));
    std::iota(positions.begin(), positions.end(), int64_t{0});
    const std::vector<int32_t> seqIds(static_cast<size_t>(n), 0);
    const std::vector<uint8_t> want(static_cast<size_t>(n), 1);
    KvCache* const caches[1] = {&cache};
    const std::span<const int32_t> tables[1] = {table};
    Forward forward(model, pool, {.maxChunk = std::min<int64_t>(256, n)});
    std::vector<float> logits(static_cast<size_t>(n * c.vocabSize));
    forward.run({tokens, positions, seqIds, caches, tables, want}, logits.data());
    return logits;
}

PerplexityResult perplexityDetail(const LlamaModel& model, kernels::ThreadPool& pool,
                                  std::span<const int32_t> tokens, int64_t context) {
    if (tokens.size() < 2) throw std::invalid_argument("perplexity needs at least 2 tokens");
    if (context < 2 || context > model.config().contextLength)
        throw std::invalid_argument("context must be between 2 and the model's " +
                                    std::to_string(model.config().contextLength) + " tokens, not " +
                                    std::to_string(context));
    const int32_t bos = model.tokenizer().bos();
    const bool withBos = bos >= 0 && tokens[0] == bos;
    // With BOS: every window is BOS + up to context-1 of the remaining tokens.
    const std::span<const int32_t> rest = withBos ? tokens.subspan(1) : tokens;
    const auto step = static_cast<size_t>(withBos ? context - 1 : context);
    const int64_t vocab = model.config().vocabSize;
    double nll = 0;
    PerplexityResult r;
    std::vector<int32_t> window;
    for (size_t begin = 0; begin < rest.size(); begin += step) {
        window.clear();
        if (withBos) window.push_back(bos);
        const size_t end = std::min(rest.size(), begin + step);
        window.insert(window.end(), rest.begin() + static_cast<std::ptrdiff_t>(begin),
                      rest.begin() + static_cast<std::ptrdiff_t>(end));
        if (window.size() < 2) continue; // a lone trailing token has nothing to be predicted from
        const std::vector<float> logits = allLogits(model, pool, window);
        addNll(logits, window, vocab, nll, r.predicted);
        ++r.windows;
    }
    r.perplexity = std::exp(nll / static_cast<double>(r.predicted));
    return r;
}

double perplexity(const LlamaModel& model, kernels::ThreadPool& pool, std::span<const int32_t> tokens,
                  int64_t context) {
    return perplexityDetail(model, pool, tokens, context).perplexity;
}

PrecisionComparison comparePrecision(const LlamaModel& reference, const LlamaModel& candidate,
                                     kernels::ThreadPool& pool, const std::vector<std::vector<int32_t>>& prompts,
                                     int64_t genTokens, const PrecisionProgress& onPrompt) {
    const int64_t vocab = reference.config().vocabSize;
    if (candidate.config().vocabSize != vocab)
        throw std::invalid_argument("vocabulary sizes differ: reference " + std::to_string(vocab) +
                                    ", candidate " + std::to_string(candidate.config().vocabSize));
    if (genTokens < 1) throw std::invalid_argument("generated tokens must be at least 1");
    if (prompts.empty()) throw std::invalid_argument("no prompts");
    const int64_t maxCtx = std::min(reference.config().contextLength, candidate.config().contextLength);
    PrecisionComparison r;
    int64_t agree = 0, predicted = 0;
    double kl = 0, refNll = 0, candNll = 0;
    std::vector<double> lpRef, lpCand;
    for (const auto& prompt : prompts) {
        if (prompt.empty()) throw std::invalid_argument("empty prompt");
        const auto n = static_cast<int64_t>(prompt.size());
        if (n + genTokens > maxCtx)
            throw std::invalid_argument("prompt of " + std::to_string(n) + " tokens plus " +
                                        std::to_string(genTokens) + " generated exceeds the context of " +
                                        std::to_string(maxCtx));
        std::vector<int32_t> seq = prompt;
        const std::vector<int32_t> cont = greedyContinuation(reference, pool, prompt, genTokens);
        seq.insert(seq.end(), cont.begin(), cont.end());
        const std::vector<float> ref = allLogits(reference, pool, seq);
        const std::vector<float> cand = allLogits(candidate, pool, seq);
        int64_t ignored = 0;
        addNll(ref, seq, vocab, refNll, predicted);
        addNll(cand, seq, vocab, candNll, ignored);
        const auto v = static_cast<size_t>(vocab);
        for (int64_t i = n - 1; i + 1 < static_cast<int64_t>(seq.size()); ++i) {
            const std::span<const float> a(ref.data() + static_cast<size_t>(i) * v, v);
            const std::span<const float> b(cand.data() + static_cast<size_t>(i) * v, v);
            agree += argmax(a) == argmax(b) ? 1 : 0;
            logSoftmax(a, lpRef);
            logSoftmax(b, lpCand);
            double k = 0;
            for (size_t t = 0; t < v; ++t) k += std::exp(lpRef[t]) * (lpRef[t] - lpCand[t]);
            kl += k;
            ++r.positions;
        }
        ++r.prompts;
        if (onPrompt && !onPrompt(r.prompts, static_cast<int64_t>(prompts.size())) &&
            r.prompts < static_cast<int64_t>(prompts.size())) {
            r.stopped = true;
            break;
        }
    }
    r.agreement = static_cast<double>(agree) / static_cast<double>(r.positions);
    r.meanKl = kl / static_cast<double>(r.positions);
    r.refPerplexity = std::exp(refNll / static_cast<double>(predicted));
    r.candPerplexity = std::exp(candNll / static_cast<double>(predicted));
    return r;
}

} // namespace mb::engine
