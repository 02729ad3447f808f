// AVX2 k-quant x Q8_K dot products and Q8_K quantisation (built with -mavx2 -mfma -mf16c).
// Per 32 weights: unsigned 8-bit values times the activations' signed bytes (vpmaddubsw, pairs
// of products, at most 2 * 63 * 127 so no saturation), then times the sub-block scales in int16
// pairs (vpmaddwd) into int32 lanes; each block's int32 sum is exact, converted and scaled once.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/gemm_panel.h"
#include "kernels/cpu/kquant_dot.h"
#include "kernels/cpu/quant.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <cmath>

namespace mb::kernels::avx2 {

namespace {

inline __m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// int16 lanes: the low 128 bits carry scale a, the high 128 bits scale b (two 16-element
// sub-blocks per 32 bytes).
inline __m256i twoScales(int a, int b) {
    return _mm256_set_m128i(_mm_set1_epi16(static_cast<short>(b)), _mm_set1_epi16(static_cast<short>(a)));
}

// sum over 32 bytes of q (unsigned) * x (signed), each 16-element half weighted by its scale,
// as 8 int32 lanes.
inline __m256i scaledDot(__m256i q, __m256i x, __m256i scales) {
    return _mm256_madd_epi16(_mm256_maddubs_epi16(q, x), scales);
}

// The int32 lanes' total, in a fixed order.
inline int32_t hsumI32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

// Byte b of every lane is set (0xFF) where (v & bit) != 0.
inline __m256i hasBit(__m256i v, uint8_t bit) {
    const __m256i m = _mm256_set1_epi8(static_cast<char>(bit));
    return _mm256_cmpeq_epi8(_mm256_and_si256(v, m), m);
}

} // namespace

float dotQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t nb) {
    const __m256i three = _mm256_set1_epi8(3);
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        __m256i sum = _mm256_setzero_si256();
        for (int half = 0; half < 2; ++half) {
            const __m256i q = load(w[b].qs + half * 32);
            for (int j = 0; j < 4; ++j) {
                const int sb = half * 8 + 2 * j;
                const __m256i v = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), three);
                const __m256i sc = twoScales(w[b].scales[sb] & 0xF, w[b].scales[sb + 1] & 0xF);
                sum = _mm256_add_epi32(sum, scaledDot(v, load(x[b].qs + half * 128 + j * 32), sc));
            }
        }
        int32_t summ = 0;
        for (int sb = 0; sb < 16; ++sb) summ += (w[b].scales[sb] >> 4) * x[b].bsums[sb];
        acc = _mm256_fmadd_ps(_mm256_set1_ps(x[b].d * fp16ToFloat(w[b].d)), _mm256_cvtepi32_ps(sum), acc);
        mins += x[b].d * fp16ToFloat(w[b].dmin) * static_cast<float>(summ);
    }
    return hsum(acc) - mins;
}

float dotQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t nb) {
    // q + 4 = 2 low bits | high bit << 2, in 0..7; the 4 * sum(x) comes off through bsums.
    const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m256i hm = load(w[b].hmask);
        __m256i sum = _mm256_setzero_si256();
        int32_t offset = 0;
        for (int half = 0; half < 2; ++half) {
            const __m256i q = load(w[b].qs + half * 32);
            for (int j = 0; j < 4; ++j) {
                const int sb = half * 8 + 2 * j;
                const __m256i high = _mm256_and_si256(hasBit(hm, static_cast<uint8_t>(1u << (half * 4 + j))), four);
                const __m256i v = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2 * j), three), high);
                const int s0 = scaleQ3_K(w[b].scales, sb) - 32, s1 = scaleQ3_K(w[b].scales, sb + 1) - 32;
                sum = _mm256_add_epi32(sum, scaledDot(v, load(x[b].qs + half * 128 + j * 32), twoScales(s0, s1)));
                offset += 4 * (s0 * x[b].bsums[sb] + s1 * x[b].bsums[sb + 1]);
            }
        }
        sum = _mm256_sub_epi32(sum, _mm256_setr_epi32(offset, 0, 0, 0, 0, 0, 0, 0));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(x[b].d * fp16ToFloat(w[b].d)), _mm256_cvtepi32_ps(sum), acc);
    }
    return hsum(acc);
}

