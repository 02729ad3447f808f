// AVX2 Q4_1, Q5_0, Q5_1 and IQ4_NL x Q8_0 tiles (built with -mavx2 -mfma -mf16c).
//
// A weight block is decoded once per tile into 32 bytes in element order (nibbles, Q5's fifth
// bits spread by vpshufb + vpcmpeqb, IQ4_NL's levels by vpshufb from the table) and multiplied by
// each token of the tile: vpmaddubsw (unsigned Q4_1/Q5_1 values as they are; the signed Q5_0 and
// IQ4_NL values as |w| times x carrying w's sign), vpmaddwd with ones into 8 exact int32 lanes,
// converted and added with scale dw * dx (dx from the activations' Q8Sums); the min term
// mw * xs.s goes into lane 0 by one more FMA.
// Each output has one accumulator and the same instructions in every tile shape, so the 1 x 1
// tile (the single dot) and every larger tile agree bit for bit.
#include "kernels/cpu/quant_legacy.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include "kernels/cpu/quant_legacy_panel.h"

#include <immintrin.h>

#include <cstring>

namespace mb::kernels::avx2 {

namespace {

// An F16 scale broadcast to 8 lanes (exact).
inline __m256 broadcastHalf(uint16_t d) { return _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(d))); }

// 32 nibbles in element order: the low nibbles of the 16 bytes, then the high nibbles.
inline __m256i nibbles(const uint8_t* qs) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), _mm256_set1_epi8(0x0F));
}

// 0xFF in byte j where bit j of the 32-bit little-endian qh is set (Q5's fifth bit of element j).
inline __m256i fifthBits(const uint8_t* qh) {
    uint32_t h = 0;
    std::memcpy(&h, qh, 4);
    const __m256i spread = _mm256_shuffle_epi8( // byte j <- byte j / 8 of h
        _mm256_set1_epi32(static_cast<int>(h)),
        _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ULL)); // 1 << j % 8
    return _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
}

// Per format: the decoded values, whether they are signed (then multiplied as |w| * sign(x, w))
// and whether the block has a min (Q4_1, Q5_1).
template <class B> struct Format;
template <> struct Format<BlockQ4_1> {
    static constexpr bool kSigned = false, kMin = true;
    static __m256i decode(const BlockQ4_1& b) { return nibbles(b.qs); }
};
template <> struct Format<BlockQ5_1> {
    static constexpr bool kSigned = false, kMin = true;
    static __m256i decode(const BlockQ5_1& b) {
        return _mm256_or_si256(nibbles(b.qs), _mm256_and_si256(fifthBits(b.qh), _mm256_set1_epi8(0x10)));
    }
};
template <> struct Format<BlockQ5_0> {
    static constexpr bool kSigned = true, kMin = false;
    // (q | fifth << 4) - 16 as a signed byte: q where the fifth bit is set, else q | 0xF0.
    static __m256i decode(const BlockQ5_0& b) {
        return _mm256_or_si256(nibbles(b.qs), _mm256_andnot_si256(fifthBits(b.qh), _mm256_set1_epi8(-16)));
    }
};
template <> struct Format<BlockIq4Nl> {
    static constexpr bool kSigned = true, kMin = false;
    static __m256i decode(const BlockIq4Nl& b) {
        const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4NlValues));
        return _mm256_shuffle_epi8(_mm256_set_m128i(table, table), nibbles(b.qs));
    }
};

// One R x T tile. Per (row, token, block) the exact int32 lanes of the products, then
// acc = fma(dw * dx, lanes, acc) and, with a min, acc = fma(mw, (xs.s, 0, ..., 0), acc).
template <class WB, int R, int T>
void tile(const WB* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb, float* y,
          int64_t ldy) {
    using F = Format<WB>;
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i ones = _mm256_set1_epi16(1);
    // One token (decode) streams R rows at once: fetch the next tile's rows (the next R * ldw
    // blocks, contiguous in a matrix) as far ahead as this step reads, as gemm_avx2.cpp does.
    const char* next = reinterpret_cast<const char*>(w + R * ldw);
    constexpr int kStepBytes = R * static_cast<int>(sizeof(WB));
    for (int64_t b = 0; b < nb; ++b) {
        if constexpr (T == 1)
            for (int p = 0; p < kStepBytes; p += 64) _mm_prefetch(next + b * kStepBytes + p, _MM_HINT_T0);
        __m256 dx[T], sx[T];
        for (int t = 0; t < T; ++t) {
            dx[t] = _mm256_broadcast_ss(&xs[t * ldx + b].d);
            if constexpr (F::kMin) sx[t] = _mm256_zextps128_ps256(_mm_load_ss(&xs[t * ldx + b].s));
        }
        for (int r = 0; r < R; ++r) {
            const WB& wb = w[r * ldw + b];
            const __m256i wq = F::decode(wb);
            const __m256i uw = F::kSigned ? _mm256_sign_epi8(wq, wq) : wq;
            const __m256 dw = broadcastHalf(wb.d);
            for (int t = 0; t < T; ++t) {
                __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t * ldx + b].qs));
                if constexpr (F::kSigned) xq = _mm256_sign_epi8(xq, wq);
                const __m256 sum = _mm256_cvtepi32_ps(_mm256_madd_epi16(_mm256_maddubs_epi16(uw, xq), ones));
                acc[r][t] = _mm256_fmadd_ps(_mm256_mul_ps(dw, dx[t]), sum, acc[r][t]);
                if constexpr (F::kMin) acc[r][t] = _mm256_fmadd_ps(broadcastHalf(wb.m), sx[t], acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum(acc[r][t]);
}

template <class W, int R, int T> struct Tile {
    static void run(const W* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb, float* y,
                    int64_t ldy) {
        tile<W, R, T>(w, ldw, x, xs, ldx, nb, y, ldy);
    }
};

// Rows per tile for T tokens (index T - 1), as gemm_avx2.cpp's Q4_0 tiles: one token reads 4
// rows (4 prefetched streams), prefill 1 row x 5-6 tokens.
constexpr int kRows[kMaxT] = {4, 3, 2, 2, 1, 1};

template <class W>
void gemm(const W* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb, int64_t rows,
          int64_t tokens, float* y, int64_t ldy) {
    static constexpr auto kTiles = legacyTileTable<W, Tile>();
    legacyPanel(kTiles, kRows, w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

} // namespace

void gemmQ4_1(const BlockQ4_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

void gemmQ5_0(const BlockQ5_0* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

void gemmQ5_1(const BlockQ5_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

void gemmIq4Nl(const BlockIq4Nl* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
               int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

} // namespace mb::kernels::avx2

#endif
