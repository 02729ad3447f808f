// Portable k-quant x Q8_K dot products: the reference the AVX2 versions are tested against.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/kquant_dot.h"
#include "kernels/cpu/quant.h"

namespace mb::kernels::portable {

namespace {
// Element e's 2 low bits in Q2_K and Q3_K (kernels/quant_blocks.h).
inline int twoBits(const uint8_t* qs, int e) { return (qs[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3; }
} // namespace

float dotQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t nb) {
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t sumi = 0, summ = 0;
        for (int sb = 0; sb < 16; ++sb) {
            int32_t t = 0;
            for (int e = sb * 16; e < sb * 16 + 16; ++e) t += twoBits(w[b].qs, e) * x[b].qs[e];
            sumi += (w[b].scales[sb] & 0xF) * t;
            summ += (w[b].scales[sb] >> 4) * x[b].bsums[sb];
        }
        s += x[b].d * (fp16ToFloat(w[b].d) * static_cast<float>(sumi) -
                       fp16ToFloat(w[b].dmin) * static_cast<float>(summ));
    }
    return s;
}

float dotQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t nb) {
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t sumi = 0;
        for (int sb = 0; sb < 16; ++sb) {
            int32_t t = 0;
            for (int e = sb * 16; e < sb * 16 + 16; ++e) {
                const int high = (w[b].hmask[e % 32] >> (e / 32)) & 1;
                t += (twoBits(w[b].qs, e) - (high ? 0 : 4)) * x[b].qs[e];
            }
            sumi += (scaleQ3_K(w[b].scales, sb) - 32) * t;
        }
        s += x[b].d * fp16ToFloat(w[b].d) * static_cast<float>(sumi);
    }
    return s;
}

namespace {
// Q4_K and Q5_K: the 32 values of sub-block sb (0..7), 4 bits, plus the fifth bit when qh is set.
template <bool kFive>
float dotK4Or5(const uint8_t* qs, const uint8_t* qh, const uint8_t* scales, uint16_t d, uint16_t dmin,
               const BlockQ8_K& x) {
    int32_t sumi = 0, summ = 0;
    for (int sb = 0; sb < 8; ++sb) {
        uint8_t sc = 0, m = 0;
        scaleMinK4(sb, scales, sc, m);
        const uint8_t* q = qs + (sb / 2) * 32;
        const int shift = (sb % 2) * 4;
        int32_t t = 0;
        for (int l = 0; l < 32; ++l) {
            int v = (q[l] >> shift) & 0xF;
            if constexpr (kFive) v += ((qh[l] >> sb) & 1) << 4;
            t += v * x.qs[sb * 32 + l];
        }
        sumi += sc * t;
        summ += m * (x.bsums[2 * sb] + x.bsums[2 * sb + 1]);
    }
    return x.d * (fp16ToFloat(d) * static_cast<float>(sumi) - fp16ToFloat(dmin) * static_cast<float>(summ));
}
} // namespace

float dotQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb) {
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) s += dotK4Or5<false>(w[b].qs, nullptr, w[b].scales, w[b].d, w[b].dmin, x[b]);
    return s;
}

float dotQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t nb) {
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) s += dotK4Or5<true>(w[b].qs, w[b].qh, w[b].scales, w[b].d, w[b].dmin, x[b]);
    return s;
}

float dotQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb) {
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t sumi = 0;
        for (int sb = 0; sb < 16; ++sb) {
            int32_t t = 0;
            for (int e = sb * 16; e < sb * 16 + 16; ++e) {
                const int h = e / 128, i = e % 128;
                const int low = (w[b].ql[h * 64 + i % 64] >> (4 * (i / 64))) & 0xF;
                const int high = (w[b].qh[h * 32 + i % 32] >> (2 * (i / 32))) & 3;
                t += ((low | (high << 4)) - 32) * x[b].qs[e];
            }
            sumi += w[b].scales[sb] * t;
        }
        s += x[b].d * fp16ToFloat(w[b].d) * static_cast<float>(sumi);
    }
    return s;
}

float dotIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t nb) {
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t sumi = 0;
        for (int sb = 0; sb < 8; ++sb) {
            const int ls = ((w[b].scalesL[sb / 2] >> (4 * (sb % 2))) & 0xF) | (((w[b].scalesH >> (2 * sb)) & 3) << 4);
            const uint8_t* q = w[b].qs + sb * 16;
            const int8_t* xq = x[b].qs + sb * 32;
            int32_t t = 0;
            for (int j = 0; j < 16; ++j)
                t += kIq4NlValues[q[j] & 0xF] * xq[j] + kIq4NlValues[q[j] >> 4] * xq[j + 16];
            sumi += (ls - 32) * t;
        }
        s += x[b].d * fp16ToFloat(w[b].d) * static_cast<float>(sumi);
    }
    return s;
}

} // namespace mb::kernels::portable
