// Each CUDA kernel against the CPU reference on awkward shapes, with normalised-MSE bounds per op.
#include "gpu_test_util.h"
#include "kernels/cpu/fp16.h"
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

// A (rows, cols) matrix of random values stored as `type`, and its dequantised F32 values.
struct TestMatrix {
    std::vector<uint8_t> bytes;
    std::vector<float> values; // dequantised: what the product must use
};

TestMatrix makeMatrix(TensorType type, int64_t rows, int64_t cols, uint64_t seed) {
    const std::vector<float> src = randomFloats(static_cast<size_t>(rows * cols), seed);
    TestMatrix m;
    m.bytes.resize(static_cast<size_t>(rows) * rowBytes(type, cols));
    m.values.resize(src.size());
    for (int64_t r = 0; r < rows; ++r) {
        uint8_t* row = m.bytes.data() + static_cast<size_t>(r) * rowBytes(type, cols);
        quantizeRow(type, src.data() + r * cols, row, cols);
        dequantizeRow(type, row, m.values.data() + r * cols, cols);
    }
    return m;
}

// y(n, rows) in double from the dequantised weights.
std::vector<double> referenceProduct(const TestMatrix& m, int64_t rows, int64_t cols, const std::vector<float>& x,
                                     int64_t n) {
    std::vector<double> y(static_cast<size_t>(n * rows));
    for (int64_t t = 0; t < n; ++t)
        for (int64_t r = 0; r < rows; ++r) {
            double s = 0;
            for (int64_t k = 0; k < cols; ++k)
                s += static_cast<double>(m.values[static_cast<size_t>(r * cols + k)]) * x[static_cast<size_t>(t * cols + k)];
            y[static_cast<size_t>(t * rows + r)] = s;
        }
    return y;
}

struct ProductCase {
    TensorType type;
    int64_t rows, cols;
};

class CudaProduct : public ::testing::TestWithParam<ProductCase> {};

TEST_P(CudaProduct, MatvecMatchesReferenceForEveryBatchSize) {
    MB_REQUIRE_GPU();
    const auto [type, rows, cols] = GetParam();
    const TestMatrix m = makeMatrix(type, rows, cols, 7);
    const auto w = toDevice(m.bytes);
    const cuda::DeviceMatrix dm{type, rows, cols, w.data()};
    for (int64_t n : {int64_t{1}, int64_t{3}, cuda::kMatvecMaxTokens}) {
        const std::vector<float> x = randomFloats(static_cast<size_t>(n * cols), 11 + static_cast<uint64_t>(n));
        const auto dx = toDevice(x);
        cuda::DeviceBuffer dy(static_cast<size_t>(n * rows) * sizeof(float));
        cuda::matvec(dm, dx.as<float>(), n, dy.as<float>(), nullptr);
        const auto y = toHost<float>(dy, static_cast<size_t>(n * rows));
        EXPECT_LT(nmse(y, referenceProduct(m, rows, cols, x, n)), 1e-10) << tensorTypeName(type) << " n=" << n;
    }
}

TEST_P(CudaProduct, Fp16GemmMatchesReference) {
    MB_REQUIRE_GPU();
    const auto [type, rows, cols] = GetParam();
    const int64_t n = 19;
    const TestMatrix m = makeMatrix(type, rows, cols, 5);
    const auto w = toDevice(m.bytes);
    const std::vector<float> x = randomFloats(static_cast<size_t>(n * cols), 3);
    const auto dx = toDevice(x);
    cuda::DeviceBuffer wh(static_cast<size_t>(rows * cols) * 2), xh(static_cast<size_t>(n * cols) * 2);
    cuda::DeviceBuffer dy(static_cast<size_t>(n * rows) * sizeof(float));
    cuda::dequantizeToF16({type, rows, cols, w.data()}, wh.data(), nullptr);
    cuda::convertToF16(dx.as<float>(), xh.data(), n * cols, nullptr);
    // Everything here runs on the legacy default stream, so the product is ordered after the
    // conversions above and the copy below waits for it.
    cuda::BlasHandle blas(nullptr);
    cuda::gemmF16(blas, wh.data(), rows, cols, xh.data(), n, dy.as<float>());
    const auto y = toHost<float>(dy, static_cast<size_t>(n * rows));
    // F16 rounding of activations (and of F32 weights) bounds the agreement.
    EXPECT_LT(nmse(y, referenceProduct(m, rows, cols, x, n)), 1e-5) << tensorTypeName(type);
}

