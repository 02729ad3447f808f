// AVX-512 (+VNNI) Q2_K, Q3_K and IQ4_XS x Q8_K dots and tiles (built with the AVX-512 flags).
//
// As kquant_avx512.cpp does for Q4_K-Q6_K: 64 weights are one 512-bit vector in the activations'
// order, one vpmaddubsw makes their pair sums with the activations and one vpdpwssd multiplies
// the pairs by the sub-block scales (vpermw from one vector of the block's scales) and adds them:
// about half the instructions per weight of the AVX2 dots. Q2_K and Q3_K's 2-bit fields come out
// of one 32-byte load broadcast to both halves and shifted by vpsrlvw (two bit pairs at once);
// Q3_K's high bit adds 4 under a byte mask (vptestmb); IQ4_XS's |level| comes from a vpshufb
// table and its sign moves onto the activations (a masked subtraction from zero: AVX-512 has no
// vpsignb). Per token two chains of int32 sums per block (vpdpwssd's latency overlaps), exact;
// each block's sum is converted and scaled once in 16 float lanes. NT tokens share each unpacked
// vector and see the operations of NT = 1 in the same order, so a tile gives every token the
// single dot's bits (other bits than the AVX2 table's: another lane order).
#include "kernels/cpu/kquant_dot.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#include "kernels/cpu/kquant_scales_simd.h"
#include "kernels/cpu/simd_common.h"

#include <immintrin.h>

#include <array>
#include <cstring>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics (inserts, broadcasts, zero-extension) start from an undefined
// vector and warn wherever they are inlined (GCC bug 105593); that value is never read.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace mb::kernels::avx512 {

namespace {

// int16 lane i takes f(i).
template <class F>
constexpr Lanes16 lanes16(F f) {
    Lanes16 l{};
    for (int i = 0; i < 32; ++i) l.v[i] = static_cast<int16_t>(f(i));
    return l;
}
// Bytes 0-31 hold a, bytes 32-63 b.
constexpr Lanes8 pairBytes(unsigned a, unsigned b) {
    Lanes8 l{};
    for (int i = 0; i < 64; ++i) l.v[i] = static_cast<uint8_t>(i < 32 ? a : b);
    return l;
}
// Q2_K/Q3_K: 64 weights (bit pairs j and j + 1 of a 32-byte half) span sub-blocks of 16, so int16
// lanes 8k..8k+7 take scale first + k; shifts 2j in the low 256 bits, 2j + 2 in the high.
constexpr Lanes16 quads(int first) {
    return lanes16([first](int i) { return first + i / 8; });
}
constexpr Lanes16 kQuads[4] = {quads(0), quads(4), quads(8), quads(12)};
constexpr Lanes16 kTwoBitShift[2] = {lanes16([](int i) { return i < 16 ? 0 : 2; }),
                                     lanes16([](int i) { return i < 16 ? 4 : 6; })};
// Q3_K: the high bit of elements 128 hf + 32 j + i is hmask[i] bit 4 hf + j.
constexpr Lanes8 kHighBit[4] = {pairBytes(1, 2), pairBytes(4, 8), pairBytes(16, 32), pairBytes(64, 128)};
// IQ4_XS: sub-blocks 2p and 2p + 1 as 128-bit lanes (low nibbles, high nibbles) each; int16
// lanes 0-15 take scale 2p, 16-31 scale 2p + 1; the high nibbles shifted down by 4.
constexpr Lanes16 pairs(int p) {
    return lanes16([p](int i) { return 2 * p + i / 16; });
}
constexpr Lanes16 kPairs[4] = {pairs(0), pairs(1), pairs(2), pairs(3)};
constexpr Lanes16 kNibbleShift = lanes16([](int i) { return (i / 8) % 2 == 0 ? 0 : 4; });

inline __m512i vec(const Lanes16& l) { return _mm512_load_si512(l.v); }
inline __m512i vec(const Lanes8& l) { return _mm512_load_si512(l.v); }

// Q2_K and Q3_K: sum[c][t] += the scaled products of token t's 64 activations per step, for the
// four steps (half hf, bit pairs 2jj and 2jj + 1) of one block; kHigh adds Q3_K's high bit.
template <bool kHigh, int NT>
inline void twoBitSums(const uint8_t* qs, const uint8_t* hmask, __m512i sc, const BlockQ8_K* x, int64_t ldx,
                       __m512i (&sum)[2][NT]) {
    const __m512i three = _mm512_set1_epi8(3);
    const __m512i hm = kHigh ? _mm512_broadcast_i64x4(load256(hmask)) : _mm512_setzero_si512();
    for (int hf = 0; hf < 2; ++hf) {
        const __m512i q = _mm512_broadcast_i64x4(load256(qs + 32 * hf));
        for (int jj = 0; jj < 2; ++jj) {
            __m512i v = _mm512_and_si512(_mm512_srlv_epi16(q, vec(kTwoBitShift[jj])), three);
            if constexpr (kHigh)
                v = _mm512_mask_add_epi8(v, _mm512_test_epi8_mask(hm, vec(kHighBit[2 * hf + jj])), v,
                                         _mm512_set1_epi8(4));
            const __m512i s = _mm512_permutexvar_epi16(vec(kQuads[2 * hf + jj]), sc);
            for (int t = 0; t < NT; ++t)
                sum[jj][t] = _mm512_dpwssd_epi32(
                    sum[jj][t], _mm512_maddubs_epi16(v, load512(x[t * ldx].qs + 128 * hf + 64 * jj)), s);
        }
    }
}

// Q2_K for NT tokens: per token hsum(acc) - hsum(mins), the mins through the bsums.
template <int NT>
void rowQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    const __m128i nibble = _mm_set1_epi8(0x0F);
    __m512 acc[NT];
    __m256 accMin[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps(), accMin[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales));
        const __m512i sc = _mm512_zextsi256_si512(_mm256_cvtepu8_epi16(_mm_and_si128(raw, nibble)));
        const __m256i mn16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(raw, 4), nibble));
        __m512i sum[2][NT];
        for (int t = 0; t < NT; ++t) sum[0][t] = sum[1][t] = _mm512_setzero_si512();
        twoBitSums<false, NT>(w[b].qs, nullptr, sc, x + b, ldx, sum);
        const float wd = half(w[b].d), wmin = half(w[b].dmin);
        for (int t = 0; t < NT; ++t) {
            const BlockQ8_K& xt = x[b + t * ldx];
            const __m256i minSum = _mm256_madd_epi16(mn16, load256(xt.bsums));
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(xt.d * wd), _mm512_cvtepi32_ps(_mm512_add_epi32(sum[0][t], sum[1][t])),
                                     acc[t]);
            accMin[t] = _mm256_fmadd_ps(_mm256_set1_ps(xt.d * wmin), _mm256_cvtepi32_ps(minSum), accMin[t]);
        }
    }
    for (int t = 0; t < NT; ++t) y[t * ldy] = hsum512(acc[t]) - hsum(accMin[t]);
}