namespace {
// Q4_K and Q5_K: per 64 elements one 32-byte load of nibbles (sub-blocks 2c and 2c + 1).
template <bool kFive>
inline void dotK4Or5(const uint8_t* qs, const uint8_t* qh, const uint8_t* scales, uint16_t d, uint16_t dmin,
                     const BlockQ8_K& x, __m256& acc, float& mins) {
    const __m256i low = _mm256_set1_epi8(0x0F), sixteen = _mm256_set1_epi8(16);
    const __m256i h = kFive ? load(qh) : _mm256_setzero_si256();
    __m256i sum = _mm256_setzero_si256();
    int32_t summ = 0;
    for (int c = 0; c < 4; ++c) {
        uint8_t sc0 = 0, m0 = 0, sc1 = 0, m1 = 0;
        scaleMinK4(2 * c, scales, sc0, m0);
        scaleMinK4(2 * c + 1, scales, sc1, m1);
        const __m256i q = load(qs + c * 32);
        __m256i v0 = _mm256_and_si256(q, low);
        __m256i v1 = _mm256_and_si256(_mm256_srli_epi16(q, 4), low);
        if constexpr (kFive) {
            v0 = _mm256_or_si256(v0, _mm256_and_si256(hasBit(h, static_cast<uint8_t>(1u << (2 * c))), sixteen));
            v1 = _mm256_or_si256(v1, _mm256_and_si256(hasBit(h, static_cast<uint8_t>(2u << (2 * c))), sixteen));
        }
        const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(v0, load(x.qs + c * 64)),
                                             _mm256_set1_epi16(static_cast<short>(sc0)));
        const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(v1, load(x.qs + c * 64 + 32)),
                                             _mm256_set1_epi16(static_cast<short>(sc1)));
        sum = _mm256_add_epi32(sum, _mm256_add_epi32(p0, p1));
        summ += m0 * (x.bsums[4 * c] + x.bsums[4 * c + 1]) + m1 * (x.bsums[4 * c + 2] + x.bsums[4 * c + 3]);
    }
    acc = _mm256_fmadd_ps(_mm256_set1_ps(x.d * fp16ToFloat(d)), _mm256_cvtepi32_ps(sum), acc);
    mins += x.d * fp16ToFloat(dmin) * static_cast<float>(summ);
}
} // namespace

float dotQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb) {
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    for (int64_t b = 0; b < nb; ++b) dotK4Or5<false>(w[b].qs, nullptr, w[b].scales, w[b].d, w[b].dmin, x[b], acc, mins);
    return hsum(acc) - mins;
}

float dotQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t nb) {
    __m256 acc = _mm256_setzero_ps();
    float mins = 0.0f;
    for (int64_t b = 0; b < nb; ++b) dotK4Or5<true>(w[b].qs, w[b].qh, w[b].scales, w[b].d, w[b].dmin, x[b], acc, mins);
    return hsum(acc) - mins;
}

float dotQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb) {
    // The raw 6-bit values (0..63) times x; the 32 * sum(x) offset comes off through bsums.
    const __m256i low = _mm256_set1_epi8(0x0F), bits = _mm256_set1_epi8(0x30);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const int8_t* sc = w[b].scales;
        __m256i sum = _mm256_setzero_si256();
        int32_t offset = 0;
        for (int h = 0; h < 2; ++h) {
            const __m256i l0 = load(w[b].ql + h * 64), l1 = load(w[b].ql + h * 64 + 32), qh = load(w[b].qh + h * 32);
            const __m256i v[4] = {
                _mm256_or_si256(_mm256_and_si256(l0, low), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits)),
                _mm256_or_si256(_mm256_and_si256(l1, low), _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low), _mm256_and_si256(qh, bits)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low),
                                _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits))};
            for (int k = 0; k < 4; ++k) {
                const int sb = h * 8 + 2 * k;
                const __m256i p = scaledDot(v[k], load(x[b].qs + h * 128 + k * 32), twoScales(sc[sb], sc[sb + 1]));
                sum = _mm256_add_epi32(sum, p);
                offset += 32 * (sc[sb] * x[b].bsums[sb] + sc[sb + 1] * x[b].bsums[sb + 1]);
            }
        }
        sum = _mm256_sub_epi32(sum, _mm256_setr_epi32(offset, 0, 0, 0, 0, 0, 0, 0));
        acc = _mm256_fmadd_ps(_mm256_set1_ps(x[b].d * fp16ToFloat(w[b].d)), _mm256_cvtepi32_ps(sum), acc);
    }
    return hsum(acc);
}

float dotIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t nb) {
    // The levels by table lookup (vpshufb), then |level| times x with level's sign (vpsignb).
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4NlValues));
    const __m256i levels = _mm256_set_m128i(table, table), low = _mm256_set1_epi8(0x0F);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        __m256i sum = _mm256_setzero_si256();
        for (int sb = 0; sb < 8; ++sb) {
            const int ls = ((w[b].scalesL[sb / 2] >> (4 * (sb % 2))) & 0xF) | (((w[b].scalesH >> (2 * sb)) & 3) << 4);
            const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].qs + sb * 16));
            const __m256i idx = _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), low);
            const __m256i v = _mm256_shuffle_epi8(levels, idx);
            const __m256i xs = _mm256_sign_epi8(load(x[b].qs + sb * 32), v);
            const __m256i p = _mm256_maddubs_epi16(_mm256_sign_epi8(v, v), xs);
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(p, _mm256_set1_epi16(static_cast<short>(ls - 32))));
        }
        acc = _mm256_fmadd_ps(_mm256_set1_ps(x[b].d * fp16ToFloat(w[b].d)), _mm256_cvtepi32_ps(sum), acc);
    }
    return hsum(acc);
}

void quantizeQ8_K(const float* src, BlockQ8_K* y, int64_t n) {
    const __m256 signBit = _mm256_set1_ps(-0.0f);
    for (int64_t b = 0; b < n / kSuperBlockSize; ++b, src += kSuperBlockSize) {
        __m256 m = _mm256_setzero_ps();
        for (int e = 0; e < kSuperBlockSize; e += 8) m = _mm256_max_ps(m, _mm256_andnot_ps(signBit, _mm256_loadu_ps(src + e)));
        __m128 m4 = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        m4 = _mm_max_ps(m4, _mm_movehl_ps(m4, m4));
        m4 = _mm_max_ss(m4, _mm_movehdup_ps(m4));
        const float d = _mm_cvtss_f32(m4) / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[b].d = d;
        // Round half away from zero, as std::lround in quantizeRowQ8_K.
        for (int e = 0; e < kSuperBlockSize; ++e) y[b].qs[e] = static_cast<int8_t>(std::lround(src[e] * id));
        for (int j = 0; j < kSuperBlockSize / 16; ++j) {
            const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(y[b].qs + j * 16));
            const __m256i wide = _mm256_cvtepi8_epi16(q);
            const __m256i pairs = _mm256_madd_epi16(wide, _mm256_set1_epi16(1));
            y[b].bsums[j] = static_cast<int16_t>(hsumI32(pairs));
        }
    }
}

} // namespace mb::kernels::avx2

#else // compiler without the flags: the AVX2 table does not exist, nothing calls these

namespace mb::kernels::avx2 {
float dotQ2_K(const BlockQ2_K*, const BlockQ8_K*, int64_t) { return 0.0f; }
float dotQ3_K(const BlockQ3_K*, const BlockQ8_K*, int64_t) { return 0.0f; }
float dotQ4_K(const BlockQ4_K*, const BlockQ8_K*, int64_t) { return 0.0f; }
float dotQ5_K(const BlockQ5_K*, const BlockQ8_K*, int64_t) { return 0.0f; }
float dotQ6_K(const BlockQ6_K*, const BlockQ8_K*, int64_t) { return 0.0f; }
float dotIq4Xs(const BlockIq4Xs*, const BlockQ8_K*, int64_t) { return 0.0f; }
void quantizeQ8_K(const float*, BlockQ8_K*, int64_t) {}
} // namespace mb::kernels::avx2

#endif
