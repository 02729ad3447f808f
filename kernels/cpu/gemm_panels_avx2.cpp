// AVX2 outer-product products of Q4_0 and Q8_0 panels (kernels/cpu/panels.h) with Q8_0 activations
// (built with -mavx2 -mfma -mf16c).
//
// The panels' layout is the AVX-512 table's; here each 64-byte group is two halves of 8 rows. A
// tile is one half (8 rows) by NT tokens. Per group: one 32-byte load, the nibbles unpacked once
// for the NT tokens, then per token two vpmaddubsw (unsigned q times the broadcast activation
// bytes; pairs of at most 2 * 15 * 128) added in int16: a block's 8 products per lane stay under
// 32,767, so one vpmaddwd per block turns them into the exact int32 sums. Each output's F32 sum
// is acc = fma(float(sum_b), dw_b * dx_b, acc) over the blocks in order from acc = 0: the same
// bits as the AVX-512 panels (and whatever the row range or token grouping).
//
// Q8_0 panels hold w + 128, which vpmaddubsw cannot take as they are (pairs up to 2 * 255 * 128
// overflow int16): per group the stored bytes go back to signed w (xor 0x80) and |w| once for the
// NT tokens; per token the activation bytes take w's sign (vpsignb), one vpmaddubsw makes pairs of
// at most 2 * 128 * 127 = 32,512 and one vpmaddwd their exact int32 sums, 4 instructions per 32
// products where the Q8_0 row tiles need 7. Exact while no activation byte is -128 (vpsignb cannot
// negate it), which quantizeRowQ8_0 guarantees (it writes -127..127), as for the row tiles.
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/panels.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace mb::kernels::avx2 {

namespace {

constexpr int kHalfRows = 8;
constexpr int kMaxTokens = 4; // tokens per tile: 2 * NT accumulators + 4 for weights and x

inline __m256i broadcast4(const int8_t* p) {
    int32_t four;
    std::memcpy(&four, p, sizeof four);
    return _mm256_set1_epi32(four);
}

// out[t * 8 + i] for the 8 rows of half h of panel P (its quant groups at P + b * 256 + g * 64 +
// 32 h, its F16 scales at S + b * 32 + 16 h) and NT tokens.
template <int NT>
void halfTile(const uint8_t* P, const uint8_t* S, int h, int64_t nb, const BlockQ8_0* x, int64_t ldx,
              const int32_t* xbias, const float* xd, float* out) {
    const __m256i nibble = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        __m256i sum16[NT];
        for (int t = 0; t < NT; ++t) sum16[t] = _mm256_setzero_si256();
        const uint8_t* block = P + b * kQ4PanelQuantBytes + 32 * h;
        _mm_prefetch(reinterpret_cast<const char*>(block + 4 * kQ4PanelQuantBytes), _MM_HINT_T0);
        for (int g = 0; g < 4; ++g) {
            const __m256i w = _mm256_load_si256(reinterpret_cast<const __m256i*>(block + 64 * g));
            const __m256i lo = _mm256_and_si256(w, nibble);
            const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(w, 4), nibble);
            for (int t = 0; t < NT; ++t) {
                const int8_t* xq = x[t * ldx + b].qs;
                sum16[t] = _mm256_add_epi16(sum16[t], _mm256_maddubs_epi16(lo, broadcast4(xq + 4 * g)));
                sum16[t] = _mm256_add_epi16(sum16[t], _mm256_maddubs_epi16(hi, broadcast4(xq + 16 + 4 * g)));
            }
        }
        const __m256 dw =
            _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(S + b * 32 + 16 * h)));
        for (int t = 0; t < NT; ++t) {
            const __m256i sum = _mm256_add_epi32(_mm256_set1_epi32(xbias[t * nb + b] / 16),
                                                 _mm256_madd_epi16(sum16[t], ones));
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum), _mm256_mul_ps(dw, _mm256_set1_ps(xd[t * nb + b])),
                                     acc[t]);
        }
    }
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + t * kHalfRows, acc[t]);
}

