// VNNI Q4_1, Q5_0, Q5_1 and IQ4_NL x Q8_0 tiles for the AVX-512 table (built with the AVX-512
// F/BW/VL/VNNI flags).
//
// Two consecutive 32-element blocks are one 512-bit vector (block b in the low half, b + 1 in
// the high), so each step of the products, the int32 -> float conversion and the scaling is one
// instruction for 64 weights: vpdpbusd multiplies unsigned weight bytes by the signed activation
// bytes and sums each 4 products into an int32 lane, exactly. Q4_1 and Q5_1 values are unsigned
// as stored; Q5_0 (q - 16) and IQ4_NL (level, -127..113) are multiplied as q and level + 128, the
// bias times the activations' sum taken off by starting each lane at -bias * (its 4 activations'
// sum) (one vpdpbusd per token and pair, shared by the tile's rows). Then per (row, token, pair)
// acc = fma(dw * dx, lanes, acc), the scales of block b in lanes 0-7 and of b + 1 in 8-15
// (the activations' from their Q8Sums), and with a min acc = fma(mw, xs.s, acc) in lanes 0 and
// 8 alone. An odd last block runs as a pair whose second block is zeros with zero scales (adding
// exact zeros), in every tile shape alike, so the 1 x 1 tile (the dot) and every larger tile
// agree bit for bit.
#include "kernels/cpu/quant_legacy.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)
#include "kernels/cpu/quant_legacy_panel.h"
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

// Constant index vectors, read from memory. From 4 floats (scale, min or sum of block b, then of
// b + 1): lanes 0-7 take float 0 and 8-15 float 2 (the scales), lane 0 float 1 and lane 8 float 3
// (the mins or sums; the other lanes are zeroed by the mask kEdges).
struct alignas(64) Lanes32 {
    int32_t v[16];
};
constexpr Lanes32 kScaleIdx = {{0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2}};
constexpr Lanes32 kSumIdx = {{1, 1, 1, 1, 1, 1, 1, 1, 3, 3, 3, 3, 3, 3, 3, 3}};
constexpr __mmask16 kEdges = 0x0101;
// The 128-bit lanes of a pair's nibbles (block b's 16 bytes twice, then b + 1's): low nibbles
// (shift 0) then high (shift 4) in each block's two lanes.
struct alignas(64) Lanes16 {
    int16_t v[32];
};
constexpr Lanes16 kNibbleShift = [] {
    Lanes16 l{};
    for (int i = 0; i < 32; ++i) l.v[i] = static_cast<int16_t>((i / 8) % 2 == 0 ? 0 : 4);
    return l;
}();

inline __m512 scales(__m128 f) { return _mm512_permutexvar_ps(_mm512_load_si512(kScaleIdx.v), _mm512_castps128_ps512(f)); }
inline __m512 sums(__m128 f) {
    return _mm512_maskz_permutexvar_ps(kEdges, _mm512_load_si512(kSumIdx.v), _mm512_castps128_ps512(f));
}

// Per (row or token) and pair, as 4 floats: the F16 scale and the next F16 (a min, or bytes
// nobody reads) of block b, then of b + 1 (zeros for a pair of one).
template <bool kTwo, class B>
inline __m128 blockScales(const B* w) {
    __m128i h = _mm_cvtsi32_si128(load32(&w[0].d));
    if constexpr (kTwo) h = _mm_insert_epi32(h, load32(&w[1].d), 1);
    return _mm_cvtph_ps(h);
}
template <bool kTwo>
inline __m128 sumScales(const Q8Sums* xs) {
    if constexpr (kTwo) return _mm_loadu_ps(&xs[0].d);
    else return _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(&xs[0].d)));
}

// The nibbles of a pair's blocks in element order (block b's 32, then b + 1's).
template <bool kTwo>
inline __m512i nibbles(const uint8_t* q0, const uint8_t* q1) {
    __m256i q = _mm256_zextsi128_si256(load128(q0));
    if constexpr (kTwo) q = _mm256_inserti128_si256(q, load128(q1), 1);
    const __m512i wide = _mm512_zextsi256_si512(q);
    const __m512i lanes = _mm512_shuffle_i64x2(wide, wide, 0x50); // q0, q0, q1, q1
    return _mm512_and_si512(_mm512_srlv_epi16(lanes, _mm512_load_si512(kNibbleShift.v)), _mm512_set1_epi8(0x0F));
}
// Q5's fifth bits of the pair's 64 elements, as 16 (bit j of block b's qh, then of b + 1's).
template <bool kTwo>
inline __m512i fifths(const uint8_t* qh0, const uint8_t* qh1) {
    uint64_t h = static_cast<uint32_t>(load32(qh0));
    if constexpr (kTwo) h |= static_cast<uint64_t>(static_cast<uint32_t>(load32(qh1))) << 32;
    return _mm512_maskz_mov_epi8(_cvtu64_mask64(h), _mm512_set1_epi8(0x10));
}

