// The table of tensor-type facts, and dequantisation of blocks made by hand from ggml's layouts.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant.h"
#include "kernels/tensor_type.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <vector>

using namespace mb::kernels;

TEST(TensorTypeTable, EveryIdHasOneRowWithItsOwnNameAndSize) {
    int rows = 0;
    for (uint32_t id = 0; id < 64; ++id) {
        const auto t = tensorTypeFromId(id);
        if (!t) continue;
        ++rows;
        const TensorTypeTraits& x = traits(*t);
        EXPECT_EQ(static_cast<uint32_t>(x.type), id);
        EXPECT_EQ(tensorTypeFromName(x.name), *t) << x.name;
        EXPECT_NE(x.toFloat, nullptr) << x.name;
        EXPECT_GT(x.blockBytes, 0u);
        EXPECT_EQ(rowBytes(*t, x.blockSize * 3), 3 * x.blockBytes);
    }
    EXPECT_EQ(rows, static_cast<int>(tensorTypeTable().size()));
    EXPECT_EQ(rows, 16);
    // Ids ggml has but this build does not compute with (Q8_1, the IQ2/IQ3/IQ1 types, TQ*).
    for (uint32_t id : {4u, 5u, 9u, 16u, 17u, 18u, 19u, 21u, 22u, 29u, 34u, 35u})
        EXPECT_FALSE(tensorTypeFromId(id)) << id;
}

TEST(TensorTypeTable, SizesAreGgmlsBlockLayouts) {
    // (type, elements per block, bytes per block) as ggml defines them.
    const struct {
        TensorType t;
        int64_t block;
        size_t bytes;
    } facts[] = {{TensorType::Q4_1, 32, 20},  {TensorType::Q5_0, 32, 22},    {TensorType::Q5_1, 32, 24},
                 {TensorType::Q2_K, 256, 84}, {TensorType::Q3_K, 256, 110},  {TensorType::Q4_K, 256, 144},
                 {TensorType::Q5_K, 256, 176}, {TensorType::Q6_K, 256, 210}, {TensorType::Q8_K, 256, 292},
                 {TensorType::IQ4_NL, 32, 18}, {TensorType::IQ4_XS, 256, 136}};
    for (const auto& f : facts) {
        EXPECT_EQ(blockSize(f.t), f.block) << tensorTypeName(f.t);
        EXPECT_EQ(blockBytes(f.t), f.bytes) << tensorTypeName(f.t);
        EXPECT_TRUE(isQuantised(f.t));
    }
    EXPECT_FALSE(isQuantised(TensorType::BF16));
}