// Q3_K for NT tokens: q + 4 (2 low bits | high bit << 2, 0..7) times x; the 4 * sum(x) comes off
// through the bsums (8 lanes of the first chain start at -4 * sum of scale * bsum).
template <int NT>
void rowQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    __m512 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m256i sc16 = scalesQ3_K(w[b].scales);
        __m512i sum[2][NT];
        for (int t = 0; t < NT; ++t) {
            sum[0][t] = _mm512_zextsi256_si512(_mm256_sub_epi32(
                _mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, load256(x[b + t * ldx].bsums)), 2)));
            sum[1][t] = _mm512_setzero_si512();
        }
        twoBitSums<true, NT>(w[b].qs, w[b].hmask, _mm512_zextsi256_si512(sc16), x + b, ldx, sum);
        const float wd = half(w[b].d);
        for (int t = 0; t < NT; ++t)
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(x[b + t * ldx].d * wd),
                                     _mm512_cvtepi32_ps(_mm512_add_epi32(sum[0][t], sum[1][t])), acc[t]);
    }
    for (int t = 0; t < NT; ++t) y[t * ldy] = hsum512(acc[t]);
}

// IQ4_XS for NT tokens: per pair of sub-blocks 64 |levels| (vpshufb from the nibbles) times the
// activations carrying the levels' signs (the levels of nibbles 0-7 are the negative ones),
// times the two sub-block scales.
template <int NT>
void rowIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    static constexpr auto kAbsLevels = [] {
        std::array<int8_t, 16> a{};
        for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(kIq4NlValues[i] < 0 ? -kIq4NlValues[i] : kIq4NlValues[i]);
        return a;
    }();
    const __m512i absLevels = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kAbsLevels.data())));
    const __m512i nibble = _mm512_set1_epi8(0x0F), eight = _mm512_set1_epi8(8), zero = _mm512_setzero_si512();
    __m512 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m512i sc = _mm512_zextsi128_si512(scalesIq4Xs(w[b]));
        __m512i sum[2][NT];
        for (int t = 0; t < NT; ++t) sum[0][t] = sum[1][t] = _mm512_setzero_si512();
        for (int p = 0; p < 4; ++p) {
            // 128-bit lanes: sub-block 2p's 16 bytes twice, then 2p + 1's twice; nibbles low, high.
            const __m512i q = _mm512_zextsi256_si512(load256(w[b].qs + 32 * p));
            const __m512i idx = _mm512_and_si512(_mm512_srlv_epi16(_mm512_shuffle_i64x2(q, q, 0x50), vec(kNibbleShift)), nibble);
            const __m512i v = _mm512_shuffle_epi8(absLevels, idx);
            const __mmask64 negative = _mm512_cmplt_epu8_mask(idx, eight);
            const __m512i s = _mm512_permutexvar_epi16(vec(kPairs[p]), sc);
            for (int t = 0; t < NT; ++t) {
                const __m512i xv = load512(x[b + t * ldx].qs + 64 * p);
                const __m512i xs = _mm512_mask_sub_epi8(xv, negative, zero, xv);
                sum[p & 1][t] = _mm512_dpwssd_epi32(sum[p & 1][t], _mm512_maddubs_epi16(v, xs), s);
            }
        }
        const float wd = half(w[b].d);
        for (int t = 0; t < NT; ++t)
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(x[b + t * ldx].d * wd),
                                     _mm512_cvtepi32_ps(_mm512_add_epi32(sum[0][t], sum[1][t])), acc[t]);
    }
    for (int t = 0; t < NT; ++t) y[t * ldy] = hsum512(acc[t]);
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

} // namespace mb::kernels::avx512

#endif
