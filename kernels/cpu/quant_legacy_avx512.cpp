// VNNI Q4_1, Q5_0, Q5_1 and IQ4_NL x Q8_0 tiles for the AVX-512 table (built with the AVX-512
// F/BW/VL/VNNI flags; 256-bit vectors, one 32-element block each).
//
// vpdpbusd multiplies unsigned weight bytes by signed activation bytes and sums each 4 products
// into an int32 lane, exactly: one instruction where AVX2 needs vpmaddubsw + vpmaddwd. Q4_1 and
// Q5_1 values are unsigned as stored; Q5_0 (q - 16) and IQ4_NL (level, -127..113) are multiplied
// as q and level + 128, the bias times the activations' sum taken off by starting each lane at
// -bias * (its 4 activations' sum) (one vpdpbusd per token and block, shared by the tile's rows).
// Then as in quant_legacy_avx2.cpp: acc = fma(dw * dx, lanes, acc), the min into lane 0.
#include "kernels/cpu/quant_legacy.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#include "kernels/cpu/quant_legacy_panel.h"

#include <immintrin.h>

#include <array>
#include <cstring>

namespace mb::kernels::avx512 {

namespace {

inline __m256 broadcastHalf(uint16_t d) { return _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(d))); }

inline __m256i nibbles(const uint8_t* qs) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(packed, 4), packed), _mm256_set1_epi8(0x0F));
}

// 16 in byte j where bit j of the 32-bit little-endian qh is set: Q5's fifth bit of element j.
inline __m256i fifthBits(const uint8_t* qh) {
    uint32_t h = 0;
    std::memcpy(&h, qh, 4);
    const __mmask32 set = _cvtu32_mask32(h);
    return _mm256_maskz_mov_epi8(set, _mm256_set1_epi8(0x10));
}

// Per format: the unsigned bytes multiplied (value + kBias) and whether the block has a min.
template <class B> struct Format;
template <> struct Format<BlockQ4_1> {
    static constexpr char kBias = 0;
    static constexpr bool kMin = true;
    static __m256i decode(const BlockQ4_1& b) { return nibbles(b.qs); }
};
template <> struct Format<BlockQ5_1> {
    static constexpr char kBias = 0;
    static constexpr bool kMin = true;
    static __m256i decode(const BlockQ5_1& b) { return _mm256_or_si256(nibbles(b.qs), fifthBits(b.qh)); }
};
template <> struct Format<BlockQ5_0> {
    static constexpr char kBias = 16;
    static constexpr bool kMin = false;
    static __m256i decode(const BlockQ5_0& b) { return _mm256_or_si256(nibbles(b.qs), fifthBits(b.qh)); }
};
// IQ4_NL's levels + 128, as unsigned bytes.
constexpr auto kIq4NlBiased = [] {
    std::array<uint8_t, 16> a{};
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(kIq4NlValues[i] + 128);
    return a;
}();
template <> struct Format<BlockIq4Nl> {
    static constexpr char kBias = static_cast<char>(0x80);
    static constexpr bool kMin = false;
    static __m256i decode(const BlockIq4Nl& b) {
        const __m128i table = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIq4NlBiased.data()));
        return _mm256_shuffle_epi8(_mm256_set_m128i(table, table), nibbles(b.qs));
    }
};

template <class WB, int R, int T>
void tile(const WB* w, int64_t ldw, const BlockQ8_0* x, const float* xs, int64_t ldx, int64_t nb, float* y,
          int64_t ldy) {
    using F = Format<WB>;
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i zero = _mm256_setzero_si256(), bias = _mm256_set1_epi8(F::kBias);
    const char* next = reinterpret_cast<const char*>(w + R * ldw);
    constexpr int kStepBytes = R * static_cast<int>(sizeof(WB));
    for (int64_t b = 0; b < nb; ++b) {
        if constexpr (T == 1)
            for (int p = 0; p < kStepBytes; p += 64) _mm_prefetch(next + b * kStepBytes + p, _MM_HINT_T0);
        __m256i xq[T], start[T];
        __m256 dx[T], sx[T];
        for (int t = 0; t < T; ++t) {
            const BlockQ8_0& xb = x[t * ldx + b];
            xq[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.qs));
            start[t] = F::kBias ? _mm256_sub_epi32(zero, _mm256_dpbusd_epi32(zero, bias, xq[t])) : zero;
            dx[t] = broadcastHalf(xb.d);
            if constexpr (F::kMin) sx[t] = _mm256_zextps128_ps256(_mm_load_ss(xs + t * ldx + b));
        }
        for (int r = 0; r < R; ++r) {
            const WB& wb = w[r * ldw + b];
            const __m256i wq = F::decode(wb);
            const __m256 dw = broadcastHalf(wb.d);
            for (int t = 0; t < T; ++t) {
                const __m256 sum = _mm256_cvtepi32_ps(_mm256_dpbusd_epi32(start[t], wq, xq[t]));
                acc[r][t] = _mm256_fmadd_ps(_mm256_mul_ps(dw, dx[t]), sum, acc[r][t]);
                if constexpr (F::kMin) acc[r][t] = _mm256_fmadd_ps(broadcastHalf(wb.m), sx[t], acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum(acc[r][t]);
}

template <class W, int R, int T> struct Tile {
    static void run(const W* w, int64_t ldw, const BlockQ8_0* x, const float* xs, int64_t ldx, int64_t nb, float* y,
                    int64_t ldy) {
        tile<W, R, T>(w, ldw, x, xs, ldx, nb, y, ldy);
    }
};

// As gemm_avx512.cpp's Q4_0 shapes: one token reads 4 rows, prefill 2 rows x 4-6 tokens.
constexpr int kRows[kMaxT] = {4, 4, 3, 2, 2, 2};

template <class W>
void gemm(const W* w, int64_t ldw, const BlockQ8_0* x, const float* xs, int64_t ldx, int64_t nb, int64_t rows,
          int64_t tokens, float* y, int64_t ldy) {
    static constexpr auto kTiles = legacyTileTable<W, Tile>();
    legacyPanel(kTiles, kRows, w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

} // namespace

void gemmQ4_1(const BlockQ4_1* w, int64_t ldw, const BlockQ8_0* x, const float* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

void gemmQ5_0(const BlockQ5_0* w, int64_t ldw, const BlockQ8_0* x, const float* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

void gemmQ5_1(const BlockQ5_1* w, int64_t ldw, const BlockQ8_0* x, const float* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

void gemmIq4Nl(const BlockIq4Nl* w, int64_t ldw, const BlockQ8_0* x, const float* xs, int64_t ldx, int64_t nb,
               int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

} // namespace mb::kernels::avx512

#endif