// Every writable type quantises Gaussian rows and reads them back within its own error: the
// relative RMS error bounds are about 1.3x what this quantiser measured (llama.cpp's own files'
// errors on real tensors are checked in tests/engine/kquant_quantize_test.cpp).
TEST(TensorTypeTable, EveryWritableTypeRoundTripsWithinItsError) {
    const struct {
        TensorType t;
        double relRms;
    } bounds[] = {{TensorType::Q8_0, 0.007}, {TensorType::Q4_0, 0.11},  {TensorType::Q4_1, 0.10},
                  {TensorType::Q5_0, 0.056}, {TensorType::Q5_1, 0.049}, {TensorType::Q2_K, 0.35},
                  {TensorType::Q3_K, 0.185}, {TensorType::Q4_K, 0.096}, {TensorType::Q5_K, 0.047},
                  {TensorType::Q6_K, 0.023}, {TensorType::IQ4_NL, 0.097}, {TensorType::IQ4_XS, 0.098},
                  {TensorType::Q8_K, 0.0094}};
    const int64_t n = 256 * 16;
    std::vector<float> x(n), y(n);
    uint32_t state = 12345;
    for (auto& v : x) { // Box-Muller on a small LCG: Gaussian values, fixed seed
        state = state * 1664525u + 1013904223u;
        const double u1 = (state >> 8) * 0x1.0p-24 + 0x1.0p-25;
        state = state * 1664525u + 1013904223u;
        const double u2 = (state >> 8) * 0x1.0p-24;
        v = static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
    }
    for (const auto& b : bounds) {
        ASSERT_NE(traits(b.t).fromFloat, nullptr) << tensorTypeName(b.t);
        std::vector<uint8_t> q(rowBytes(b.t, n));
        quantizeRow(b.t, x.data(), q.data(), n);
        dequantizeRow(b.t, q.data(), y.data(), n);
        double err = 0, norm = 0;
        for (int64_t i = 0; i < n; ++i) err += (x[i] - y[i]) * (x[i] - y[i]), norm += x[i] * x[i];
        const double rel = std::sqrt(err / norm);
        EXPECT_LE(rel, b.relRms) << tensorTypeName(b.t);
        std::cout << tensorTypeName(b.t) << ": relative RMS error " << rel << "\n";
    }
    // All zeros stay zeros (no NaN from a zero scale).
    std::vector<float> zeros(256, 0.0f), out(256, 1.0f);
    for (const auto& b : bounds) {
        std::vector<uint8_t> q(rowBytes(b.t, 256));
        quantizeRow(b.t, zeros.data(), q.data(), 256);
        dequantizeRow(b.t, q.data(), out.data(), 256);
        for (float v : out) ASSERT_EQ(v, 0.0f) << tensorTypeName(b.t);
    }
}

TEST(Dequant, Q4_1AndQ5FormatsFollowTheirLayouts) {
    BlockQ4_1 a{};
    a.d = floatToFp16(0.5f);
    a.m = floatToFp16(-2.0f);
    for (int j = 0; j < 16; ++j) a.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    float y[32];
    dequantizeRow(TensorType::Q4_1, &a, y, 32);
    for (int j = 0; j < 16; ++j) {
        EXPECT_EQ(y[j], j * 0.5f - 2.0f);
        EXPECT_EQ(y[j + 16], (15 - j) * 0.5f - 2.0f);
    }
    BlockQ5_0 b{};
    b.d = floatToFp16(0.25f);
    const uint32_t qh = 0x80000001u; // fifth bit of element 0 and of element 31
    std::memcpy(b.qh, &qh, 4);
    for (int j = 0; j < 16; ++j) b.qs[j] = 0x33;
    dequantizeRow(TensorType::Q5_0, &b, y, 32);
    EXPECT_EQ(y[0], (19 - 16) * 0.25f);
    EXPECT_EQ(y[1], (3 - 16) * 0.25f);
    EXPECT_EQ(y[16], (3 - 16) * 0.25f);
    EXPECT_EQ(y[31], (19 - 16) * 0.25f);
    BlockQ5_1 c{};
    c.d = floatToFp16(1.0f);
    c.m = floatToFp16(0.5f);
    std::memcpy(c.qh, &qh, 4);
    for (int j = 0; j < 16; ++j) c.qs[j] = 0xF0;
    dequantizeRow(TensorType::Q5_1, &c, y, 32);
    EXPECT_EQ(y[0], 16.5f);
    EXPECT_EQ(y[1], 0.5f);
    EXPECT_EQ(y[16], 15.5f);
    EXPECT_EQ(y[31], 31.5f);
}