// The Q8_0 half tile (see the file comment); xbias unused: the products are of the signed bytes.
template <int NT>
void halfTileQ8(const uint8_t* P, const uint8_t* S, int h, int64_t nb, const BlockQ8_0* x, int64_t ldx,
                const int32_t* /*xbias*/, const float* xd, float* out) {
    const __m256i flip = _mm256_set1_epi8(static_cast<char>(0x80)), ones = _mm256_set1_epi16(1);
    __m256 acc[NT];
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        __m256i sum[NT];
        for (int t = 0; t < NT; ++t) sum[t] = _mm256_setzero_si256();
        const uint8_t* block = P + b * kQ8PanelQuantBytes + 32 * h;
        _mm_prefetch(reinterpret_cast<const char*>(block + 2 * kQ8PanelQuantBytes), _MM_HINT_T0);
        for (int g = 0; g < 8; ++g) {
            const __m256i w =
                _mm256_xor_si256(_mm256_load_si256(reinterpret_cast<const __m256i*>(block + 64 * g)), flip);
            const __m256i absW = _mm256_abs_epi8(w); // -128 -> 0x80, 128 as unsigned
            for (int t = 0; t < NT; ++t) {
                const __m256i xs = _mm256_sign_epi8(broadcast4(x[t * ldx + b].qs + 4 * g), w);
                sum[t] = _mm256_add_epi32(sum[t], _mm256_madd_epi16(_mm256_maddubs_epi16(absW, xs), ones));
            }
        }
        const __m256 dw =
            _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(S + b * 32 + 16 * h)));
        for (int t = 0; t < NT; ++t)
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum[t]), _mm256_mul_ps(dw, _mm256_set1_ps(xd[t * nb + b])),
                                     acc[t]);
    }
    for (int t = 0; t < NT; ++t) _mm256_storeu_ps(out + t * kHalfRows, acc[t]);
}

using HalfTileFn = void (*)(const uint8_t*, const uint8_t*, int, int64_t, const BlockQ8_0*, int64_t,
                            const int32_t*, const float*, float*);
constexpr HalfTileFn kHalfTiles[kMaxTokens] = {halfTile<1>, halfTile<2>, halfTile<3>, halfTile<4>};
constexpr HalfTileFn kHalfTilesQ8[kMaxTokens] = {halfTileQ8<1>, halfTileQ8<2>, halfTileQ8<3>, halfTileQ8<4>};

// y[t * ldy + r] for rows [r0, r1) and every token, from panels `stride` bytes apart whose quant
// groups take quantBytes per block (the F16 scales follow them).
void halfPanels(const HalfTileFn (&tiles)[kMaxTokens], int64_t stride, int64_t quantBytes, const uint8_t* panels,
                int64_t nb, int64_t r0, int64_t r1, const BlockQ8_0* x, int64_t ldx, const int32_t* xbias,
                const float* xscale, int64_t tokens, float* y, int64_t ldy) {
    if (r0 >= r1 || tokens <= 0 || nb <= 0) return;
    float out[kMaxTokens * kHalfRows];
    // Halves of 8 rows that hold rows of [r0, r1); each against every tile of tokens (the half's
    // 2 KiB per 16 blocks stays in L1 while the activations stream).
    for (int64_t half = r0 / kHalfRows; half * kHalfRows < r1; ++half) {
        const int64_t p = half / 2, first = half * kHalfRows;
        const uint8_t* P = panels + p * stride;
        const uint8_t* S = P + nb * quantBytes;
        const int64_t lo = std::max(r0, first), hi = std::min(r1, first + kHalfRows);
        for (int64_t t0 = 0; t0 < tokens; t0 += kMaxTokens) {
            const int64_t nt = std::min<int64_t>(kMaxTokens, tokens - t0);
            tiles[nt - 1](P, S, static_cast<int>(half % 2), nb, x + t0 * ldx, ldx, xbias + t0 * nb,
                               xscale + t0 * nb, out);
            for (int64_t t = 0; t < nt; ++t)
                std::memcpy(y + (t0 + t) * ldy + lo, out + t * kHalfRows + (lo - first),
                            static_cast<size_t>(hi - lo) * sizeof(float));
        }
    }
}

} // namespace

void gemmPanelsQ4_0(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_0* x, int64_t ldx,
                    const int32_t* xbias, const float* xscale, int64_t tokens, float* y, int64_t ldy) {
    halfPanels(kHalfTiles, q4PanelStride(nb), kQ4PanelQuantBytes, panels, nb, r0, r1, x, ldx, xbias, xscale, tokens,
               y, ldy);
}

void gemmPanelsQ8_0(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_0* x, int64_t ldx,
                    const int32_t* xbias, const float* xscale, int64_t tokens, float* y, int64_t ldy) {
    halfPanels(kHalfTilesQ8, q8PanelStride(nb), kQ8PanelQuantBytes, panels, nb, r0, r1, x, ldx, xbias, xscale,
               tokens, y, ldy);
}

} // namespace mb::kernels::avx2

#else // compiler without the flags: the AVX2 table does not exist, nothing calls this

namespace mb::kernels::avx2 {
void gemmPanelsQ4_0(const uint8_t*, int64_t, int64_t, int64_t, const BlockQ8_0*, int64_t, const int32_t*,
                    const float*, int64_t, float*, int64_t) {}
void gemmPanelsQ8_0(const uint8_t*, int64_t, int64_t, int64_t, const BlockQ8_0*, int64_t, const int32_t*,
                    const float*, int64_t, float*, int64_t) {}
} // namespace mb::kernels::avx2

#endif