INSTANTIATE_TEST_SUITE_P(Types, CudaProduct,
                         ::testing::Values(ProductCase{TensorType::F32, 37, 67}, ProductCase{TensorType::F16, 37, 67},
                                           ProductCase{TensorType::F16, 129, 96},
                                           ProductCase{TensorType::Q8_0, 129, 96},
                                           ProductCase{TensorType::Q8_0, 5, 1056},
                                           ProductCase{TensorType::Q4_0, 129, 96},
                                           ProductCase{TensorType::Q4_0, 3, 1056}));

TEST(CudaKernels, EmbeddingGatherEqualsDequantisedRows) {
    MB_REQUIRE_GPU();
    for (TensorType type : {TensorType::F32, TensorType::F16, TensorType::Q8_0, TensorType::Q4_0}) {
        const int64_t vocab = 41, dim = 96;
        const TestMatrix m = makeMatrix(type, vocab, dim, 9);
        const auto w = toDevice(m.bytes);
        const std::vector<int32_t> ids = {40, 0, 17, 17, 3};
        const auto dids = toDevice(ids);
        cuda::DeviceBuffer dx(ids.size() * dim * sizeof(float));
        cuda::EmbedArgs args;
        args.table = {type, vocab, dim, w.data()};
        args.ids = dids.as<int32_t>();
        cuda::embedRows(args, static_cast<int64_t>(ids.size()), dx.as<float>(), nullptr);
        const auto x = toHost<float>(dx, ids.size() * dim);
        std::vector<float> want;
        for (int32_t id : ids) want.insert(want.end(), m.values.begin() + id * dim, m.values.begin() + (id + 1) * dim);
        EXPECT_EQ(x, want) << tensorTypeName(type);
    }
}

TEST(CudaKernels, RmsNormWithAndWithoutResidual) {
    MB_REQUIRE_GPU();
    const int64_t n = 3, dim = 67;
    const std::vector<float> x = randomFloats(n * dim, 1), r = randomFloats(n * dim, 2), w = randomFloats(dim, 3);
    for (bool residual : {false, true}) {
        auto dx = toDevice(x);
        const auto dr = toDevice(r), dw = toDevice(w);
        cuda::DeviceBuffer dout(n * dim * sizeof(float));
        cuda::addRmsNorm(dx.as<float>(), residual ? dr.as<float>() : nullptr, dw.as<float>(), dout.as<float>(), n, dim,
                         1e-5f, nullptr);
        std::vector<float> sum = x, want(n * dim);
        if (residual) addInPlace(sum.data(), r.data(), n * dim);
        for (int64_t t = 0; t < n; ++t) rmsNorm(sum.data() + t * dim, w.data(), want.data() + t * dim, dim, 1e-5f);
        EXPECT_LT(nmse(toHost<float>(dout, n * dim), want), 1e-11) << "residual " << residual;
        EXPECT_LT(nmse(toHost<float>(dx, n * dim), sum), 1e-14) << "the residual sum is written back";
    }
}

TEST(CudaKernels, SwiGluMatchesCpu) {
    MB_REQUIRE_GPU();
    const int64_t count = 1001;
    std::vector<float> gate = randomFloats(count, 4), up = randomFloats(count, 5);
    for (auto& g : gate) g *= 8; // reach both tails of the sigmoid
    auto dg = toDevice(gate);
    const auto du = toDevice(up);
    cuda::siluMul(dg.as<float>(), du.as<float>(), count, nullptr);
    siluMul(gate.data(), up.data(), count);
    EXPECT_LT(nmse(toHost<float>(dg, count), gate), 1e-11);
}

TEST(CudaKernels, ArgmaxTakesTheFirstIndexOnTies) {
    MB_REQUIRE_GPU();
    const int64_t vocab = 1000;
    std::vector<float> logits = randomFloats(3 * vocab, 6);
    logits[17] = 5;
    logits[900] = 5; // tie: 17 wins
    logits[vocab + 999] = 9;
    logits[2 * vocab + 0] = 2;
    const auto dl = toDevice(logits);
    cuda::DeviceBuffer out(3 * sizeof(int32_t));
    cuda::argmaxRows(dl.as<float>(), 3, vocab, out.as<int32_t>(), nullptr);
    EXPECT_EQ(toHost<int32_t>(out, 3), (std::vector<int32_t>{17, 999, 0}));
}

