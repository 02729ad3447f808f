// Conversions between float and the 16-bit float formats F16 (IEEE half) and BF16.
#pragma once

#include <cstdint>
#include <cstring>

namespace mb::kernels {

// IEEE 754 half -> float, exact (subnormals, infinities and NaN included).
inline float fp16ToFloat(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else { // subnormal: normalise
            exp = 127 - 15 + 1;
            while ((mant & 0x400u) == 0) {
                mant <<= 1;
                --exp;
            }
            mant &= 0x3ffu;
            bits = sign | (exp << 23) | (mant << 13);
        }
    } else if (exp == 0x1f) {
        bits = sign | 0x7f800000u | (mant << 13);
    } else {
        bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// float -> IEEE half with round-to-nearest-even; overflow gives infinity.
uint16_t floatToFp16(float f);

inline float bf16ToFloat(uint16_t h) {
    const uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// float -> BF16 with round-to-nearest-even; NaN stays NaN.
uint16_t floatToBf16(float f);

} // namespace mb::kernels
