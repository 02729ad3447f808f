// The prefill/decode benchmark loop behind `modebench-cli bench`.
#include "engine/benchmark.h"

#include "engine/forward_backend.h"
#include "engine/sampler.h"

#include <chrono>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace mb::engine {

namespace {
using Clock = std::chrono::steady_clock;

struct Timing {
    double prefillS = 0, decodeS = 0;
};

Timing runOnce(ForwardBackend& forward, const std::vector<int32_t>& prompt, int64_t genTokens) {
    const LlamaModel& model = forward.model();
    const ModelConfig& c = model.config();
    const int64_t bs = 16;
    const auto n = static_cast<int64_t>(prompt.size());
    KvCache cache(c, blocksFor(n + genTokens, bs), bs, forward.kvStorage());
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);
    std::vector<float> logits(static_cast<size_t>(c.vocabSize));
    Timing t;
    const auto p0 = Clock::now();
    forward.runSequence(prompt, 0, cache, table, logits.data());
    const auto p1 = Clock::now();
    t.prefillS = std::chrono::duration<double>(p1 - p0).count();
    for (int64_t i = 0; i < genTokens; ++i) {
        const int32_t next[1] = {argmax(logits)};
        forward.runSequence(next, n + i, cache, table, logits.data());
    }
    t.decodeS = std::chrono::duration<double>(Clock::now() - p1).count();
    return t;
}
} // namespace

std::pair<double, double> meanStd(const std::vector<double>& v) {
    if (v.empty()) return {0, 0};
    const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    if (v.size() < 2) return {mean, 0};
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    return {mean, std::sqrt(ss / static_cast<double>(v.size() - 1))};
}

BenchResult runBenchmark(const LlamaModel& model, kernels::ThreadPool& pool, const BenchOptions& o) {
    const ModelConfig& c = model.config();
    if (o.promptTokens < 1 || o.genTokens < 1 || o.repetitions < 1)
        throw std::invalid_argument("prompt tokens, generated tokens and repetitions must be at least 1");
    if (o.promptTokens + o.genTokens > c.contextLength)
        throw std::invalid_argument("prompt plus generated tokens (" + std::to_string(o.promptTokens + o.genTokens) +
                                    ") exceed the model's context of " + std::to_string(c.contextLength));
    // BOS and seeded ordinary-looking ids from the upper part of the vocabulary.
    std::vector<int32_t> prompt(static_cast<size_t>(o.promptTokens));
    const int32_t bos = model.tokenizer().bos();
    uint64_t state = o.seed * 0x9e3779b97f4a7c15ull + 1;
    const int32_t lo = std::min<int32_t>(259, static_cast<int32_t>(c.vocabSize - 1));
    for (auto& t : prompt) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        t = lo + static_cast<int32_t>((state >> 33) % static_cast<uint64_t>(c.vocabSize - lo));
    }
    if (bos >= 0) prompt[0] = bos;
    // One backend for all runs (on a GPU the weights are uploaded once); fresh KV each run.
    const auto forward = makeForwardBackend(
        model, pool, {.maxChunk = std::min<int64_t>(256, o.promptTokens), .graphs = o.graphs}, o.device);
    runOnce(*forward, prompt, std::min<int64_t>(o.genTokens, 8)); // warm-up: caches, threads, pages
    BenchResult r;
    for (int i = 0; i < o.repetitions; ++i) {
        const Timing t = runOnce(*forward, prompt, o.genTokens);
        r.prefillTokS.push_back(static_cast<double>(o.promptTokens) / t.prefillS);
        r.decodeTokS.push_back(static_cast<double>(o.genTokens) / t.decodeS);
    }
    return r;
}

} // namespace mb::engine
