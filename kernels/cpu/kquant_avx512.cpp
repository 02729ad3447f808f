// AVX-512 (+VNNI) Q4_K, Q5_K and Q6_K x Q8_K dots and tiles (built with the AVX-512 flags).
// Where the time goes: single-token decode on these types is bound by unpacking and multiplying
// the weight bytes, not by memory. Here 64 weights are one 512-bit vector in the activations'
// order (a chunk of nibbles broadcast to both halves, the upper half shifted by 4), one
// vpmaddubsw makes their pair sums, and one vpdpwssd multiplies the pairs by the sub-block scales
// and adds them: half the instructions of the AVX2 dot per weight. Integer sums per block are
// exact; each block's sum is converted and scaled once, in 16 float lanes, so a tile gives each
// token the single dot's bits (other bits than the AVX2 table's: another lane order).
#include "kernels/cpu/kquant_dot.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#include "kernels/cpu/simd_common.h"

#include <immintrin.h>

#include <cstring>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics (inserts, broadcasts, zero-extension) start from an undefined
// vector and warn wherever they are inlined (GCC bug 105593); that value is never read.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace mb::kernels::avx512 {

namespace {

// int16 lanes 0-15 take source lane a, lanes 16-31 lane b.
constexpr Lanes16 pairLanes(int a, int b) {
    Lanes16 l{};
    for (int i = 0; i < 32; ++i) l.v[i] = static_cast<int16_t>(i < 16 ? a : b);
    return l;
}
// int16 lanes 8j..8j+7 take source lane first + j.
constexpr Lanes16 quadLanes(int first) {
    Lanes16 l{};
    for (int i = 0; i < 32; ++i) l.v[i] = static_cast<int16_t>(first + i / 8);
    return l;
}
// Bytes 0-31 hold a, bytes 32-63 b.
constexpr Lanes8 pairBytes(unsigned a, unsigned b) {
    Lanes8 l{};
    for (int i = 0; i < 64; ++i) l.v[i] = static_cast<uint8_t>(i < 32 ? a : b);
    return l;
}
// The sub-block scales of chunk c (Q4_K/Q5_K: sub-blocks 2c, 2c + 1) and of Q6_K's 64-element
// quarters (sub-blocks 4q..4q + 3).
constexpr Lanes16 kScalePairs[4] = {pairLanes(0, 1), pairLanes(2, 3), pairLanes(4, 5), pairLanes(6, 7)};
constexpr Lanes16 kScaleQuads[4] = {quadLanes(0), quadLanes(4), quadLanes(8), quadLanes(12)};
// Shift counts: 0 then 4 (Q4_K's low then high nibbles); Q6_K's qh bit pairs to bits 4-5:
// left by 4 then 2, right by 0 then 2.
constexpr Lanes16 kLowHigh = pairLanes(0, 4);
constexpr Lanes16 kQ6Left = pairLanes(4, 2);
constexpr Lanes16 kQ6Right = pairLanes(0, 2);
// Q5_K: the fifth bit of element 64c + j (j < 32) is qh[j] bit 2c, of 64c + 32 + j bit 2c + 1.
constexpr Lanes8 kHighBit[4] = {pairBytes(1, 2), pairBytes(4, 8), pairBytes(16, 32), pairBytes(64, 128)};

inline __m512i vec(const Lanes16& l) { return _mm512_load_si512(l.v); }
inline __m512i vec(const Lanes8& l) { return _mm512_load_si512(l.v); }

// Q4_K and Q5_K's 8 scales and 8 mins (6 bits each) as 16 int16 lanes: scales in 0-7, mins in
// 8-15 (the 12-byte packing of kernels/quant_blocks.h, unpacked as whole words).
inline __m256i scalesAndMinsK4(const uint8_t* q) {
    uint32_t a = 0, b = 0, c = 0;
    std::memcpy(&a, q, 4), std::memcpy(&b, q + 4, 4), std::memcpy(&c, q + 8, 4);
    const uint32_t sc0 = a & 0x3f3f3f3fu, mn0 = b & 0x3f3f3f3fu;
    const uint32_t sc1 = (c & 0x0f0f0f0fu) | (((a >> 6) & 0x03030303u) << 4);
    const uint32_t mn1 = ((c >> 4) & 0x0f0f0f0fu) | (((b >> 6) & 0x03030303u) << 4);
    return _mm256_cvtepu8_epi16(_mm_setr_epi32(static_cast<int>(sc0), static_cast<int>(sc1), static_cast<int>(mn0),
                                               static_cast<int>(mn1)));
}

// One Q4_K/Q5_K block against NT tokens' blocks (x + t * ldx): the exact int32 sums of
// scale * q * x (16 lanes) and of min * bsum (8 lanes), then one scaled FMA each per token.
template <bool kFive, int NT>
inline void blockK4Or5(const uint8_t* qs, const uint8_t* qh, const uint8_t* scales, uint16_t d, uint16_t dmin,
                       const BlockQ8_K* x, int64_t ldx, __m512 (&acc)[NT],
                       __m256 (&accMin)[NT]) {
    const __m256i sm = scalesAndMinsK4(scales);
    const __m512i sc = _mm512_castsi256_si512(sm); // vpermw reads the scales from lanes 0-7
    const __m128i mins = _mm256_extracti128_si256(sm, 1);
    const __m256i minPairs = _mm256_set_m128i(_mm_unpackhi_epi16(mins, mins), _mm_unpacklo_epi16(mins, mins));
    const __m256i h = kFive ? load256(qh) : _mm256_setzero_si256();
    const __m512i hh = _mm512_broadcast_i64x4(h);
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    // Two chains per token (even and odd chunks), so vpdpwssd's latency overlaps.
    __m512i sum[2][NT];
    for (int t = 0; t < NT; ++t) sum[0][t] = _mm512_setzero_si512(), sum[1][t] = _mm512_setzero_si512();
    for (int c = 0; c < 4; ++c) {
        // 64 weights in order: the chunk's low nibbles (sub-block 2c), then its high (2c + 1).
        const __m512i q = _mm512_broadcast_i64x4(load256(qs + 32 * c));
        __m512i v = _mm512_and_si512(_mm512_srlv_epi16(q, vec(kLowHigh)), nibble);
        if constexpr (kFive)
            v = _mm512_mask_add_epi8(v, _mm512_test_epi8_mask(hh, vec(kHighBit[c])), v, _mm512_set1_epi8(16));
        const __m512i s = _mm512_permutexvar_epi16(vec(kScalePairs[c]), sc);
        for (int t = 0; t < NT; ++t)
            sum[c & 1][t] =
                _mm512_dpwssd_epi32(sum[c & 1][t], _mm512_maddubs_epi16(v, load512(x[t * ldx].qs + 64 * c)), s);
    }
    const float wd = half(d), wmin = half(dmin);
    for (int t = 0; t < NT; ++t) {
        const BlockQ8_K& xt = x[t * ldx];
        const __m256i minSum = _mm256_madd_epi16(load256(xt.bsums), minPairs);
        acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(xt.d * wd), _mm512_cvtepi32_ps(_mm512_add_epi32(sum[0][t], sum[1][t])),
                                 acc[t]);
        accMin[t] = _mm256_fmadd_ps(_mm256_set1_ps(xt.d * wmin), _mm256_cvtepi32_ps(minSum), accMin[t]);
    }
}