TEST(CudaKernels, SamplingPicksTheTokenWhoseCumulativeRangeHoldsU) {
    MB_REQUIRE_GPU();
    const int64_t vocab = 777; // not a multiple of the 256 threads
    const float temperature = 0.7f;
    const std::vector<float> logits = randomFloats(vocab, 8);
    const std::vector<float> us = {0.0f, 0.13f, 0.5f, 0.87f, 0.999f};
    std::vector<float> rows;
    for (size_t i = 0; i < us.size(); ++i) rows.insert(rows.end(), logits.begin(), logits.end());
    const auto dl = toDevice(rows), du = toDevice(us);
    cuda::DeviceBuffer out(us.size() * sizeof(int32_t));
    cuda::sampleRows(dl.as<float>(), static_cast<int64_t>(us.size()), vocab, temperature, du.as<float>(),
                     out.as<int32_t>(), nullptr);
    const auto picked = toHost<int32_t>(out, us.size());
    const double mx = *std::max_element(logits.begin(), logits.end());
    std::vector<double> cum(vocab + 1, 0.0);
    for (int64_t k = 0; k < vocab; ++k) cum[k + 1] = cum[k] + std::exp((logits[k] - mx) / temperature);
    for (size_t i = 0; i < us.size(); ++i) {
        const double target = us[i] * cum[vocab];
        const int32_t k = picked[i];
        ASSERT_GE(k, 0);
        ASSERT_LT(k, vocab);
        // Float sums on the device: allow a sliver of the total at the range's edges.
        EXPECT_LE(cum[k] - 1e-4 * cum[vocab], target) << "u=" << us[i];
        EXPECT_GE(cum[k + 1] + 1e-4 * cum[vocab], target) << "u=" << us[i];
    }
}

// RoPE + paged KV write, then attention, against ropeApply + attendPaged on the CPU, for a
// 37-token prefill through a shuffled block table (heads 6, KV heads 2, headDim 40).
class CudaAttention : public ::testing::TestWithParam<bool> {};

