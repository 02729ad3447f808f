// AVX2 Q2_K, Q3_K and IQ4_XS x Q8_K dots and their prefill tiles (built with -mavx2 -mfma -mf16c).
//
// Each kernel takes NT tokens (x + t * ldx): a weight block's values and scales are unpacked once
// and multiplied by every token's activations; each token has its own integer sums and float
// accumulators and sees the operations of NT = 1 in the same order, so a tile (NT =
// kKTileTokens) gives every token the single dot's bits. Per 32 weights: unsigned (Q2_K, Q3_K + 4)
// or sign-moved (IQ4_XS) bytes times the activations (vpmaddubsw, at most 2 * 127 * 127 per
// pair), then times the sub-block scales in int16 pairs (vpmaddwd) into exact int32 lanes.
#include "kernels/cpu/kquant_dot.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include "kernels/cpu/gemm_panel.h"
#include "kernels/cpu/simd_common.h"
#include "kernels/cpu/kquant_scales_simd.h"

#include <immintrin.h>

#include <cstring>

namespace mb::kernels::avx2 {

namespace {

// A vpshufb mask for 16 int16 scales held in both 128-bit halves (scales 8h..8h+7 of one half
// of a block): every int16 of the low half takes scale 2j, of the high half scale 2j + 1, so a
// 32-byte vector of sub-blocks (2j, 2j + 1) of 16 gets its scales.
inline __m256i pairMask(int j) {
    const auto pick = [](int s) { return _mm_set1_epi16(static_cast<short>((2 * s) | ((2 * s + 1) << 8))); };
    return _mm256_set_m128i(pick(2 * j + 1), pick(2 * j));
}

// Q2_K and Q3_K: for each half of 128 elements one 32-byte load of 2-bit values, its four bit
// pairs the sub-blocks (8 hf + 2j, 8 hf + 2j + 1) of 16, scaled by sc16 (16 int16 scales); with
// kHigh, Q3_K's high bit (hmask) adds 4. sum[t] += the scaled products of token t.
template <bool kHigh, int NT>
inline void twoBitSums(const uint8_t* qs, const uint8_t* hmask, __m256i sc16, const BlockQ8_K* x, int64_t ldx,
                       __m256i (&sum)[NT]) {
    const __m256i three = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);
    const __m256i hm = kHigh ? load256(hmask) : _mm256_setzero_si256();
    for (int hf = 0; hf < 2; ++hf) {
        const __m256i lane = _mm256_permute2x128_si256(sc16, sc16, hf == 0 ? 0x00 : 0x11);
        const __m256i q = load256(qs + hf * 32);
        for (int j = 0; j < 4; ++j) {
            __m256i v = _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), three);
            if constexpr (kHigh) {
                const __m256i bit = _mm256_set1_epi8(static_cast<char>(1u << (hf * 4 + j)));
                v = _mm256_or_si256(v, _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(hm, bit), bit), four));
            }
            const __m256i scales = _mm256_shuffle_epi8(lane, pairMask(j));
            for (int t = 0; t < NT; ++t) {
                const __m256i p = _mm256_maddubs_epi16(v, load256(x[t * ldx].qs + hf * 128 + j * 32));
                sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(p, scales));
            }
        }
    }
}

// Q2_K for NT tokens: per token hsum(acc) - hsum(mins), the mins through the bsums.
template <int NT>
void rowQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    const __m128i nibble = _mm_set1_epi8(0x0F);
    __m256 acc[NT], accMin[NT];
    for (int t = 0; t < NT; ++t) acc[t] = accMin[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales));
        const __m256i sc16 = _mm256_cvtepu8_epi16(_mm_and_si128(raw, nibble));
        const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), nibble));
        __m256i sum[NT];
        for (int t = 0; t < NT; ++t) sum[t] = _mm256_setzero_si256();
        twoBitSums<false, NT>(w[b].qs, nullptr, sc16, x + b, ldx, sum);
        const float wd = half(w[b].d), wmin = half(w[b].dmin);
        for (int t = 0; t < NT; ++t) {
            const BlockQ8_K& xt = x[b + t * ldx];
            const __m256i minSum = _mm256_madd_epi16(mn16, load256(xt.bsums));
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(xt.d * wd), _mm256_cvtepi32_ps(sum[t]), acc[t]);
            accMin[t] = _mm256_fmadd_ps(_mm256_set1_ps(xt.d * wmin), _mm256_cvtepi32_ps(minSum), accMin[t]);
        }
    }
    for (int t = 0; t < NT; ++t) y[t * ldy] = hsum(acc[t]) - hsum(accMin[t]);
}

