// Reference dequantisation of the 256-element super-block types (Q2_K ... Q6_K, IQ4_XS) and the
// Q8_K activation blocks (value positions from kernels/cpu/kquant_layout.h).
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/kquant_layout.h"
#include "kernels/cpu/quant.h"

#include <algorithm>
#include <cmath>

namespace mb::kernels {

namespace {
constexpr int64_t kQK = kSuperBlockSize;

// Q4_K and Q5_K: value = d * scale * q - dmin * min per sub-block of 32 (ggml's order of operations).
template <class Block, class Value>
void dequantizeK4Or5(const Block* x, float* y, int64_t n, Value value) {
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
        const float d = fp16ToFloat(x[b].d), dmin = fp16ToFloat(x[b].dmin);
        for (int s = 0; s < 8; ++s) {
            uint8_t sc = 0, m = 0;
            scaleMinK4(s, x[b].scales, sc, m);
            const float dl = d * static_cast<float>(sc), ml = dmin * static_cast<float>(m);
            for (int e = s * 32; e < s * 32 + 32; ++e) y[e] = dl * static_cast<float>(value(x[b], e)) - ml;
        }
    }
}
} // namespace

void dequantizeRowQ2_K(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ2_K*>(src);
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
        const float d = fp16ToFloat(x[b].d), dmin = fp16ToFloat(x[b].dmin);
        for (int s = 0; s < 16; ++s) {
            const float dl = d * static_cast<float>(x[b].scales[s] & 0xF);
            const float ml = dmin * static_cast<float>(x[b].scales[s] >> 4);
            for (int e = s * 16; e < s * 16 + 16; ++e) y[e] = dl * static_cast<float>(layout::q2(x[b], e)) - ml;
        }
    }
}

void dequantizeRowQ3_K(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ3_K*>(src);
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
        const float d = fp16ToFloat(x[b].d);
        for (int s = 0; s < 16; ++s) {
            const float dl = d * static_cast<float>(scaleQ3_K(x[b].scales, s) - 32);
            for (int e = s * 16; e < s * 16 + 16; ++e) y[e] = dl * static_cast<float>(layout::q3(x[b], e));
        }
    }
}

void dequantizeRowQ4_K(const void* src, float* y, int64_t n) {
    dequantizeK4Or5(static_cast<const BlockQ4_K*>(src), y, n,
                    [](const BlockQ4_K& b, int e) { return layout::q4(b.qs, e); });
}

void dequantizeRowQ5_K(const void* src, float* y, int64_t n) {
    dequantizeK4Or5(static_cast<const BlockQ5_K*>(src), y, n, [](const BlockQ5_K& b, int e) { return layout::q5(b, e); });
}

void dequantizeRowQ6_K(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockQ6_K*>(src);
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
        const float d = fp16ToFloat(x[b].d);
        for (int e = 0; e < kQK; ++e)
            y[e] = d * static_cast<float>(x[b].scales[e / 16]) * static_cast<float>(layout::q6(x[b], e));
    }
}

void dequantizeRowIq4Xs(const void* src, float* y, int64_t n) {
    const auto* x = static_cast<const BlockIq4Xs*>(src);
    for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
        const float d = fp16ToFloat(x[b].d);
        for (int s = 0; s < 8; ++s) {
            const float dl = d * static_cast<float>(layout::iq4XsScale(x[b], s));
            for (int e = s * 32; e < s * 32 + 32; ++e) y[e] = dl * static_cast<float>(layout::iq4Xs(x[b], e));
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
