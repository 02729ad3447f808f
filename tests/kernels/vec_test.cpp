// Every SIMD vector kernel against the portable one, on awkward lengths.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/vec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace mb::kernels;

namespace {

std::vector<float> randomFloats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> x(n);
    for (auto& v : x) v = d(rng);
    return x;
}

// atol + rtol * sum|w*x|: the bound for two float summation orders.
void expectClose(double got, double ref, double absSum, const std::string& what) {
    EXPECT_NEAR(got, ref, 1e-6 + 1e-5 * absSum) << what;
}

class VecKernelsTest : public ::testing::Test {
protected:
    void SetUp() override {
        simd = avx2VecKernels();
        if (!simd) GTEST_SKIP() << "this CPU has no AVX2+FMA+F16C; only the portable kernels exist";
    }
    const VecKernels& ref = portableVecKernels();
    const VecKernels* simd = nullptr;
};

} // namespace

TEST_F(VecKernelsTest, FloatDotsMatchPortable) {
    for (int64_t n : {1, 7, 8, 15, 16, 17, 31, 33, 100, 257, 4096}) {
        const auto w = randomFloats(static_cast<size_t>(n), 1);
        const auto x = randomFloats(static_cast<size_t>(n), 2);
        std::vector<uint16_t> wh(static_cast<size_t>(n)), wb(static_cast<size_t>(n));
        double absSum = 0;
        for (int64_t i = 0; i < n; ++i) {
            wh[static_cast<size_t>(i)] = floatToFp16(w[static_cast<size_t>(i)]);
            wb[static_cast<size_t>(i)] = floatToBf16(w[static_cast<size_t>(i)]);
            absSum += std::fabs(w[static_cast<size_t>(i)] * x[static_cast<size_t>(i)]);
        }
        const std::string at = "n=" + std::to_string(n);
        expectClose(simd->dotF32(w.data(), x.data(), n), ref.dotF32(w.data(), x.data(), n), absSum, "f32 " + at);
        expectClose(simd->dotF16(wh.data(), x.data(), n), ref.dotF16(wh.data(), x.data(), n), absSum, "f16 " + at);
        expectClose(simd->dotBF16(wb.data(), x.data(), n), ref.dotBF16(wb.data(), x.data(), n), absSum, "bf16 " + at);
    }
}

TEST_F(VecKernelsTest, QuantisedDotsMatchPortable) {
    for (int64_t nb : {1, 2, 3, 9, 24, 64}) {
        const int64_t n = nb * 32;
        const auto w = randomFloats(static_cast<size_t>(n), 3);
        const auto x = randomFloats(static_cast<size_t>(n), 4);
        std::vector<BlockQ8_0> w8(static_cast<size_t>(nb)), xq(static_cast<size_t>(nb));
        std::vector<BlockQ4_0> w4(static_cast<size_t>(nb));
        quantizeRowQ8_0(w.data(), w8.data(), n);
        quantizeRowQ4_0(w.data(), w4.data(), n);
        quantizeRowQ8_0(x.data(), xq.data(), n);
        // Integer products are exact; only the per-block float accumulation order differs.
        const double scale = static_cast<double>(n);
        EXPECT_NEAR(simd->dotQ8_0(w8.data(), xq.data(), nb), ref.dotQ8_0(w8.data(), xq.data(), nb), 1e-5 * scale);
        EXPECT_NEAR(simd->dotQ4_0(w4.data(), xq.data(), nb), ref.dotQ4_0(w4.data(), xq.data(), nb), 1e-5 * scale);
    }
}

TEST_F(VecKernelsTest, ActivationQuantisationMatchesPortable) {
    const int64_t n = 32 * 50;
    auto x = randomFloats(static_cast<size_t>(n), 5);
    x[0] = 0.0f; // a block with an exact zero and extremes
    std::vector<BlockQ8_0> a(static_cast<size_t>(n / 32)), b(static_cast<size_t>(n / 32));
    ref.quantizeQ8_0(x.data(), a.data(), n);
    simd->quantizeQ8_0(x.data(), b.data(), n);
    for (size_t blk = 0; blk < a.size(); ++blk) {
        ASSERT_EQ(a[blk].d, b[blk].d) << "block " << blk;
        for (int j = 0; j < 32; ++j)
            ASSERT_LE(std::abs(a[blk].qs[j] - b[blk].qs[j]), 1) << "block " << blk << " j " << j; // ties may differ
    }
}

TEST_F(VecKernelsTest, AxpyMatchesPortable) {
    for (int64_t n : {1, 9, 64, 129}) {
        const auto x = randomFloats(static_cast<size_t>(n), 6);
        auto y1 = randomFloats(static_cast<size_t>(n), 7);
        auto y2 = y1;
        ref.axpy(0.37f, x.data(), y1.data(), n);
        simd->axpy(0.37f, x.data(), y2.data(), n);
        for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y1[static_cast<size_t>(i)], y2[static_cast<size_t>(i)], 1e-6f);
    }
}

TEST(VecDispatch, ChoosesAKernelTable) {
    const VecKernels& k = vecKernels();
    EXPECT_NE(k.name, nullptr);
    if (avx2VecKernels()) EXPECT_STREQ(k.name, "avx2");
    else EXPECT_STREQ(k.name, "portable");
}

TEST(VecKernelsX4, FourTokenDotsEqualSingleDotsBitForBit) {
    for (const VecKernels* k : {&portableVecKernels(), avx2VecKernels()}) {
        if (!k) continue;
        for (int64_t n : {32, 96, 288, 100, 7}) {
            const auto w = randomFloats(static_cast<size_t>(n), 11);
            const auto x = randomFloats(static_cast<size_t>(4 * (n + 3)), 12);
            const int64_t ldx = n + 3; // rows not packed: the stride is honoured
            std::vector<uint16_t> wh(static_cast<size_t>(n));
            for (int64_t i = 0; i < n; ++i) wh[static_cast<size_t>(i)] = floatToFp16(w[static_cast<size_t>(i)]);
            float out[4];
            k->dotF32x4(w.data(), x.data(), ldx, n, out);
            for (int t = 0; t < 4; ++t) EXPECT_EQ(out[t], k->dotF32(w.data(), x.data() + t * ldx, n)) << k->name << " f32 n=" << n;
            k->dotF16x4(wh.data(), x.data(), ldx, n, out);
            for (int t = 0; t < 4; ++t) EXPECT_EQ(out[t], k->dotF16(wh.data(), x.data() + t * ldx, n)) << k->name << " f16 n=" << n;
            if (n % 32 != 0) continue;
            const int64_t nb = n / 32;
            std::vector<BlockQ8_0> w8(static_cast<size_t>(nb)), xq(static_cast<size_t>(4 * (nb + 1)));
            std::vector<BlockQ4_0> w4(static_cast<size_t>(nb));
            quantizeRowQ8_0(w.data(), w8.data(), n);
            quantizeRowQ4_0(w.data(), w4.data(), n);
            for (int t = 0; t < 4; ++t) quantizeRowQ8_0(x.data() + t * ldx, xq.data() + t * (nb + 1), n);
            k->dotQ8_0x4(w8.data(), xq.data(), nb + 1, nb, out);
            for (int t = 0; t < 4; ++t) EXPECT_EQ(out[t], k->dotQ8_0(w8.data(), xq.data() + t * (nb + 1), nb)) << k->name;
            k->dotQ4_0x4(w4.data(), xq.data(), nb + 1, nb, out);
            for (int t = 0; t < 4; ++t) EXPECT_EQ(out[t], k->dotQ4_0(w4.data(), xq.data() + t * (nb + 1), nb)) << k->name;
        }
    }
}
