// Reference (portable) quantisation and dequantisation of rows.
#include "kernels/cpu/quant.h"

#include "kernels/cpu/fp16.h"

#include <algorithm>
#include <cmath>
#include <cstring>

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

void dequantizeRow(TensorType type, const void* src, float* dst, int64_t n) {
    switch (type) {
    case TensorType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case TensorType::F16: {
        const auto* s = static_cast<const uint16_t*>(src);
        for (int64_t i = 0; i < n; ++i) dst[i] = fp16ToFloat(s[i]);
        return;
    }
    case TensorType::BF16: {
        const auto* s = static_cast<const uint16_t*>(src);
        for (int64_t i = 0; i < n; ++i) dst[i] = bf16ToFloat(s[i]);
        return;
    }
    case TensorType::Q8_0: dequantizeRowQ8_0(static_cast<const BlockQ8_0*>(src), dst, n); return;
    case TensorType::Q4_0: dequantizeRowQ4_0(static_cast<const BlockQ4_0*>(src), dst, n); return;
    }
}

void quantizeRow(TensorType type, const float* src, void* dst, int64_t n) {
    switch (type) {
    case TensorType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float)); return;
    case TensorType::F16: {
        auto* d = static_cast<uint16_t*>(dst);
        for (int64_t i = 0; i < n; ++i) d[i] = floatToFp16(src[i]);
        return;
    }
    case TensorType::BF16: {
        auto* d = static_cast<uint16_t*>(dst);
        for (int64_t i = 0; i < n; ++i) d[i] = floatToBf16(src[i]);
        return;
    }
    case TensorType::Q8_0: quantizeRowQ8_0(src, static_cast<BlockQ8_0*>(dst), n); return;
    case TensorType::Q4_0: quantizeRowQ4_0(src, static_cast<BlockQ4_0*>(dst), n); return;
    }
}

} // namespace mb::kernels
