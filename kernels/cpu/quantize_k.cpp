// Quantising F32 rows to the k-quants, IQ4_NL/IQ4_XS and Q4_1/Q5_0/Q5_1: per sub-block a scale
// (and min) chosen by least squares over a few candidates, then the super-block's quantised
// scales, then every value rounded again against the scale it will be read with.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace mb::kernels {

namespace {

constexpr int64_t kQK = kSuperBlockSize;

inline int nearest(float v) { return static_cast<int>(std::lround(v)); }

// The value of largest magnitude, with its sign (0 for an all-zero block).
float signedMax(const float* x, int n) {
    float m = 0.0f;
    for (int i = 0; i < n; ++i)
        if (std::fabs(x[i]) > std::fabs(m)) m = x[i];
    return m;
}

// Symmetric levels -nmax..nmax-1: the scale s minimising sum (x - s q)^2 among candidates that map
// the extreme value near -nmax, each refined by least squares over its rounded q.
float symmetricScale(const float* x, int n, int nmax) {
    const float m = signedMax(x, n);
    if (m == 0.0f) return 0.0f;
    float best = m / static_cast<float>(-nmax), bestErr = INFINITY;
    for (int step = -6; step <= 6; ++step) {
        const float s0 = m / (static_cast<float>(-nmax) + 0.1f * static_cast<float>(step));
        double xq = 0, qq = 0;
        for (int i = 0; i < n; ++i) {
            const int q = std::clamp(nearest(x[i] / s0), -nmax, nmax - 1);
            xq += static_cast<double>(x[i]) * q;
            qq += static_cast<double>(q) * q;
        }
        if (qq == 0) continue;
        const auto s = static_cast<float>(xq / qq);
        double err = 0;
        for (int i = 0; i < n; ++i) {
            const int q = std::clamp(nearest(x[i] / s), -nmax, nmax - 1);
            err += (x[i] - s * q) * (x[i] - s * q);
        }
        if (err < bestErr) bestErr = static_cast<float>(err), best = s;
    }
    return best;
}

// Asymmetric levels 0..nmax with x ~ s q - m, m >= 0 (the block's minimum, or 0 when every value
// is positive): a few rounds of fitting (s, m) by least squares to the current q.
void scaleAndMin(const float* x, int n, int nmax, float& scale, float& min) {
    float lo = *std::min_element(x, x + n), hi = *std::max_element(x, x + n);
    lo = std::min(lo, 0.0f);
    if (hi <= lo) {
        scale = 0.0f, min = -lo;
        return;
    }
    float s = (hi - lo) / static_cast<float>(nmax), m = -lo;
    for (int round = 0; round < 4; ++round) {
        double sq = 0, sqq = 0, sx = 0, sxq = 0;
        for (int i = 0; i < n; ++i) {
            const int q = std::clamp(nearest((x[i] + m) / s), 0, nmax);
            sq += q, sqq += static_cast<double>(q) * q, sx += x[i], sxq += static_cast<double>(x[i]) * q;
        }
        const double det = n * sqq - sq * sq;
        if (det <= 0) break;
        const double ns = (n * sxq - sq * sx) / det, nm = (sq * sxq - sqq * sx) / det; // x = ns q - nm
        if (ns <= 0 || nm < 0) break;
        s = static_cast<float>(ns), m = static_cast<float>(nm);
    }
    scale = s, min = m;
}

// Q4_K / Q5_K's 8 scales and mins (6 bits each) into the 12 bytes scaleMinK4 reads.
void packScaleMinK4(const uint8_t* ls, const uint8_t* lm, uint8_t* out) {
    std::memset(out, 0, 12);
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            out[j] = ls[j];
            out[j + 4] = lm[j];
        } else {
            out[j + 4] = static_cast<uint8_t>((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
            out[j - 4] |= static_cast<uint8_t>((ls[j] >> 4) << 6);
            out[j] |= static_cast<uint8_t>((lm[j] >> 4) << 6);
        }
    }
}

// The super-block scale for sub-block scales in 0..levels (unsigned) and each one's level.
float superScale(const float* v, int n, int levels, uint8_t* out) {
    const float mx = *std::max_element(v, v + n);
    const float d = mx > 0.0f ? mx / static_cast<float>(levels) : 0.0f;
    const float id = d > 0.0f ? 1.0f / d : 0.0f;
    for (int i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(std::clamp(nearest(v[i] * id), 0, levels));
    return d;
}

// Q4_K (bits 4) and Q5_K (bits 5): values 0..2^bits - 1 in sub-blocks of 32.
template <int kBits, class Block>
void quantizeK4Or5(const float* x, Block& b) {
    constexpr int nmax = (1 << kBits) - 1;
    float sc[8], mn[8];
    for (int s = 0; s < 8; ++s) scaleAndMin(x + s * 32, 32, nmax, sc[s], mn[s]);
    uint8_t ls[8], lm[8];
    const float d = superScale(sc, 8, 63, ls), dmin = superScale(mn, 8, 63, lm);
    b.d = floatToFp16(d);
    b.dmin = floatToFp16(dmin);
    packScaleMinK4(ls, lm, b.scales);
    std::memset(b.qs, 0, sizeof b.qs);
    if constexpr (kBits == 5) std::memset(b.qh, 0, sizeof b.qh);
    const float dq = fp16ToFloat(b.d), mq = fp16ToFloat(b.dmin);
    for (int s = 0; s < 8; ++s) {
        const float step = dq * ls[s], off = mq * lm[s];
        for (int l = 0; l < 32; ++l) {
            const int q = step > 0.0f ? std::clamp(nearest((x[s * 32 + l] + off) / step), 0, nmax) : 0;
            b.qs[(s / 2) * 32 + l] |= static_cast<uint8_t>((q & 0xF) << (4 * (s % 2)));
            if constexpr (kBits == 5) b.qh[l] |= static_cast<uint8_t>((q >> 4) << s);
        }
    }
}

} // namespace

void quantizeRowQ4_K(const float* src, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ4_K*>(dst);
    for (int64_t b = 0; b < n / kQK; ++b) quantizeK4Or5<4>(src + b * kQK, y[b]);
}

void quantizeRowQ5_K(const float* src, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ5_K*>(dst);
    for (int64_t b = 0; b < n / kQK; ++b) quantizeK4Or5<5>(src + b * kQK, y[b]);
}

void quantizeRowQ6_K(const float* src, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ6_K*>(dst);
    for (int64_t b = 0; b < n / kQK; ++b, src += kQK) {
        float sc[16];
        for (int s = 0; s < 16; ++s) sc[s] = symmetricScale(src + s * 16, 16, 32);
        const float m = signedMax(sc, 16);
        const float d = m / -128.0f;
        BlockQ6_K& o = y[b];
        std::memset(&o, 0, sizeof o);
        o.d = floatToFp16(d);
        const float dq = fp16ToFloat(o.d);
        for (int s = 0; s < 16; ++s) {
            o.scales[s] = static_cast<int8_t>(dq != 0.0f ? std::clamp(nearest(sc[s] / dq), -128, 127) : 0);
            const float step = dq * static_cast<float>(o.scales[s]);
            for (int e = s * 16; e < s * 16 + 16; ++e) {
                const int q = (step != 0.0f ? std::clamp(nearest(src[e] / step), -32, 31) : 0) + 32;
                const int h = e / 128, i = e % 128;
                o.ql[h * 64 + i % 64] |= static_cast<uint8_t>((q & 0xF) << (4 * (i / 64)));
                o.qh[h * 32 + i % 32] |= static_cast<uint8_t>((q >> 4) << (2 * (i / 32)));
            }
        }
    }
}

void quantizeRowQ3_K(const float* src, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ3_K*>(dst);
    for (int64_t b = 0; b < n / kQK; ++b, src += kQK) {
        float sc[16];
        for (int s = 0; s < 16; ++s) sc[s] = symmetricScale(src + s * 16, 16, 4);
        const float d = signedMax(sc, 16) / -32.0f;
        BlockQ3_K& o = y[b];
        std::memset(&o, 0, sizeof o);
        o.d = floatToFp16(d);
        const float dq = fp16ToFloat(o.d);
        for (int s = 0; s < 16; ++s) {
            const int l = (dq != 0.0f ? std::clamp(nearest(sc[s] / dq), -32, 31) : 0) + 32;
            o.scales[s % 8] |= static_cast<uint8_t>((l & 0xF) << (s < 8 ? 0 : 4));
            o.scales[8 + s % 4] |= static_cast<uint8_t>((l >> 4) << (2 * (s / 4)));
            const float step = dq * static_cast<float>(l - 32);
            for (int e = s * 16; e < s * 16 + 16; ++e) {
                const int q = (step != 0.0f ? std::clamp(nearest(src[e] / step), -4, 3) : 0) + 4; // 0..7
                o.qs[(e / 128) * 32 + e % 32] |= static_cast<uint8_t>((q & 3) << (2 * ((e % 128) / 32)));
                if (q >= 4) o.hmask[e % 32] |= static_cast<uint8_t>(1u << (e / 32));
            }
        }
    }
}

void quantizeRowQ2_K(const float* src, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ2_K*>(dst);
    for (int64_t b = 0; b < n / kQK; ++b, src += kQK) {
        float sc[16], mn[16];
        for (int s = 0; s < 16; ++s) scaleAndMin(src + s * 16, 16, 3, sc[s], mn[s]);
        uint8_t ls[16], lm[16];
        const float d = superScale(sc, 16, 15, ls), dmin = superScale(mn, 16, 15, lm);
        BlockQ2_K& o = y[b];
        std::memset(&o, 0, sizeof o);
        o.d = floatToFp16(d);
        o.dmin = floatToFp16(dmin);
        const float dq = fp16ToFloat(o.d), mq = fp16ToFloat(o.dmin);
        for (int s = 0; s < 16; ++s) {
            o.scales[s] = static_cast<uint8_t>(ls[s] | (lm[s] << 4));
            const float step = dq * ls[s], off = mq * lm[s];
            for (int e = s * 16; e < s * 16 + 16; ++e) {
                const int q = step > 0.0f ? std::clamp(nearest((src[e] + off) / step), 0, 3) : 0;
                o.qs[(e / 128) * 32 + e % 32] |= static_cast<uint8_t>(q << (2 * ((e % 128) / 32)));
            }
        }
    }
}

namespace {

// The IQ4 level nearest v (levels ascending).
int nearestLevel(float v) {
    int best = 0;
    for (int i = 1; i < 16; ++i)
        if (std::fabs(v - kIq4NlValues[i]) < std::fabs(v - kIq4NlValues[best])) best = i;
    return best;
}

// The scale s minimising sum (x - s L[idx])^2 over candidates mapping the extreme near either end.
float iq4Scale(const float* x, int n) {
    const float m = signedMax(x, n);
    if (m == 0.0f) return 0.0f;
    float best = m / -127.0f, bestErr = INFINITY;
    for (int step = -8; step <= 8; ++step) {
        const float s0 = m / (-127.0f + 2.0f * static_cast<float>(step));
        double xl = 0, ll = 0;
        for (int i = 0; i < n; ++i) {
            const double l = kIq4NlValues[nearestLevel(x[i] / s0)];
            xl += x[i] * l, ll += l * l;
        }
        const auto s = static_cast<float>(xl / ll);
        double err = 0;
        for (int i = 0; i < n; ++i) {
            const float e = x[i] - s * static_cast<float>(kIq4NlValues[nearestLevel(x[i] / s)]);
            err += static_cast<double>(e) * e;
        }
        if (err < bestErr) bestErr = static_cast<float>(err), best = s;
    }
    return best;
}

// 32 values as IQ4 nibbles against `step` (element j low nibble of qs[j], j + 16 high).
void iq4Nibbles(const float* x, float step, uint8_t* qs) {
    for (int j = 0; j < 16; ++j) {
        const int lo = step != 0.0f ? nearestLevel(x[j] / step) : nearestLevel(0.0f);
        const int hi = step != 0.0f ? nearestLevel(x[j + 16] / step) : nearestLevel(0.0f);
        qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
}

} // namespace

void quantizeRowIq4Nl(const float* src, void* dst, int64_t n) {
    auto* y = static_cast<BlockIq4Nl*>(dst);
    for (int64_t b = 0; b < n / kLegacyBlockSize; ++b, src += kLegacyBlockSize) {
        y[b].d = floatToFp16(iq4Scale(src, 32));
        iq4Nibbles(src, fp16ToFloat(y[b].d), y[b].qs);
    }
}

void quantizeRowIq4Xs(const float* src, void* dst, int64_t n) {
    auto* y = static_cast<BlockIq4Xs*>(dst);
    for (int64_t b = 0; b < n / kQK; ++b, src += kQK) {
        float sc[8];
        for (int s = 0; s < 8; ++s) sc[s] = iq4Scale(src + s * 32, 32);
        BlockIq4Xs& o = y[b];
        std::memset(&o, 0, sizeof o);
        o.d = floatToFp16(signedMax(sc, 8) / -32.0f);
        const float dq = fp16ToFloat(o.d);
        for (int s = 0; s < 8; ++s) {
            const int l = (dq != 0.0f ? std::clamp(nearest(sc[s] / dq), -32, 31) : 0) + 32;
            o.scalesL[s / 2] |= static_cast<uint8_t>((l & 0xF) << (4 * (s % 2)));
            o.scalesH |= static_cast<uint16_t>((l >> 4) << (2 * s));
            iq4Nibbles(src + s * 32, dq * static_cast<float>(l - 32), o.qs + s * 16);
        }
    }
}

void quantizeRowQ4_1(const float* src, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ4_1*>(dst);
    for (int64_t b = 0; b < n / kLegacyBlockSize; ++b, src += kLegacyBlockSize) {
        const float lo = *std::min_element(src, src + 32), hi = *std::max_element(src, src + 32);
        const float d = (hi - lo) / 15.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = floatToFp16(d);
        y[b].m = floatToFp16(lo);
        for (int j = 0; j < 16; ++j) {
            const int q0 = std::clamp(nearest((src[j] - lo) * id), 0, 15);
            const int q1 = std::clamp(nearest((src[j + 16] - lo) * id), 0, 15);
            y[b].qs[j] = static_cast<uint8_t>(q0 | (q1 << 4));
        }
    }
}

namespace {
// Q5_0 (offset 16, symmetric) and Q5_1 (min, 0..31): the 5-bit values of one block into qs/qh.
void packFive(const int* q, uint8_t* qs, uint8_t* qhBytes) {
    uint32_t qh = 0;
    for (int j = 0; j < 16; ++j) {
        qs[j] = static_cast<uint8_t>((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
        qh |= static_cast<uint32_t>((q[j] >> 4) & 1) << j;
        qh |= static_cast<uint32_t>((q[j + 16] >> 4) & 1) << (j + 16);
    }
    std::memcpy(qhBytes, &qh, 4);
}
} // namespace

void quantizeRowQ5_0(const float* src, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ5_0*>(dst);
    for (int64_t b = 0; b < n / kLegacyBlockSize; ++b, src += kLegacyBlockSize) {
        const float d = signedMax(src, 32) / -16.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = floatToFp16(d);
        int q[32];
        for (int j = 0; j < 32; ++j) q[j] = std::clamp(nearest(src[j] * id) + 16, 0, 31);
        packFive(q, y[b].qs, y[b].qh);
    }
}

void quantizeRowQ5_1(const float* src, void* dst, int64_t n) {
    auto* y = static_cast<BlockQ5_1*>(dst);
    for (int64_t b = 0; b < n / kLegacyBlockSize; ++b, src += kLegacyBlockSize) {
        const float lo = *std::min_element(src, src + 32), hi = *std::max_element(src, src + 32);
        const float d = (hi - lo) / 31.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = floatToFp16(d);
        y[b].m = floatToFp16(lo);
        int q[32];
        for (int j = 0; j < 32; ++j) q[j] = std::clamp(nearest((src[j] - lo) * id), 0, 31);
        packFive(q, y[b].qs, y[b].qh);
    }
}

} // namespace mb::kernels
