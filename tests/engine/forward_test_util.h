// Helpers for logits tests against recorded goldens: reading float files, one-pass logits, differences.
#pragma once

#include "engine/forward.h"
#include "engine/kv_cache.h"
#include "engine/llama_model.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <vector>

namespace mb::test {

inline std::vector<float> readFloats(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::vector<float> v(std::filesystem::file_size(p) / sizeof(float));
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
    return v;
}

// Logits at every position of `tokens` (one prefill pass through a cache of `kv` type),
// (tokens, vocab) row-major.
inline std::vector<float> allLogits(const engine::LlamaModel& m, const std::vector<int32_t>& tokens, int threads,
                                    bool f32Activations, engine::KvType kv = engine::KvType::F32) {
    kernels::ThreadPool pool(threads);
    engine::ForwardOptions options;
    options.f32Activations = f32Activations;
    engine::Forward fwd(m, pool, options);
    const int64_t bs = 16, n = static_cast<int64_t>(tokens.size());
    engine::KvCache cache(m.config(), engine::blocksFor(n, bs), bs, engine::KvStorage::Host, kv);
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);
    std::vector<int64_t> positions(tokens.size());
    std::iota(positions.begin(), positions.end(), 0);
    std::vector<int32_t> seqIds(tokens.size(), 0);
    std::vector<uint8_t> want(tokens.size(), 1);
    engine::KvCache* caches[] = {&cache};
    std::span<const int32_t> tables[] = {table};
    std::vector<float> logits(tokens.size() * static_cast<size_t>(m.config().vocabSize));
    fwd.run({tokens, positions, seqIds, caches, tables, want}, logits.data());
    return logits;
}

struct Diff {
    double maxAbs = 0.0;
    double rms = 0.0;
};
inline Diff compare(const float* a, const float* b, size_t n) {
    Diff d;
    for (size_t i = 0; i < n; ++i) {
        const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
        d.maxAbs = std::max(d.maxAbs, e);
        d.rms += e * e;
    }
    d.rms = std::sqrt(d.rms / static_cast<double>(n));
    return d;
}

// KL(softmax(ref) || softmax(got)) of one row of n logits, in nats.
inline double klDivergence(const float* ref, const float* got, size_t n) {
    auto logSoftmax = [n](const float* x) {
        const double m = *std::max_element(x, x + n);
        double z = 0;
        for (size_t i = 0; i < n; ++i) z += std::exp(x[i] - m);
        std::vector<double> out(n);
        for (size_t i = 0; i < n; ++i) out[i] = x[i] - m - std::log(z);
        return out;
    };
    const auto p = logSoftmax(ref), q = logSoftmax(got);
    double kl = 0;
    for (size_t i = 0; i < n; ++i) kl += std::exp(p[i]) * (p[i] - q[i]);
    return kl;
}

} // namespace mb::test
