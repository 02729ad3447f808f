// AVX2 k-quant x Q8_K dot products and Q8_K quantisation (built with -mavx2 -mfma -mf16c).
// Per 32 weights: unsigned 8-bit values times the activations' signed bytes (vpmaddubsw, pairs
// of products, at most 2 * 63 * 127 so no saturation), then times the sub-block scales in int16
// pairs (vpmaddwd) into int32 lanes; each block's int32 sum is exact, converted and scaled once.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/gemm_panel.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/cpu/kquant_dot.h"
#include "kernels/cpu/quant.h"

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

#include <cmath>
#include <cstring>

namespace mb::kernels::avx2 {

namespace {

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

namespace {
// vpshufb masks for 16 int16 scales held as sc16 (lanes 0-15): mask k picks, within each
// 128-bit lane, int16 lane 2k for the low 128 bits and 2k + 1 for the high 128 bits, so after
// _mm256_permute2x128_si256 puts scales 0-7 (or 8-15) in both halves, one vpshufb gives the
// scales of sub-blocks (2k, 2k + 1) of a 32-byte vector.
const __m256i* pairMasks() {
    static const __m256i masks[4] = {
        _mm256_setr_epi8(0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3),
        _mm256_setr_epi8(4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 4, 5, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7, 6, 7),
        _mm256_setr_epi8(8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 8, 9, 10, 11, 10, 11, 10, 11, 10, 11, 10, 11, 10,
                         11, 10, 11, 10, 11),
        _mm256_setr_epi8(12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 12, 13, 14, 15, 14, 15, 14, 15, 14,
                         15, 14, 15, 14, 15, 14, 15, 14, 15)};
    return masks;
}

} // namespace

namespace {
// Q4_K and Q5_K's 8 scales and 8 mins (6 bits each, kernels/quant_blocks.h) as 16 int16 lanes:
// scales in lanes 0-7, mins in 8-15. From the three 32-bit words a, b, c of the 12 bytes:
// scales 0-3 = a & 63, mins 0-3 = b & 63, scales 4-7 = (c & 15) | (a >> 6) << 4 and
// mins 4-7 = (c >> 4 & 15) | (b >> 6) << 4, bytewise.
inline __m256i scalesAndMinsK4(const uint8_t* q) {
    uint32_t a = 0, b = 0, c = 0;
    std::memcpy(&a, q, 4), std::memcpy(&b, q + 4, 4), std::memcpy(&c, q + 8, 4);
    const uint32_t sc0 = a & 0x3f3f3f3fu, mn0 = b & 0x3f3f3f3fu;
    const uint32_t sc1 = (c & 0x0f0f0f0fu) | (((a >> 6) & 0x03030303u) << 4);
    const uint32_t mn1 = ((c >> 4) & 0x0f0f0f0fu) | (((b >> 6) & 0x03030303u) << 4);
    return _mm256_cvtepu8_epi16(_mm_setr_epi32(static_cast<int>(sc0), static_cast<int>(sc1), static_cast<int>(mn0),
                                               static_cast<int>(mn1)));
}

// vpshufb masks that broadcast int16 lane s (0..7) of a 128-bit lane to all its 8 lanes.
struct LaneBroadcast {
    __m256i mask[8];
    LaneBroadcast() {
        for (int s = 0; s < 8; ++s)
            mask[s] = _mm256_set1_epi16(static_cast<short>((2 * s) | ((2 * s + 1) << 8)));
    }
};

// Q4_K and Q5_K for NT tokens (x + t * ldx, t < NT): per 64 elements one 32-byte load of nibbles
// (sub-blocks 2c and 2c + 1) unpacked once for all tokens, the scales broadcast from one vector,
// the mins through the activations' bsums in one vpmaddwd. Each token's operations are those of
// NT = 1 in the same order, so a tile gives every token the single dot's bits.
template <bool kFive, int NT>
inline void dotK4Or5(const uint8_t* qs, const uint8_t* qh, const uint8_t* scales, uint16_t d, uint16_t dmin,
                     const BlockQ8_K* x, int64_t ldx, const LaneBroadcast& lanes, __m256 (&acc)[NT],
                     __m256 (&accMin)[NT]) {
    const __m256i low = _mm256_set1_epi8(0x0F), sixteen = _mm256_set1_epi8(16);
    const __m256i h = kFive ? load256(qh) : _mm256_setzero_si256();
    const __m256i sm = scalesAndMinsK4(scales);
    const __m256i sc = _mm256_permute2x128_si256(sm, sm, 0x00); // the scales in both halves
    // mins[s] * (bsums[2s] + bsums[2s + 1]): the mins widened to pairs of int16 lanes.
    const __m128i mins = _mm256_extracti128_si256(sm, 1);
    const __m256i minPairs = _mm256_set_m128i(_mm_unpackhi_epi16(mins, mins), _mm_unpacklo_epi16(mins, mins));
    const float wd = half(d), wmin = half(dmin);
    __m256i sum[NT];
    for (int t = 0; t < NT; ++t) sum[t] = _mm256_setzero_si256();
    for (int c = 0; c < 4; ++c) {
        const __m256i q = load256(qs + c * 32);
        __m256i v0 = _mm256_and_si256(q, low);
        __m256i v1 = _mm256_and_si256(_mm256_srli_epi16(q, 4), low);
        if constexpr (kFive) {
            v0 = _mm256_or_si256(v0, _mm256_and_si256(hasBit(h, static_cast<uint8_t>(1u << (2 * c))), sixteen));
            v1 = _mm256_or_si256(v1, _mm256_and_si256(hasBit(h, static_cast<uint8_t>(2u << (2 * c))), sixteen));
        }
        const __m256i s0 = _mm256_shuffle_epi8(sc, lanes.mask[2 * c]), s1 = _mm256_shuffle_epi8(sc, lanes.mask[2 * c + 1]);
        for (int t = 0; t < NT; ++t) {
            const int8_t* xq = x[t * ldx].qs + c * 64;
            const __m256i p0 = _mm256_madd_epi16(_mm256_maddubs_epi16(v0, load256(xq)), s0);
            const __m256i p1 = _mm256_madd_epi16(_mm256_maddubs_epi16(v1, load256(xq + 32)), s1);
            sum[t] = _mm256_add_epi32(sum[t], _mm256_add_epi32(p0, p1));
        }
    }
    for (int t = 0; t < NT; ++t) {
        const BlockQ8_K& xt = x[t * ldx];
        const __m256i minSum = _mm256_madd_epi16(load256(xt.bsums), minPairs);
        acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(xt.d * wd), _mm256_cvtepi32_ps(sum[t]), acc[t]);
        accMin[t] = _mm256_fmadd_ps(_mm256_set1_ps(xt.d * wmin), _mm256_cvtepi32_ps(minSum), accMin[t]);
    }
}

// The k-quant row `w` times NT tokens, per token hsum(acc) - hsum(mins) as the single dot.
template <bool kFive, int NT, class Block>
inline void rowK4Or5(const Block* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    static const LaneBroadcast lanes;
    __m256 acc[NT], mins[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps(), mins[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* qh = nullptr;
        if constexpr (kFive) qh = w[b].qh;
        dotK4Or5<kFive, NT>(w[b].qs, qh, w[b].scales, w[b].d, w[b].dmin, x + b, ldx, lanes, acc, mins);
    }
    for (int t = 0; t < NT; ++t) y[t * ldy] = hsum(acc[t]) - hsum(mins[t]);
}
} // namespace

float dotQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb) {
    float y = 0.0f;
    rowK4Or5<false, 1>(w, x, 0, nb, &y, 0);
    return y;
}

float dotQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t nb) {
    float y = 0.0f;
    rowK4Or5<true, 1>(w, x, 0, nb, &y, 0);
    return y;
}

void tileQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    rowK4Or5<false, kKTileTokens>(w, x, ldx, nb, y, ldy);
}

void tileQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    rowK4Or5<true, kKTileTokens>(w, x, ldx, nb, y, ldy);
}

namespace {
// Q6_K for NT tokens, as dotK4Or5: the raw 6-bit values (0..63) unpacked once per block for all
// tokens; the 32 * sum(x) offset comes off through bsums (one vpmaddwd of the 16 scales with
// the 16 bsums per token and block).
template <int NT>
void rowQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    const __m256i low = _mm256_set1_epi8(0x0F), bits = _mm256_set1_epi8(0x30);
    const __m256i* pairMask = pairMasks();
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales)));
        __m256i sum[NT];
        for (int t = 0; t < NT; ++t) // 32 * sc * bsum
            sum[t] = _mm256_sub_epi32(_mm256_setzero_si256(),
                                      _mm256_slli_epi32(_mm256_madd_epi16(sc16, load256(x[b + t * ldx].bsums)), 5));
        for (int h = 0; h < 2; ++h) {
            const __m256i lane = _mm256_permute2x128_si256(sc16, sc16, h == 0 ? 0x00 : 0x11);
            const __m256i l0 = load256(w[b].ql + h * 64), l1 = load256(w[b].ql + h * 64 + 32), qh = load256(w[b].qh + h * 32);
            const __m256i v[4] = {
                _mm256_or_si256(_mm256_and_si256(l0, low), _mm256_and_si256(_mm256_slli_epi16(qh, 4), bits)),
                _mm256_or_si256(_mm256_and_si256(l1, low), _mm256_and_si256(_mm256_slli_epi16(qh, 2), bits)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l0, 4), low), _mm256_and_si256(qh, bits)),
                _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(l1, 4), low),
                                _mm256_and_si256(_mm256_srli_epi16(qh, 2), bits))};
            for (int k = 0; k < 4; ++k) {
                const __m256i scales = _mm256_shuffle_epi8(lane, pairMask[k]);
                for (int t = 0; t < NT; ++t)
                    sum[t] = _mm256_add_epi32(sum[t], scaledDot(v[k], load256(x[b + t * ldx].qs + h * 128 + k * 32), scales));
            }
        }
        const float wd = half(w[b].d);
        for (int t = 0; t < NT; ++t)
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(x[b + t * ldx].d * wd), _mm256_cvtepi32_ps(sum[t]), acc[t]);
    }
    for (int t = 0; t < NT; ++t) y[t * ldy] = hsum(acc[t]);
}
} // namespace

float dotQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb) {
    float y = 0.0f;
    rowQ6_K<1>(w, x, 0, nb, &y, 0);
    return y;
}

void tileQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    rowQ6_K<kKTileTokens>(w, x, ldx, nb, y, ldy);
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
        // Round half away from zero, as std::lround in quantizeRowQ8_K: truncate, then step away
        // from zero where the (exact) remainder is at least one half.
        const __m256 vid = _mm256_set1_ps(id), oneHalf = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f);
        for (int e = 0; e < kSuperBlockSize; e += 32) {
            __m256i q[4];
            for (int j = 0; j < 4; ++j) {
                const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(src + e + 8 * j), vid);
                const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
                const __m256 away = _mm256_cmp_ps(_mm256_andnot_ps(signBit, _mm256_sub_ps(v, t)), oneHalf, _CMP_GE_OQ);
                const __m256 step = _mm256_or_ps(_mm256_and_ps(v, signBit), one); // +-1 with v's sign
                q[j] = _mm256_cvttps_epi32(_mm256_add_ps(t, _mm256_and_ps(away, step)));
            }
            // 32 int32 -> 32 int8; the packs interleave 128-bit lanes, so permute back.
            const __m256i p16a = _mm256_packs_epi32(q[0], q[1]), p16b = _mm256_packs_epi32(q[2], q[3]);
            const __m256i p8 = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(p16a, p16b),
                                                           _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs + e), p8);
        }
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
float dotQ4_K(const BlockQ4_K*, const BlockQ8_K*, int64_t) { return 0.0f; }
float dotQ5_K(const BlockQ5_K*, const BlockQ8_K*, int64_t) { return 0.0f; }
float dotQ6_K(const BlockQ6_K*, const BlockQ8_K*, int64_t) { return 0.0f; }
void quantizeQ8_K(const float*, BlockQ8_K*, int64_t) {}
void tileQ4_K(const BlockQ4_K*, const BlockQ8_K*, int64_t, int64_t, float*, int64_t) {}
void tileQ5_K(const BlockQ5_K*, const BlockQ8_K*, int64_t, int64_t, float*, int64_t) {}
void tileQ6_K(const BlockQ6_K*, const BlockQ8_K*, int64_t, int64_t, float*, int64_t) {}
} // namespace mb::kernels::avx2

#endif