// Per format: the unsigned bytes multiplied (value + kBias) and whether the block has a min.
template <class B> struct Format;
template <> struct Format<BlockQ4_1> {
    static constexpr char kBias = 0;
    static constexpr bool kMin = true;
    template <bool kTwo> static __m512i decode(const BlockQ4_1* b) { return nibbles<kTwo>(b[0].qs, b[kTwo].qs); }
};
template <> struct Format<BlockQ5_1> {
    static constexpr char kBias = 0;
    static constexpr bool kMin = true;
    template <bool kTwo> static __m512i decode(const BlockQ5_1* b) {
        return _mm512_or_si512(nibbles<kTwo>(b[0].qs, b[kTwo].qs), fifths<kTwo>(b[0].qh, b[kTwo].qh));
    }
};
template <> struct Format<BlockQ5_0> {
    static constexpr char kBias = 16;
    static constexpr bool kMin = false;
    template <bool kTwo> static __m512i decode(const BlockQ5_0* b) {
        return _mm512_or_si512(nibbles<kTwo>(b[0].qs, b[kTwo].qs), fifths<kTwo>(b[0].qh, b[kTwo].qh));
    }
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
    template <bool kTwo> static __m512i decode(const BlockIq4Nl* b) {
        const __m512i table = _mm512_broadcast_i32x4(load128(kIq4NlBiased.data()));
        return _mm512_shuffle_epi8(table, nibbles<kTwo>(b[0].qs, b[kTwo].qs));
    }
};

// One pair (kTwo) or single last block b of an R x T tile.
template <class WB, int R, int T, bool kTwo>
inline void step(const WB* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t b,
                 __m512 (&acc)[R][T]) {
    using F = Format<WB>;
    const __m512i zero = _mm512_setzero_si512(), bias = _mm512_set1_epi8(F::kBias);
    __m512i xq[T], start[T];
    __m512 dx[T], sx[T];
    for (int t = 0; t < T; ++t) {
        const BlockQ8_0* xb = x + t * ldx + b;
        xq[t] = _mm512_zextsi256_si512(load256(xb[0].qs));
        if constexpr (kTwo) xq[t] = _mm512_inserti64x4(xq[t], load256(xb[1].qs), 1);
        start[t] = F::kBias ? _mm512_sub_epi32(zero, _mm512_dpbusd_epi32(zero, bias, xq[t])) : zero;
        const __m128 f = sumScales<kTwo>(xs + t * ldx + b);
        dx[t] = scales(f);
        if constexpr (F::kMin) sx[t] = sums(f);
    }
    for (int r = 0; r < R; ++r) {
        const WB* wb = w + r * ldw + b;
        const __m512i wq = F::template decode<kTwo>(wb);
        const __m128 f = blockScales<kTwo>(wb);
        const __m512 dw = scales(f), mw = F::kMin ? sums(f) : _mm512_setzero_ps();
        for (int t = 0; t < T; ++t) {
            const __m512 sum = _mm512_cvtepi32_ps(_mm512_dpbusd_epi32(start[t], wq, xq[t]));
            acc[r][t] = _mm512_fmadd_ps(_mm512_mul_ps(dw, dx[t]), sum, acc[r][t]);
            if constexpr (F::kMin) acc[r][t] = _mm512_fmadd_ps(mw, sx[t], acc[r][t]);
        }
    }
}

template <class WB, int R, int T>
void tile(const WB* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb, float* y,
          int64_t ldy) {
    __m512 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
    // One token (decode) streams R rows at once: fetch the next tile's rows (contiguous in a
    // matrix) as far ahead as this step reads, as gemm_avx512.cpp does.
    const char* next = reinterpret_cast<const char*>(w + R * ldw);
    constexpr int kStepBytes = 2 * R * static_cast<int>(sizeof(WB));
    int64_t b = 0;
    for (; b + 2 <= nb; b += 2) {
        if constexpr (T == 1)
            for (int p = 0; p < kStepBytes; p += 64) _mm_prefetch(next + b / 2 * kStepBytes + p, _MM_HINT_T0);
        step<WB, R, T, true>(w, ldw, x, xs, ldx, b, acc);
    }
    if (b < nb) step<WB, R, T, false>(w, ldw, x, xs, ldx, b, acc);
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum512(acc[r][t]);
}

template <class W, int R, int T> struct Tile {
    static void run(const W* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb, float* y,
                    int64_t ldy) {
        tile<W, R, T>(w, ldw, x, xs, ldx, nb, y, ldy);
    }
};

// Rows per tile for T tokens (index T - 1): one token reads 4 rows (4 prefetched streams); the
// others as many as R * T accumulators + 3 T activation vectors leave of the 32 registers.
constexpr int kRows[kMaxT] = {4, 4, 3, 3, 2, 2};

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

} // namespace mb::kernels::avx512

#endif
