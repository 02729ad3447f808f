// The kernels the non-llama architectures add, against the CPU engine's ops: embedding scale and input rows, biases,
// per-head norms, GELU-tanh gating, soft-caps, NEOX RoPE with factors and scaling, windowed and soft-capped attention.
#include "gpu_test_util.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/quant.h"
#include "kernels/cuda/cuda_ops.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace mb::kernels;
using mb::test::nmse;
using mb::test::randomFloats;
using mb::test::toDevice;
using mb::test::toHost;

namespace {

// One sequence's paged cache on the device, layer `layer` of `layers`, positions through a
// shuffled block table, with the batch description the kernels read.
struct PagedFixture {
    static constexpr int32_t kBlockSize = 16, kLayers = 2, kLayer = 1, kCacheBlocks = 6;
    std::vector<int32_t> table = {4, 1, 3, 5}; // logical block -> cache block: up to 64 positions
    int64_t kvDim;
    cuda::DeviceBuffer keys, values, kp, vp, dTable, dPos, dSeq, dBlocks, dStart;
    cuda::PagedKv kv;

    PagedFixture(int64_t n, int64_t kvDim_) : kvDim(kvDim_) {
        const size_t floats = cacheFloats();
        keys = cuda::DeviceBuffer(floats * sizeof(float));
        values = cuda::DeviceBuffer(floats * sizeof(float));
        cuda::fillZero(keys.data(), keys.bytes(), nullptr);
        cuda::fillZero(values.data(), values.bytes(), nullptr);
        std::vector<int32_t> pos(static_cast<size_t>(n)), seq(static_cast<size_t>(n), 0);
        std::iota(pos.begin(), pos.end(), 0);
        kp = toDevice(std::vector<float*>{keys.as<float>()});
        vp = toDevice(std::vector<float*>{values.as<float>()});
        dTable = toDevice(table);
        dPos = toDevice(pos);
        dSeq = toDevice(seq);
        dBlocks = toDevice(std::vector<int32_t>{kCacheBlocks});
        dStart = toDevice(std::vector<int32_t>{0});
        kv.keys = kp.as<float*>();
        kv.values = vp.as<float*>();
        kv.cacheBlocks = dBlocks.as<int32_t>();
        kv.tables = dTable.as<int32_t>();
        kv.tableStart = dStart.as<int32_t>();
        kv.seqOfToken = dSeq.as<int32_t>();
        kv.posOfToken = dPos.as<int32_t>();
        kv.blockSize = kBlockSize;
        kv.kvDim = static_cast<int32_t>(kvDim);
        kv.layer = kLayer;
    }
    size_t cacheFloats() const { return static_cast<size_t>(kLayers * kCacheBlocks * kBlockSize * kvDim); }
    // Element offset of position t in the cache (the layout of engine::KvCache).
    size_t offset(int64_t t) const {
        return static_cast<size_t>(((kLayer * kCacheBlocks + table[static_cast<size_t>(t / kBlockSize)]) * kBlockSize +
                                    t % kBlockSize) * kvDim);
    }
};

} // namespace

// Token rows dequantised and scaled (gemma2's sqrt(dim)); input rows (image positions) as they are.
TEST(CudaArchKernels, EmbeddingScalesTokensAndTakesInputRowsAsTheyAre) {
    MB_REQUIRE_GPU();
    const int64_t vocab = 23, dim = 64;
    for (TensorType type : {TensorType::F32, TensorType::Q8_0}) {
        const std::vector<float> src = randomFloats(static_cast<size_t>(vocab * dim), 31);
        std::vector<uint8_t> bytes(static_cast<size_t>(vocab) * rowBytes(type, dim));
        std::vector<float> table(src.size());
        for (int64_t r = 0; r < vocab; ++r) {
            quantizeRow(type, src.data() + r * dim, bytes.data() + r * rowBytes(type, dim), dim);
            dequantizeRow(type, bytes.data() + r * rowBytes(type, dim), table.data() + r * dim, dim);
        }
        const std::vector<int32_t> ids = {5, 0, 22, 7}, rowOf = {-1, 1, -1, 0};
        const std::vector<float> inputs = randomFloats(static_cast<size_t>(2 * dim), 32);
        const auto dw = toDevice(bytes), dids = toDevice(ids), drow = toDevice(rowOf), din = toDevice(inputs);
        cuda::DeviceBuffer dx(ids.size() * dim * sizeof(float));
        cuda::EmbedArgs args{{type, vocab, dim, dw.data()}, dids.as<int32_t>(), 8.0f, din.as<float>(),
                             drow.as<int32_t>()};
        cuda::embedRows(args, static_cast<int64_t>(ids.size()), dx.as<float>(), nullptr);
        std::vector<float> want;
        for (size_t t = 0; t < ids.size(); ++t)
            for (int64_t i = 0; i < dim; ++i)
                want.push_back(rowOf[t] >= 0 ? inputs[static_cast<size_t>(rowOf[t] * dim + i)]
                                             : table[static_cast<size_t>(ids[t] * dim + i)] * 8.0f);
        EXPECT_EQ(toHost<float>(dx, want.size()), want) << tensorTypeName(type);
    }
}

