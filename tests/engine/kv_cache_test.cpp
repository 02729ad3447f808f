// The KV cache's element types: F16 for `mixed` and `f16`, half the bytes, and a forward pass over it.
#include "engine/forward.h"
#include "engine/llama_model.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mb::engine;
using mb::kernels::ThreadPool;

namespace {

ModelConfig tinyConfig() {
    ModelConfig c;
    c.dim = 64;
    c.layers = 3;
    c.heads = 8;
    c.kvHeads = 4;
    c.headDim = 8;
    return c;
}

// Logits (vocabSize) after running `tokens` through a fresh cache of `type`, `chunk` tokens a pass.
std::vector<float> logitsWith(const LlamaModel& m, KvType type, const std::vector<int32_t>& tokens, int threads,
                              int64_t chunk) {
    ThreadPool pool(threads);
    Forward fwd(m, pool, {.maxChunk = chunk});
    const int64_t bs = 16;
    KvCache cache(m.config(), blocksFor(static_cast<int64_t>(tokens.size()), bs) + 1, bs, KvStorage::Host, type);
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.rbegin(), table.rend(), 0); // blocks out of order
    std::vector<float> logits(static_cast<size_t>(m.config().vocabSize));
    for (size_t i = 0; i < tokens.size(); i += static_cast<size_t>(chunk)) {
        const size_t n = std::min(tokens.size() - i, static_cast<size_t>(chunk));
        fwd.runSequence(std::span(tokens).subspan(i, n), static_cast<int64_t>(i), cache, table, logits.data());
    }
    return logits;
}

} // namespace

TEST(KvCache, F16HalvesTheBytesOnTheHostAndTheDeviceStaysF32) {
    const ModelConfig c = tinyConfig();
    const KvCache f32(c, 4, 16), f16(c, 4, 16, KvStorage::Host, KvType::F16);
    EXPECT_EQ(f32.type(), KvType::F32);
    EXPECT_EQ(f16.type(), KvType::F16);
    EXPECT_EQ(f32.bytes(), 4u * 16u * 3u * 32u * 2u * 4u); // blocks x positions x layers x kvDim x (K, V) x 4 bytes
    EXPECT_EQ(f16.bytes() * 2, f32.bytes());
    EXPECT_EQ(f16.bytesPerPosition() * 2, f32.bytesPerPosition());
    EXPECT_THROW(KvCache(c, 4, 16, KvStorage::Device, KvType::F16), std::invalid_argument);

    for (Precision p : {Precision::Mixed, Precision::F16})
        EXPECT_EQ(kvTypeFor(p, KvStorage::Host), KvType::F16) << precisionName(p);
    for (Precision p : {Precision::Native, Precision::F32, Precision::Int8, Precision::Q4_0})
        EXPECT_EQ(kvTypeFor(p, KvStorage::Host), KvType::F32) << precisionName(p);
    for (Precision p : {Precision::Native, Precision::F32, Precision::F16, Precision::Mixed, Precision::Int8,
                        Precision::Q4_0})
        EXPECT_EQ(kvTypeFor(p, KvStorage::Device), KvType::F32) << precisionName(p);
}

TEST(KvCache, F16CacheGivesCloseLogitsAndTheSameBitsHoweverTheWorkIsSplit) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    const std::vector<int32_t> tokens = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317,
                                         426, 338, 401, 396, 267, 337, 410, 408, 419, 292, 300, 301};
    const auto ref = logitsWith(*m, KvType::F32, tokens, 1, 256);
    const auto half = logitsWith(*m, KvType::F16, tokens, 1, 256);
    // F16 keeps 11 significant bits of each K and V element: the logits move, but little.
    float worst = 0.0f, scale = 0.0f;
    for (size_t i = 0; i < ref.size(); ++i) {
        worst = std::max(worst, std::fabs(ref[i] - half[i]));
        scale = std::max(scale, std::fabs(ref[i]));
    }
    EXPECT_GT(worst, 0.0f) << "the F16 cache changed nothing: is it in use?";
    EXPECT_LT(worst, 1e-3f * scale);
    EXPECT_EQ(std::max_element(ref.begin(), ref.end()) - ref.begin(),
              std::max_element(half.begin(), half.end()) - half.begin());
    // Threads and chunking (prefill runs, token-by-token decode) change no bit.
    EXPECT_EQ(logitsWith(*m, KvType::F16, tokens, 2, 256), half);
    EXPECT_EQ(logitsWith(*m, KvType::F16, tokens, 2, 5), half);
    EXPECT_EQ(logitsWith(*m, KvType::F16, tokens, 1, 1), half);
}