template <bool kFive, int NT, class Block>
inline void rowK4Or5(const Block* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    __m512 acc[NT];
    __m256 mins[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps(), mins[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* qh = nullptr;
        if constexpr (kFive) qh = w[b].qh;
        blockK4Or5<kFive, NT>(w[b].qs, qh, w[b].scales, w[b].d, w[b].dmin, x + b, ldx, acc, mins);
    }
    for (int t = 0; t < NT; ++t) y[t * ldy] = hsum512(acc[t]) - hsum(mins[t]);
}

// Q6_K for NT tokens: per 128-element half two 512-bit vectors of 64 weights in order (the
// 6-bit values 0..63 from ql's nibbles and qh's bit pairs), each times its four sub-block scales
// through one vpdpwssd; the 32 * sum(x) offset comes off through bsums, as in the AVX2 dot.
template <int NT>
void rowQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    const __m512i nibble = _mm512_set1_epi8(0x0F), bits = _mm512_set1_epi8(0x30);
    // qh's bit pairs to bits 4-5: shifted left by 4 (elements 0-31 of a half) and 2 (32-63),
    // then right by 0 (64-95) and 2 (96-127).
    const __m512i shl = vec(kQ6Left), shr = vec(kQ6Right);
    __m512 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m256i sc16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].scales)));
        const __m512i sc = _mm512_castsi256_si512(sc16);
        __m512i sum[NT];
        for (int t = 0; t < NT; ++t) // - 32 * sc * bsum, in 8 lanes
            sum[t] = _mm512_zextsi256_si512(_mm256_sub_epi32(
                _mm256_setzero_si256(), _mm256_slli_epi32(_mm256_madd_epi16(sc16, load256(x[b + t * ldx].bsums)), 5)));
        for (int hf = 0; hf < 2; ++hf) {
            const __m512i l = load512(w[b].ql + 64 * hf);
            const __m512i qh = _mm512_broadcast_i64x4(load256(w[b].qh + 32 * hf));
            const __m512i v0 = _mm512_or_si512(_mm512_and_si512(l, nibble), _mm512_and_si512(_mm512_sllv_epi16(qh, shl), bits));
            const __m512i v1 = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), nibble),
                                               _mm512_and_si512(_mm512_srlv_epi16(qh, shr), bits));
            const __m512i s0 = _mm512_permutexvar_epi16(vec(kScaleQuads[2 * hf]), sc);
            const __m512i s1 = _mm512_permutexvar_epi16(vec(kScaleQuads[2 * hf + 1]), sc);
            for (int t = 0; t < NT; ++t) {
                const int8_t* xq = x[b + t * ldx].qs + 128 * hf;
                sum[t] = _mm512_dpwssd_epi32(sum[t], _mm512_maddubs_epi16(v0, load512(xq)), s0);
                sum[t] = _mm512_dpwssd_epi32(sum[t], _mm512_maddubs_epi16(v1, load512(xq + 64)), s1);
            }
        }
        const float wd = half(w[b].d);
        for (int t = 0; t < NT; ++t)
            acc[t] = _mm512_fmadd_ps(_mm512_set1_ps(x[b + t * ldx].d * wd), _mm512_cvtepi32_ps(sum[t]), acc[t]);
    }
    for (int t = 0; t < NT; ++t) y[t * ldy] = hsum512(acc[t]);
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

float dotQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb) {
    float y = 0.0f;
    rowQ6_K<1>(w, x, 0, nb, &y, 0);
    return y;
}

void tileQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    rowK4Or5<false, kKTileTokens>(w, x, ldx, nb, y, ldy);
}

void tileQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    rowK4Or5<true, kKTileTokens>(w, x, ldx, nb, y, ldy);
}

void tileQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    rowQ6_K<kKTileTokens>(w, x, ldx, nb, y, ldy);
}

} // namespace mb::kernels::avx512

#else // compiler without the flags: the AVX-512 table does not exist, nothing calls these

namespace mb::kernels::avx512 {
float dotQ4_K(const BlockQ4_K*, const BlockQ8_K*, int64_t) { return 0.0f; }
float dotQ5_K(const BlockQ5_K*, const BlockQ8_K*, int64_t) { return 0.0f; }
float dotQ6_K(const BlockQ6_K*, const BlockQ8_K*, int64_t) { return 0.0f; }
void tileQ4_K(const BlockQ4_K*, const BlockQ8_K*, int64_t, int64_t, float*, int64_t) {}
void tileQ5_K(const BlockQ5_K*, const BlockQ8_K*, int64_t, int64_t, float*, int64_t) {}
void tileQ6_K(const BlockQ6_K*, const BlockQ8_K*, int64_t, int64_t, float*, int64_t) {}
} // namespace mb::kernels::avx512

#endif
