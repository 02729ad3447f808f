// Portable k-quant x Q8_K dot products: the reference the AVX2 versions are tested against
// (value positions from kernels/cpu/kquant_layout.h).
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/kquant_dot.h"
#include "kernels/cpu/kquant_layout.h"

namespace mb::kernels::portable {

namespace {
// sum over sub-block s (elements [s * len, (s + 1) * len)) of value(e) * x.qs[e], exactly.
template <class Value>
int32_t subBlockSum(const BlockQ8_K& x, int s, int len, Value value) {
    int32_t t = 0;
    for (int e = s * len; e < (s + 1) * len; ++e) t += value(e) * x.qs[e];
    return t;
}

// The formats without mins: per block d_w * d_x * sum over sub-blocks of scale(s) * subBlockSum.
template <class Block, class Scale, class Value>
float dotScaled(const Block* w, const BlockQ8_K* x, int64_t nb, int subBlocks, Scale scale, Value value) {
    const int len = static_cast<int>(kSuperBlockSize) / subBlocks;
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t sumi = 0;
        for (int sb = 0; sb < subBlocks; ++sb)
            sumi += scale(w[b], sb) * subBlockSum(x[b], sb, len, [&](int e) { return value(w[b], e); });
        s += x[b].d * fp16ToFloat(w[b].d) * static_cast<float>(sumi);
    }
    return s;
}

// Q2_K, Q4_K, Q5_K: x.d * (d * sum scale * subBlockSum - dmin * sum min * (x's sum over the sub-block)).
template <class Block, class ScaleMin, class Value>
float dotWithMins(const Block* w, const BlockQ8_K* x, int64_t nb, int subBlocks, ScaleMin scaleMin, Value value) {
    const int len = static_cast<int>(kSuperBlockSize) / subBlocks, sums = len / 16;
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t sumi = 0, summ = 0;
        for (int sb = 0; sb < subBlocks; ++sb) {
            int scale = 0, min = 0;
            scaleMin(w[b], sb, scale, min);
            sumi += scale * subBlockSum(x[b], sb, len, [&](int e) { return value(w[b], e); });
            for (int j = sb * sums; j < (sb + 1) * sums; ++j) summ += min * x[b].bsums[j];
        }
        s += x[b].d * (fp16ToFloat(w[b].d) * static_cast<float>(sumi) -
                       fp16ToFloat(w[b].dmin) * static_cast<float>(summ));
    }
    return s;
}

template <class Block>
void k4ScaleMin(const Block& b, int s, int& scale, int& min) {
    uint8_t sc = 0, m = 0;
    scaleMinK4(s, b.scales, sc, m);
    scale = sc, min = m;
}
} // namespace

float dotQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t nb) {
    return dotWithMins(
        w, x, nb, 16,
        [](const BlockQ2_K& b, int s, int& scale, int& min) { scale = b.scales[s] & 0xF, min = b.scales[s] >> 4; },
        [](const BlockQ2_K& b, int e) { return layout::q2(b, e); });
}

float dotQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t nb) {
    return dotScaled(
        w, x, nb, 16, [](const BlockQ3_K& b, int s) { return scaleQ3_K(b.scales, s) - 32; },
        [](const BlockQ3_K& b, int e) { return layout::q3(b, e); });
}

float dotQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb) {
    return dotWithMins(w, x, nb, 8, k4ScaleMin<BlockQ4_K>, [](const BlockQ4_K& b, int e) { return layout::q4(b.qs, e); });
}

float dotQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t nb) {
    return dotWithMins(w, x, nb, 8, k4ScaleMin<BlockQ5_K>, [](const BlockQ5_K& b, int e) { return layout::q5(b, e); });
}

float dotQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb) {
    return dotScaled(
        w, x, nb, 16, [](const BlockQ6_K& b, int s) { return static_cast<int>(b.scales[s]); },
        [](const BlockQ6_K& b, int e) { return layout::q6(b, e); });
}

float dotIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t nb) {
    return dotScaled(
        w, x, nb, 8, [](const BlockIq4Xs& b, int s) { return layout::iq4XsScale(b, s); },
        [](const BlockIq4Xs& b, int e) { return layout::iq4Xs(b, e); });
}

} // namespace mb::kernels::portable