TEST_P(CudaAttention, RopeKvWriteAndAttentionMatchCpu) {
    MB_REQUIRE_GPU();
    const bool fused = GetParam();
    const int32_t heads = 6, kvHeads = 2, hd = 40, rope = 40, bs = 16, layers = 2, layer = 1;
    const int64_t n = 37, qDim = heads * hd, kvDim = kvHeads * hd;
    const std::vector<int32_t> table = {4, 1, 3}; // logical block -> cache block
    const int32_t cacheBlocks = 5;
    std::vector<float> q = randomFloats(n * qDim, 21), k = randomFloats(n * kvDim, 22), v = randomFloats(n * kvDim, 23);
    auto dq = toDevice(q), dk = toDevice(k);
    const auto dv = toDevice(v);
    const size_t cacheFloats = static_cast<size_t>(layers * cacheBlocks * bs * kvDim);
    cuda::DeviceBuffer keys(cacheFloats * sizeof(float)), values(cacheFloats * sizeof(float));
    cuda::fillZero(keys.data(), keys.bytes(), nullptr);
    cuda::fillZero(values.data(), values.bytes(), nullptr);
    std::vector<int32_t> pos(n), seq(n, 0);
    std::iota(pos.begin(), pos.end(), 0);
    const std::vector<float*> kp = {keys.as<float>()}, vp = {values.as<float>()};
    const auto dkp = toDevice(kp), dvp = toDevice(vp), dTable = toDevice(table), dPos = toDevice(pos),
               dSeq = toDevice(seq), dBlocks = toDevice(std::vector<int32_t>{cacheBlocks}),
               dStart = toDevice(std::vector<int32_t>{0});
    cuda::PagedKv kv;
    kv.keys = dkp.as<float*>();
    kv.values = dvp.as<float*>();
    kv.cacheBlocks = dBlocks.as<int32_t>();
    kv.tables = dTable.as<int32_t>();
    kv.tableStart = dStart.as<int32_t>();
    kv.seqOfToken = dSeq.as<int32_t>();
    kv.posOfToken = dPos.as<int32_t>();
    kv.blockSize = bs;
    kv.kvDim = static_cast<int32_t>(kvDim);
    kv.layer = layer;
    const cuda::RopeArgs args{dq.as<float>(), dk.as<float>(), dv.as<float>(), n, heads, kvHeads, hd, rope, 10000.0f,
                              nullptr, nullptr};
    cuda::ropeAndStore(args, kv, fused, nullptr);
    if (!fused) cuda::storeKv(dk.as<float>(), dv.as<float>(), n, kv, nullptr);

    // CPU: rotate, store into a host cache of the same layout, attend per (token, head).
    std::vector<float> hk(cacheFloats, 0.0f), hv(cacheFloats, 0.0f);
    std::vector<float> cs(rope / 2), sn(rope / 2);
    for (int64_t t = 0; t < n; ++t) {
        ropeAngles(t, rope, 10000.0f, cs.data(), sn.data());
        ropeApply(q.data() + t * qDim, heads, hd, rope, cs.data(), sn.data());
        ropeApply(k.data() + t * kvDim, kvHeads, hd, rope, cs.data(), sn.data());
        const size_t off = static_cast<size_t>(((layer * cacheBlocks + table[t / bs]) * bs + t % bs) * kvDim);
        std::copy_n(k.data() + t * kvDim, kvDim, hk.begin() + static_cast<std::ptrdiff_t>(off));
        std::copy_n(v.data() + t * kvDim, kvDim, hv.begin() + static_cast<std::ptrdiff_t>(off));
    }
    EXPECT_LT(nmse(toHost<float>(dq, n * qDim), q), 1e-12) << "rotated q";
    EXPECT_LT(nmse(toHost<float>(keys, cacheFloats), hk), 1e-12) << "rotated k in the paged cache";
    EXPECT_EQ(toHost<float>(values, cacheFloats), hv) << "v in the paged cache";

    std::vector<const float*> kb, vb;
    for (int32_t b : table) {
        kb.push_back(hk.data() + (layer * cacheBlocks + b) * bs * kvDim);
        vb.push_back(hv.data() + (layer * cacheBlocks + b) * bs * kvDim);
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
    std::vector<float> want(n * qDim), scores(n);
    for (int64_t t = 0; t < n; ++t)
        for (int32_t h = 0; h < heads; ++h)
            attendPaged(q.data() + t * qDim + h * hd, kb.data(), vb.data(), bs, t + 1, kvDim,
                        (h / (heads / kvHeads)) * hd, hd, scale, scores.data(), want.data() + t * qDim + h * hd);
    for (int32_t splits : {1, 5, 32}) { // 32 splits of 37 positions leaves empty splits for early tokens
        cuda::DeviceBuffer partial(static_cast<size_t>(cuda::attentionScratchFloats(n, heads, hd, splits)) *
                                   sizeof(float));
        cuda::DeviceBuffer out(n * qDim * sizeof(float));
        cuda::attention(dq.as<float>(), kv, n, heads, kvHeads, hd, {scale}, splits, partial.as<float>(),
                        out.as<float>(), nullptr);
        EXPECT_LT(nmse(toHost<float>(out, n * qDim), want), 1e-9) << "splits " << splits;
    }
    // The tiled prefill kernel: the whole chunk, then a second chunk (positions 16..36) whose
    // earlier positions are already in the cache.
    ASSERT_TRUE(cuda::prefillAttentionSupported(heads, kvHeads, hd));
    for (int64_t first : {int64_t{0}, int64_t{16}}) {
        const int64_t m = n - first;
        cuda::PagedKv chunk = kv;
        chunk.posOfToken += first;
        chunk.seqOfToken += first;
        cuda::DeviceBuffer out(m * qDim * sizeof(float));
        cuda::prefillAttention(dq.as<float>() + first * qDim, chunk, m, heads, kvHeads, hd, {scale}, out.as<float>(),
                               nullptr);
        const std::vector<float> wantChunk(want.begin() + first * qDim, want.end());
        EXPECT_LT(nmse(toHost<float>(out, m * qDim), wantChunk), 1e-9) << "prefill from position " << first;
    }
}

INSTANTIATE_TEST_SUITE_P(FusedAndUnfused, CudaAttention, ::testing::Bool());

TEST(CudaKernels, FailedCallsThrowWithFileAndLine) {
    MB_REQUIRE_GPU();
    try {
        cuda::DeviceBuffer huge(size_t{1} << 62); // no device has 4 EiB
        FAIL() << "a 4 EiB allocation succeeded";
    } catch (const cuda::CudaError& e) {
        EXPECT_NE(std::string(e.what()).find("device_buffer.cpp:"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("cudaMalloc"), std::string::npos) << e.what();
    }
    cuda::DeviceBuffer a(64), b;
    b = std::move(a); // move-only ownership: exactly one owner frees it
    EXPECT_TRUE(a.empty());
    EXPECT_EQ(b.bytes(), 64u);
}

} // namespace
