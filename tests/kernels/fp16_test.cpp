// F16/BF16 conversions: exact round trips and round-to-nearest-even.
#include "kernels/cpu/fp16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

using namespace mb::kernels;

TEST(Fp16, EveryHalfRoundTripsExactly) {
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float f = fp16ToFloat(static_cast<uint16_t>(h));
        if (std::isnan(f)) {
            EXPECT_TRUE(std::isnan(fp16ToFloat(floatToFp16(f)))) << h;
            continue;
        }
        ASSERT_EQ(floatToFp16(f), h) << "half 0x" << std::hex << h;
    }
}

TEST(Fp16, KnownValues) {
    EXPECT_EQ(floatToFp16(1.0f), 0x3c00);
    EXPECT_EQ(floatToFp16(-2.0f), 0xc000);
    EXPECT_EQ(floatToFp16(65504.0f), 0x7bff);
    EXPECT_EQ(floatToFp16(1e6f), 0x7c00);                  // overflow -> inf
    EXPECT_EQ(floatToFp16(5.9604645e-8f), 0x0001);         // smallest subnormal
    EXPECT_EQ(floatToFp16(2.9802322e-8f), 0x0000);         // exactly half of it: ties to even
    EXPECT_FLOAT_EQ(fp16ToFloat(0x3555), 0.33325195f);
}

TEST(Fp16, RoundsToNearest) {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> mag(-20.0f, 16.0f);
    for (int i = 0; i < 200000; ++i) {
        const float x = std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 1000.0f, static_cast<int>(mag(rng))) *
                        (rng() % 2 ? 1.0f : -1.0f);
        const uint16_t h = floatToFp16(x);
        const double err = std::fabs(static_cast<double>(fp16ToFloat(h)) - x);
        for (int d : {-1, 1}) {
            const uint16_t other = static_cast<uint16_t>(h + d);
            if ((other & 0x7c00) == 0x7c00) continue; // inf/NaN neighbours
            if ((other ^ h) & 0x8000) continue;        // crossed the sign
            ASSERT_LE(err, std::fabs(static_cast<double>(fp16ToFloat(other)) - x)) << x;
        }
    }
}

TEST(Bf16, RoundTripAndRounding) {
    for (uint32_t h = 0; h < 0x10000; h += 7) {
        const float f = bf16ToFloat(static_cast<uint16_t>(h));
        if (std::isnan(f)) continue;
        ASSERT_EQ(floatToBf16(f), h);
    }
    EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
    // 1 + 2^-8 is exactly between two bf16 values: ties to even (down to 1.0).
    EXPECT_EQ(floatToBf16(1.00390625f), 0x3f80);
    EXPECT_EQ(floatToBf16(1.01171875f), 0x3f82);
}