// Q3_K for NT tokens: q + 4 = 2 low bits | high bit << 2, in 0..7; the 4 * sum(x) comes off
// through the bsums (4 * sum of scale * bsum, per token and block).
template <int NT>
void rowQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m256i sc16 = scalesQ3_K(w[b].scales);
        __m256i sum[NT];
        for (int t = 0; t < NT; ++t)
            sum[t] = _mm256_sub_epi32(_mm256_setzero_si256(),
                                      _mm256_slli_epi32(_mm256_madd_epi16(sc16, load256(x[b + t * ldx].bsums)), 2));
        twoBitSums<true, NT>(w[b].qs, w[b].hmask, sc16, x + b, ldx, sum);
        const float wd = half(w[b].d);
        for (int t = 0; t < NT; ++t)
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(x[b + t * ldx].d * wd), _mm256_cvtepi32_ps(sum[t]), acc[t]);
    }
    for (int t = 0; t < NT; ++t) y[t * ldy] = hsum(acc[t]);
}

// IQ4_XS for NT tokens: per sub-block of 32 the levels by table lookup (vpshufb), multiplied as
// |level| times x carrying the level's sign (vpsignb), times the sub-block's scale.
template <int NT>
void rowIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4NlValues));
    const __m256i levels = _mm256_set_m128i(table, table), low = _mm256_set1_epi8(0x0F);
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        __m256i sum[NT];
        for (int t = 0; t < NT; ++t) sum[t] = _mm256_setzero_si256();
        for (int sb = 0; sb < 8; ++sb) {
            const int ls = ((w[b].scalesL[sb / 2] >> (4 * (sb % 2))) & 0xF) | (((w[b].scalesH >> (2 * sb)) & 3) << 4);
            const __m256i scale = _mm256_set1_epi16(static_cast<short>(ls - 32));
            const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].qs + sb * 16));
            const __m256i v = _mm256_shuffle_epi8(levels, _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), low));
            const __m256i absV = _mm256_sign_epi8(v, v);
            for (int t = 0; t < NT; ++t) {
                const __m256i xs = _mm256_sign_epi8(load256(x[b + t * ldx].qs + sb * 32), v);
                sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(absV, xs), scale));
            }
        }
        const float wd = half(w[b].d);
        for (int t = 0; t < NT; ++t)
            acc[t] = _mm256_fmadd_ps(_mm256_set1_ps(x[b + t * ldx].d * wd), _mm256_cvtepi32_ps(sum[t]), acc[t]);
    }
    for (int t = 0; t < NT; ++t) y[t * ldy] = hsum(acc[t]);
}

} // namespace

float dotQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t nb) {
    float y = 0.0f;
    rowQ2_K<1>(w, x, 0, nb, &y, 0);
    return y;
}

float dotQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t nb) {
    float y = 0.0f;
    rowQ3_K<1>(w, x, 0, nb, &y, 0);
    return y;
}

float dotIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t nb) {
    float y = 0.0f;
    rowIq4Xs<1>(w, x, 0, nb, &y, 0);
    return y;
}

void tileQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    rowQ2_K<kKTileTokens>(w, x, ldx, nb, y, ldy);
}

void tileQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    rowQ3_K<kKTileTokens>(w, x, ldx, nb, y, ldy);
}

void tileIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    rowIq4Xs<kKTileTokens>(w, x, ldx, nb, y, ldy);
}

} // namespace mb::kernels::avx2

#endif