TEST(Dequant, Iq4FormatsUseTheNonLinearLevels) {
    BlockIq4Nl a{};
    a.d = floatToFp16(2.0f);
    for (int j = 0; j < 16; ++j) a.qs[j] = static_cast<uint8_t>(j | ((15 - j) << 4));
    float y[256];
    dequantizeRow(TensorType::IQ4_NL, &a, y, 32);
    EXPECT_EQ(y[0], -254.0f);
    EXPECT_EQ(y[15], 226.0f);
    EXPECT_EQ(y[16], 226.0f);
    BlockIq4Xs b{};
    b.d = floatToFp16(1.0f);
    // Sub-block 0: scale 63 - 32 = 31 (low 0xF, high 3); sub-block 1: 0 - 32; sub-block 7: 33 - 32.
    b.scalesL[0] = 0x0F;
    b.scalesH = static_cast<uint16_t>(3 | (2 << 14));
    b.scalesL[3] = 0x10;
    for (int j = 0; j < 128; ++j) b.qs[j] = 0x80; // low nibble 0 (-127), high 8 (1)
    dequantizeRow(TensorType::IQ4_XS, &b, y, 256);
    EXPECT_EQ(y[0], 31.0f * -127.0f);
    EXPECT_EQ(y[16], 31.0f);
    EXPECT_EQ(y[32], -32.0f * -127.0f);
    EXPECT_EQ(y[224], 1.0f * -127.0f);
    EXPECT_EQ(y[255], 1.0f);
}

TEST(Dequant, KQuantExtremeScalesAndMins) {
    // Q4_K with every 6-bit scale and min at 63 and every nibble 15: d * 63 * 15 - dmin * 63.
    BlockQ4_K a{};
    a.d = floatToFp16(1.0f);
    a.dmin = floatToFp16(0.5f);
    std::memset(a.scales, 0xFF, sizeof a.scales);
    std::memset(a.qs, 0xFF, sizeof a.qs);
    float y[256];
    dequantizeRow(TensorType::Q4_K, &a, y, 256);
    for (float v : y) EXPECT_EQ(v, 63.0f * 15.0f - 0.5f * 63.0f);
    // Q6_K with scale -128 and q = 0 (-32): d * -128 * -32.
    BlockQ6_K b{};
    b.d = floatToFp16(0.25f);
    std::memset(b.scales, 0x80, sizeof b.scales);
    dequantizeRow(TensorType::Q6_K, &b, y, 256);
    for (float v : y) EXPECT_EQ(v, 0.25f * 128.0f * 32.0f);
    // Q3_K: scale s's 6 bits split over two places; all-ones -> 63 - 32 = 31; high bit set -> q.
    BlockQ3_K c{};
    c.d = floatToFp16(1.0f);
    std::memset(c.scales, 0xFF, sizeof c.scales);
    std::memset(c.hmask, 0xFF, sizeof c.hmask);
    std::memset(c.qs, 0xFF, sizeof c.qs);
    dequantizeRow(TensorType::Q3_K, &c, y, 256);
    for (float v : y) EXPECT_EQ(v, 31.0f * 3.0f);
    EXPECT_EQ(scaleQ3_K(c.scales, 15), 63);
    // A NaN scale gives NaN values, not a crash; an infinite one gives infinities.
    a.d = 0x7E00;
    dequantizeRow(TensorType::Q4_K, &a, y, 256);
    EXPECT_TRUE(std::isnan(y[0]));
    BlockQ2_K d{};
    d.d = 0x7C00;
    d.scales[0] = 1;
    d.qs[0] = 1;
    dequantizeRow(TensorType::Q2_K, &d, y, 256);
    EXPECT_TRUE(std::isinf(y[0]));
}

TEST(Dequant, Q8_KRoundTripsWithinHalfAStepAndSumsItsBlocks) {
    std::vector<float> x(512);
    for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i) * 0.37f) * 3.0f;
    std::vector<BlockQ8_K> q(2);
    quantizeRow(TensorType::Q8_K, x.data(), q.data(), 512);
    std::vector<float> y(512);
    dequantizeRow(TensorType::Q8_K, q.data(), y.data(), 512);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_LE(std::fabs(x[i] - y[i]), q[i / 256].d * 0.5f + 1e-6f);
    for (const auto& b : q)
        for (int j = 0; j < 16; ++j) {
            int s = 0;
            for (int e = 0; e < 16; ++e) s += b.qs[j * 16 + e];
            EXPECT_EQ(b.bsums[j], s);
        }
}
