// Q8_0/Q4_0 quantise-dequantise error stays within each format's bound.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace mb::kernels;

namespace {
std::vector<float> randomRow(int64_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = d(rng);
    return x;
}
} // namespace

TEST(QuantQ8_0, ErrorWithinHalfStep) {
    const int64_t n = 32 * 37;
    for (uint32_t seed = 0; seed < 5; ++seed) {
        const auto x = randomRow(n, seed, seed + 0.5f);
        std::vector<BlockQ8_0> q(static_cast<size_t>(n / 32));
        std::vector<float> y(static_cast<size_t>(n));
        quantizeRowQ8_0(x.data(), q.data(), n);
        dequantizeRowQ8_0(q.data(), y.data(), n);
        for (int64_t b = 0; b < n / 32; ++b) {
            float amax = 0;
            for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[static_cast<size_t>(b * 32 + j)]));
            const float d = amax / 127.0f;
            // Half a step, plus the relative error of storing d in F16 (2^-11) times 127 steps.
            const float bound = d * 0.5f + amax * 0x1.0p-11f + 1e-7f;
            for (int j = 0; j < 32; ++j) {
                const size_t i = static_cast<size_t>(b * 32 + j);
                ASSERT_LE(std::fabs(x[i] - y[i]), bound) << "block " << b << " element " << j;
            }
        }
    }
}

TEST(QuantQ4_0, ErrorWithinOneStep) {
    const int64_t n = 32 * 41;
    const auto x = randomRow(n, 11);
    std::vector<BlockQ4_0> q(static_cast<size_t>(n / 32));
    std::vector<float> y(static_cast<size_t>(n));
    quantizeRowQ4_0(x.data(), q.data(), n);
    dequantizeRowQ4_0(q.data(), y.data(), n);
    for (int64_t b = 0; b < n / 32; ++b) {
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[static_cast<size_t>(b * 32 + j)]));
        const float d = amax / 8.0f;
        for (int j = 0; j < 32; ++j) {
            const size_t i = static_cast<size_t>(b * 32 + j);
            // Inside [-8d, 7d] the error is half a step; the clipped end loses at most one step.
            ASSERT_LE(std::fabs(x[i] - y[i]), d * 1.0f + amax * 0x1.0p-10f) << "block " << b << " element " << j;
        }
    }
}

TEST(QuantQ4_0, NibbleLayoutMatchesGgml) {
    // Element j < 16 is the low nibble of qs[j], element j >= 16 the high nibble of qs[j-16].
    BlockQ4_0 blk{};
    blk.d = floatToFp16(1.0f);
    for (int j = 0; j < 16; ++j) blk.qs[j] = static_cast<uint8_t>((j & 0x0f) | ((15 - j) << 4));
    float y[32];
    dequantizeRowQ4_0(&blk, y, 32);
    for (int j = 0; j < 16; ++j) {
        EXPECT_EQ(y[j], static_cast<float>(j - 8));
        EXPECT_EQ(y[j + 16], static_cast<float>(15 - j - 8));
    }
}

TEST(QuantQ8_0, ZeroBlockIsExact) {
    std::vector<float> x(64, 0.0f), y(64, 1.0f);
    std::vector<BlockQ8_0> q(2);
    quantizeRowQ8_0(x.data(), q.data(), 64);
    dequantizeRowQ8_0(q.data(), y.data(), 64);
    for (float v : y) EXPECT_EQ(v, 0.0f);
}

TEST(Quant, RowRoundTripEveryType) {
    const int64_t n = 96;
    const auto x = randomRow(n, 3);
    for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::BF16, TensorType::Q8_0, TensorType::Q4_0}) {
        std::vector<uint8_t> packed(rowBytes(t, n));
        std::vector<float> y(static_cast<size_t>(n));
        quantizeRow(t, x.data(), packed.data(), n);
        dequantizeRow(t, packed.data(), y.data(), n);
        const float tol = t == TensorType::F32 ? 0.0f : t == TensorType::Q4_0 ? 0.6f : t == TensorType::Q8_0 ? 0.03f : 0.02f;
        for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(x[static_cast<size_t>(i)], y[static_cast<size_t>(i)], tol) << tensorTypeName(t);
    }
}