TEST(CudaArchKernels, BiasGeluAndSoftcapMatchTheCpu) {
    MB_REQUIRE_GPU();
    const int64_t rows = 5, width = 67, count = 1001;
    std::vector<float> x = randomFloats(rows * width, 41), bias = randomFloats(width, 42);
    auto dx = toDevice(x);
    const auto db = toDevice(bias);
    cuda::addBiasRows(dx.as<float>(), db.as<float>(), rows, width, nullptr);
    addBiasRows(x.data(), bias.data(), rows, width);
    EXPECT_EQ(toHost<float>(dx, x.size()), x) << "bias rows";

    std::vector<float> gate = randomFloats(count, 43), up = randomFloats(count, 44);
    for (auto& g : gate) g *= 6; // both tails of tanh
    auto dg = toDevice(gate);
    const auto du = toDevice(up);
    cuda::geluTanhMul(dg.as<float>(), du.as<float>(), count, nullptr);
    geluTanhMul(gate.data(), up.data(), count);
    EXPECT_LT(nmse(toHost<float>(dg, count), gate), 1e-11) << "GELU-tanh gate";

    std::vector<float> logits = randomFloats(count, 45);
    for (auto& l : logits) l *= 80; // beyond the cap of 30
    auto dl = toDevice(logits);
    cuda::softcap(dl.as<float>(), count, 30.0f, nullptr);
    softcap(logits.data(), count, 30.0f);
    EXPECT_LT(nmse(toHost<float>(dl, count), logits), 1e-12) << "final soft-cap";
}

// qwen3's per-head norms: rows of headDim, in place.
TEST(CudaArchKernels, PerHeadRmsNormInPlace) {
    MB_REQUIRE_GPU();
    const int64_t n = 7, heads = 5, hd = 72;
    std::vector<float> q = randomFloats(n * heads * hd, 51);
    const std::vector<float> w = randomFloats(hd, 52);
    auto dq = toDevice(q);
    const auto dw = toDevice(w);
    cuda::addRmsNorm(dq.as<float>(), nullptr, dw.as<float>(), dq.as<float>(), n * heads, hd, 1e-6f, nullptr);
    for (int64_t r = 0; r < n * heads; ++r) rmsNorm(q.data() + r * hd, w.data(), q.data() + r * hd, hd, 1e-6f);
    EXPECT_LT(nmse(toHost<float>(dq, q.size()), q), 1e-11);
}

// NEOX and NORM RoPE with Llama 3.1 factors and linear scaling, computed and from a table, the
// rotated k and v written through the block table.
TEST(CudaArchKernels, RopeWithFactorsAndScalingMatchesTheCpu) {
    MB_REQUIRE_GPU();
    const int32_t heads = 4, kvHeads = 2, hd = 40, ropeDim = 32;
    const int64_t n = 45, qDim = heads * hd, kvDim = kvHeads * hd;
    std::vector<float> factors(ropeDim / 2);
    for (size_t i = 0; i < factors.size(); ++i) factors[i] = 1.0f + 0.5f * static_cast<float>(i);
    const auto dFactors = toDevice(factors);
    for (cuda::RopeForm form : {cuda::RopeForm::Neox, cuda::RopeForm::Norm}) {
        for (bool table : {false, true}) {
            std::vector<float> q = randomFloats(n * qDim, 61), k = randomFloats(n * kvDim, 62),
                               v = randomFloats(n * kvDim, 63);
            std::vector<float> cs(n * ropeDim / 2), sn(cs.size());
            for (int64_t t = 0; t < n; ++t)
                ropeAngles(t, ropeDim, 500000.0f, cs.data() + t * ropeDim / 2, sn.data() + t * ropeDim / 2, 0.25f,
                           factors.data());
            const auto dcs = toDevice(cs), dsn = toDevice(sn);
            auto dq = toDevice(q), dk = toDevice(k);
            const auto dv = toDevice(v);
            PagedFixture cache(n, kvDim);
            cuda::RopeArgs args{dq.as<float>(), dk.as<float>(), dv.as<float>(), n, heads, kvHeads, hd, ropeDim,
                                500000.0f, table ? dcs.as<float>() : nullptr, table ? dsn.as<float>() : nullptr,
                                form, 0.25f, dFactors.as<float>()};
            cuda::ropeAndStore(args, cache.kv, /*writeKv=*/true, nullptr);
            const auto apply = form == cuda::RopeForm::Neox ? ropeApplyNeox : ropeApply;
            std::vector<float> hk(cache.cacheFloats(), 0.0f);
            for (int64_t t = 0; t < n; ++t) {
                apply(q.data() + t * qDim, heads, hd, ropeDim, cs.data() + t * ropeDim / 2, sn.data() + t * ropeDim / 2);
                apply(k.data() + t * kvDim, kvHeads, hd, ropeDim, cs.data() + t * ropeDim / 2,
                      sn.data() + t * ropeDim / 2);
                std::copy_n(k.data() + t * kvDim, kvDim, hk.begin() + static_cast<std::ptrdiff_t>(cache.offset(t)));
            }
            const std::string what = std::string(form == cuda::RopeForm::Neox ? "NEOX" : "NORM") +
                                     (table ? ", table" : ", computed");
            EXPECT_LT(nmse(toHost<float>(dq, q.size()), q), 1e-12) << what;
            EXPECT_LT(nmse(toHost<float>(cache.keys, hk.size()), hk), 1e-12) << what << ": k in the cache";
        }
    }
}

