// Reference dequantisation of the 256-element super-block types (Q2_K ... Q6_K, IQ4_XS) and the
// Q8_K activation blocks, from the layouts in kernels/quant_blocks.h.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant.h"

#include <algorithm>
#include <cmath>

namespace mb::kernels {

namespace {
constexpr int64_t kQK = kSuperBlockSize;

// Element e's 2 low bits in Q2_K and Q3_K: byte (e / 128) * 32 + e % 32, shifted by 2 * ((e % 128) / 32).
inline int twoBits(const uint8_t* qs, int e) { return (qs[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3; }
} // namespace

void dequantizeRowQ2_K(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ2_K*>(src);
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
        const float d = fp16ToFloat(x[b].d), dmin = fp16ToFloat(x[b].dmin);
        for (int s = 0; s < 16; ++s) {
            const float dl = d * static_cast<float>(x[b].scales[s] & 0xF);
            const float ml = dmin * static_cast<float>(x[b].scales[s] >> 4);
            for (int e = s * 16; e < s * 16 + 16; ++e) y[e] = dl * static_cast<float>(twoBits(x[b].qs, e)) - ml;
        }
    }
}

void dequantizeRowQ3_K(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ3_K*>(src);
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
        const float d = fp16ToFloat(x[b].d);
        for (int s = 0; s < 16; ++s) {
            const float dl = d * static_cast<float>(scaleQ3_K(x[b].scales, s) - 32);
            for (int e = s * 16; e < s * 16 + 16; ++e) {
                const int high = (x[b].hmask[e % 32] >> (e / 32)) & 1;
                y[e] = dl * static_cast<float>(twoBits(x[b].qs, e) - (high ? 0 : 4));
            }
        }
    }
}

void dequantizeRowQ4_K(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ4_K*>(src);
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
        const float d = fp16ToFloat(x[b].d), dmin = fp16ToFloat(x[b].dmin);
        for (int s = 0; s < 8; ++s) {
            uint8_t sc = 0, m = 0;
            scaleMinK4(s, x[b].scales, sc, m);
            const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(m);
            const uint8_t* q = x[b].qs + (s / 2) * 32;
            const int shift = (s % 2) * 4;
            for (int l = 0; l < 32; ++l) y[s * 32 + l] = dl * static_cast<float>((q[l] >> shift) & 0xF) - ml;
        }
    }
}

void dequantizeRowQ5_K(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ5_K*>(src);
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
        const float d = fp16ToFloat(x[b].d), dmin = fp16ToFloat(x[b].dmin);
        for (int s = 0; s < 8; ++s) {
            uint8_t sc = 0, m = 0;
            scaleMinK4(s, x[b].scales, sc, m);
            const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(m);
            const uint8_t* q = x[b].qs + (s / 2) * 32;
            const int shift = (s % 2) * 4;
            for (int l = 0; l < 32; ++l) {
                const int v = ((q[l] >> shift) & 0xF) + (((x[b].qh[l] >> s) & 1) << 4);
                y[s * 32 + l] = dl * static_cast<float>(v) - ml;
            }
        }
    }
}

void dequantizeRowQ6_K(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ6_K*>(src);
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
        const float d = fp16ToFloat(x[b].d);
        for (int e = 0; e < kQK; ++e) {
            const int h = e / 128, i = e % 128;
            const int low = (x[b].ql[h * 64 + i % 64] >> (4 * (i / 64))) & 0xF;
            const int high = (x[b].qh[h * 32 + i % 32] >> (2 * (i / 32))) & 3;
            y[e] = d * static_cast<float>(x[b].scales[e / 16]) * static_cast<float>((low | (high << 4)) - 32);
        }
    }
}

void dequantizeRowIq4Xs(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockIq4Xs*>(src);
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
        const float d = fp16ToFloat(x[b].d);
        for (int s = 0; s < 8; ++s) {
            const int ls = ((x[b].scalesL[s / 2] >> (4 * (s % 2))) & 0xF) | (((x[b].scalesH >> (2 * s)) & 3) << 4);
            const float dl = d * static_cast<float>(ls - 32);
            const uint8_t* q = x[b].qs + s * 16;
            for (int j = 0; j < 16; ++j) {
                y[s * 32 + j] = dl * static_cast<float>(kIq4NlValues[q[j] & 0xF]);
                y[s * 32 + j + 16] = dl * static_cast<float>(kIq4NlValues[q[j] >> 4]);
            }
        }
    }
}

void dequantizeRowQ8_K(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ8_K*>(src);
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK)
        for (int e = 0; e < kQK; ++e) y[e] = x[b].d * static_cast<float>(x[b].qs[e]);
}

void quantizeRowQ8_K(const float* src, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ8_K*>(dst);
    for (int64_t b = 0; b < n / kQK; ++b, src += kQK) {
        float amax = 0.0f;
        for (int e = 0; e < kQK; ++e) amax = std::max(amax, std::fabs(src[e]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = d;
        for (int e = 0; e < kQK; ++e) y[b].qs[e] = static_cast<int8_t>(std::lround(src[e] * id));
        for (int j = 0; j < kQK / 16; ++j) {
            int sum = 0;
            for (int e = j * 16; e < j * 16 + 16; ++e) sum += y[b].qs[e];
            y[b].bsums[j] = static_cast<int16_t>(sum);
        }
    }
}

} // namespace mb::kernels
