// Reference (portable) quantisation and dequantisation of rows of the 32-element and float types.
#include "kernels/cpu/quant.h"

#include "kernels/cpu/fp16.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace mb::kernels {

void quantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) {
    const int64_t nb = n / kQ8_0BlockSize;
    for (int64_t b = 0; b < nb; ++b) {
        const float* xb = x + b * kQ8_0BlockSize;
        float amax = 0.0f;
        for (int j = 0; j < kQ8_0BlockSize; ++j) amax = std::max(amax, std::fabs(xb[j]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = floatToFp16(d);
        for (int j = 0; j < kQ8_0BlockSize; ++j)
            y[b].qs[j] = static_cast<int8_t>(std::lround(xb[j] * id));
    }
}

void quantizeRowQ4_0(const float* x, BlockQ4_0* y, int64_t n) {
    const int64_t nb = n / kQ4_0BlockSize;
    constexpr int kHalf = kQ4_0BlockSize / 2;
    for (int64_t b = 0; b < nb; ++b) {
        const float* xb = x + b * kQ4_0BlockSize;
        float amax = 0.0f, signedMax = 0.0f;
        for (int j = 0; j < kQ4_0BlockSize; ++j) {
            if (std::fabs(xb[j]) > amax) {
                amax = std::fabs(xb[j]);
                signedMax = xb[j];
            }
        }
        // Map the extreme value to -8 so the asymmetric range [-8, 7] is used fully.
        const float d = signedMax / -8.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = floatToFp16(d);
        for (int j = 0; j < kHalf; ++j) {
            const int lo = std::clamp(static_cast<int>(std::lround(xb[j] * id)) + 8, 0, 15);
            const int hi = std::clamp(static_cast<int>(std::lround(xb[j + kHalf] * id)) + 8, 0, 15);
            y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
        }
    }
}

void dequantizeRowQ8_0(const BlockQ8_0* x, float* y, int64_t n) {
    const int64_t nb = n / kQ8_0BlockSize;
    for (int64_t b = 0; b < nb; ++b) {
        const float d = fp16ToFloat(x[b].d);
        for (int j = 0; j < kQ8_0BlockSize; ++j) y[b * kQ8_0BlockSize + j] = d * x[b].qs[j];
    }
}

void dequantizeRowQ4_0(const BlockQ4_0* x, float* y, int64_t n) {
    const int64_t nb = n / kQ4_0BlockSize;
    constexpr int kHalf = kQ4_0BlockSize / 2;
    for (int64_t b = 0; b < nb; ++b) {
        const float d = fp16ToFloat(x[b].d);
        float* yb = y + b * kQ4_0BlockSize;
        for (int j = 0; j < kHalf; ++j) {
            yb[j] = d * static_cast<float>((x[b].qs[j] & 0x0f) - 8);
            yb[j + kHalf] = d * static_cast<float>((x[b].qs[j] >> 4) - 8);
        }
    }
}

// The 32-element formats beyond Q8_0 and Q4_0. Element j < 16 of a block is the low nibble of
// qs[j], element j + 16 the high nibble; the fifth bit of Q5_* is bit j (j + 16) of qh.
void dequantizeRowQ4_1(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ4_1*>(src);
    for (int64_t b = 0; b < n / kLegacyBlockSize; ++b, y += kLegacyBlockSize) {
        const float d = fp16ToFloat(x[b].d), m = fp16ToFloat(x[b].m);
        for (int j = 0; j < 16; ++j) {
            y[j] = static_cast<float>(x[b].qs[j] & 0xF) * d + m;
            y[j + 16] = static_cast<float>(x[b].qs[j] >> 4) * d + m;
        }
    }
}

namespace {
// The 5-bit values of element j and j + 16 of a Q5_0/Q5_1 block.
inline void fiveBits(const uint8_t* qs, const uint8_t* qhBytes, int j, int& lo, int& hi) {
    uint32_t qh = 0;
    std::memcpy(&qh, qhBytes, 4); // little-endian, as stored
    lo = (qs[j] & 0xF) | static_cast<int>(((qh >> j) << 4) & 0x10);
    hi = (qs[j] >> 4) | static_cast<int>((qh >> (j + 12)) & 0x10);
}
} // namespace

void dequantizeRowQ5_0(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ5_0*>(src);
    for (int64_t b = 0; b < n / kLegacyBlockSize; ++b, y += kLegacyBlockSize) {
        const float d = fp16ToFloat(x[b].d);
        for (int j = 0; j < 16; ++j) {
            int lo = 0, hi = 0;
            fiveBits(x[b].qs, x[b].qh, j, lo, hi);
            y[j] = static_cast<float>(lo - 16) * d;
            y[j + 16] = static_cast<float>(hi - 16) * d;
        }
    }
}

void dequantizeRowQ5_1(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ5_1*>(src);
    for (int64_t b = 0; b < n / kLegacyBlockSize; ++b, y += kLegacyBlockSize) {
        const float d = fp16ToFloat(x[b].d), m = fp16ToFloat(x[b].m);
        for (int j = 0; j < 16; ++j) {
            int lo = 0, hi = 0;
            fiveBits(x[b].qs, x[b].qh, j, lo, hi);
            y[j] = static_cast<float>(lo) * d + m;
            y[j + 16] = static_cast<float>(hi) * d + m;
        }
    }
}

void dequantizeRowIq4Nl(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockIq4Nl*>(src);
    for (int64_t b = 0; b < n / kLegacyBlockSize; ++b, y += kLegacyBlockSize) {
        const float d = fp16ToFloat(x[b].d);
        for (int j = 0; j < 16; ++j) {
            y[j] = d * static_cast<float>(kIq4NlValues[x[b].qs[j] & 0xF]);
            y[j + 16] = d * static_cast<float>(kIq4NlValues[x[b].qs[j] >> 4]);
        }
    }
}

void dequantizeRowF32(const void* src, float* dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void dequantizeRowF16(const void* src, float* dst, int64_t n) {
    const auto* s = static_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = fp16ToFloat(s[i]);
}

void dequantizeRowBF16(const void* src, float* dst, int64_t n) {
    const auto* s = static_cast<const uint16_t*>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = bf16ToFloat(s[i]);
}

void quantizeRowF32(const float* src, void* dst, int64_t n) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

void quantizeRowF16(const float* src, void* dst, int64_t n) {
    auto* d = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = floatToFp16(src[i]);
}

void quantizeRowBF16(const float* src, void* dst, int64_t n) {
    auto* d = static_cast<uint16_t*>(dst);
    for (int64_t i = 0; i < n; ++i) d[i] = floatToBf16(src[i]);
}

void dequantizeRow(TensorType type, const void* src, float* dst, int64_t n) { traits(type).toFloat(src, dst, n); }

void quantizeRow(TensorType type, const float* src, void* dst, int64_t n) {
    const TensorTypeTraits& t = traits(type);
    if (!t.fromFloat)
        throw std::invalid_argument("the engine cannot write " + std::string(t.name) + " tensors");
    t.fromFloat(src, dst, n);
}

} // namespace mb::kernels