// Attention with Gemma 2's soft-cap and sliding windows (shorter and longer than a block),
// split and tiled, against attendPaged with the same ScoreRule.
TEST(CudaArchKernels, SoftcappedWindowedAttentionMatchesTheCpu) {
    MB_REQUIRE_GPU();
    const int32_t heads = 4, kvHeads = 2, hd = 64;
    const int64_t n = 57, qDim = heads * hd, kvDim = kvHeads * hd;
    const std::vector<float> q = randomFloats(n * qDim, 71), k = randomFloats(n * kvDim, 72),
                             v = randomFloats(n * kvDim, 73);
    PagedFixture cache(n, kvDim);
    std::vector<float> hk(cache.cacheFloats(), 0.0f), hv(hk.size(), 0.0f);
    for (int64_t t = 0; t < n; ++t) {
        std::copy_n(k.data() + t * kvDim, kvDim, hk.begin() + static_cast<std::ptrdiff_t>(cache.offset(t)));
        std::copy_n(v.data() + t * kvDim, kvDim, hv.begin() + static_cast<std::ptrdiff_t>(cache.offset(t)));
    }
    cuda::copyToDevice(cache.keys.data(), hk.data(), hk.size() * sizeof(float), nullptr);
    cuda::copyToDevice(cache.values.data(), hv.data(), hv.size() * sizeof(float), nullptr);
    std::vector<const float*> kb, vb;
    for (int32_t b : cache.table) {
        kb.push_back(hk.data() + (PagedFixture::kLayer * PagedFixture::kCacheBlocks + b) * 16 * kvDim);
        vb.push_back(hv.data() + (PagedFixture::kLayer * PagedFixture::kCacheBlocks + b) * 16 * kvDim);
    }
    const auto dq = toDevice(q);
    for (const cuda::AttentionRule rule : {cuda::AttentionRule{0.125f, 50.0f, 0}, cuda::AttentionRule{0.125f, 0.0f, 7},
                                           cuda::AttentionRule{0.0625f, 5.0f, 32}}) {
        std::vector<float> want(n * qDim), scores(n);
        for (int64_t t = 0; t < n; ++t)
            for (int32_t h = 0; h < heads; ++h)
                attendPaged(q.data() + t * qDim + h * hd, kb.data(), vb.data(), 16, t + 1, kvDim,
                            (h / (heads / kvHeads)) * hd, hd, ScoreRule(rule.scale, rule.softcap, rule.window),
                            scores.data(), want.data() + t * qDim + h * hd);
        const std::string what = "cap " + std::to_string(rule.softcap) + ", window " + std::to_string(rule.window);
        for (int32_t splits : {1, 5, 32}) {
            cuda::DeviceBuffer partial(static_cast<size_t>(cuda::attentionScratchFloats(n, heads, hd, splits)) *
                                       sizeof(float));
            cuda::DeviceBuffer out(n * qDim * sizeof(float));
            cuda::attention(dq.as<float>(), cache.kv, n, heads, kvHeads, hd, rule, splits, partial.as<float>(),
                            out.as<float>(), nullptr);
            EXPECT_LT(nmse(toHost<float>(out, n * qDim), want), 1e-9) << what << ", splits " << splits;
        }
        for (int64_t first : {int64_t{0}, int64_t{40}}) { // a chunk whose window starts inside an earlier block
            cuda::PagedKv chunk = cache.kv;
            chunk.posOfToken += first;
            chunk.seqOfToken += first;
            cuda::DeviceBuffer out((n - first) * qDim * sizeof(float));
            cuda::prefillAttention(dq.as<float>() + first * qDim, chunk, n - first, heads, kvHeads, hd, rule,
                                   out.as<float>(), nullptr);
            const std::vector<float> wantChunk(want.begin() + first * qDim, want.end());
            EXPECT_LT(nmse(toHost<float>(out, (n - first) * qDim), wantChunk), 1e-9) << what << ", tiled from " << first;
        }
    }
}
