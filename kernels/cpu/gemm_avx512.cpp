// Register-tiled AVX-512 matrix products: float tiles 16 lanes wide (ZMM), quantised tiles with VNNI.
//
// Float (F32, F16 weights; F32 activations): as gemm_avx2.cpp with ZMM registers, so a
// multiply-add covers 16 elements and 32 registers hold a 4 x 6 prefill tile (24 accumulators,
// one per output) with its 6 activation vectors. F16 weights convert 16 at a time (vcvtph2ps
// zmm). The k % 16 tail is one masked step, so any k runs vector code to the end.
// F32 keeps one accumulator per output and reduces four outputs' lanes at once (reduce4): at
// the model widths that matter (288 to 4096) the per-output reductions cost as much as the
// products, and a decode tile of 8 rows already has 8 independent chains.
//
// Quantised (Q8_0, Q4_0 weights; Q8_0 activations): vpdpbusd multiplies unsigned by signed
// bytes and sums each 4 into an int32 lane in one instruction (AVX2 needs sign, maddubs,
// madd). The weights are made unsigned by a bias: Q4_0 stores q + 8 in a nibble, used as is;
// Q8_0 flips the sign bit (q + 128). The bias times the activations, bias * sum(x) per lane, is
// subtracted once per token and block, by starting the accumulation from its negation, and
// shared by all R rows. Lane sums are exact, so each lane equals the AVX2 kernel's lane (bytes
// 4j..4j+3) and the float steps after it are the same.
//
// Bit stability as in gemm_avx2.cpp: every output is accumulated in its own registers, in the
// same order, by the same instructions, whatever tile it falls in; a 1 x 1 tile is the dot.
#include "kernels/cpu/gemm_avx512.h"
#include "kernels/cpu/gemm_panel.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__) && \
    defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics (vcvtph2ps, extracts) start from an undefined vector and warn
// about it wherever they are inlined (GCC bug 105593); that value is never read.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace mb::kernels::avx512 {

namespace {

inline __m512 load16(const float* p) {
    return _mm512_loadu_ps(p);
}
inline __m512 load16(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// The first n < 16 elements; the rest read as zero (masked loads never touch them).
inline __m512 load16(const float* p, __mmask16 m) {
    return _mm512_maskz_loadu_ps(m, p);
}
inline __m512 load16(const uint16_t* p, __mmask16 m) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, p));
}

// acc[r][t] += (w row r) * (x row t) over the 16 elements from i (masked lanes read as zero):
// one activation vector per token, one weight vector per row, R * T multiply-adds.
template <class W, int R, int T, class... Mask>
__attribute__((always_inline)) inline void fmaStep(const W* w, int64_t ldw, const float* x, int64_t ldx, int64_t i,
                                                   __m512 (&acc)[R][T], Mask... mask) {
    __m512 xv[T];
    for (int t = 0; t < T; ++t) xv[t] = load16(x + t * ldx + i, mask...);
    for (int r = 0; r < R; ++r) {
        const __m512 wv = load16(w + r * ldw + i, mask...);
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_fmadd_ps(wv, xv[t], acc[r][t]);
    }
}

// One R x T float tile over k elements. Each output has two accumulators: acc0 over the even
// 16-element steps, acc1 over the odd ones and the k % 16 tail (one masked step); then a fixed
// reduction of acc0 + acc1. Two chains keep decode's one-row tile off the FMA latency (with one
// chain it read F16 weights about 15% slower than AVX2; interleaving 2 or 4 rows, or the two
// halves of a row, was slower still). A tile too big for both chains in registers runs them in
// turn: the 4 x 6 prefill tile keeps 24 accumulators and its 6 activation vectors in registers
// (10 loads per 24 FMAs, about 2x AVX2's 1 x 6), parks acc0 on the stack after the even steps,
// then runs the odd ones; each accumulator sees the same FMAs in the same order either way, so
// every tile gives the single dot's bits.
template <class W, int R, int T>
void tileFloat(const W* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, float* y, int64_t ldy) {
    // One token with several rows (attention's keys): fetch the next tile's rows (R * ldw
    // elements on) as far ahead as this step reads, a cache line per row every 64 bytes.
    // always_inline: otherwise GCC keeps the accumulators of the big tiles in memory.
    const char* next = reinterpret_cast<const char*>(w + R * ldw);
    auto step = [&](int64_t i, __m512(&acc)[R][T], auto... mask) __attribute__((always_inline)) {
        if constexpr (T == 1 && R > 1)
            if ((i * static_cast<int64_t>(sizeof(W))) % 64 == 0)
                for (int r = 0; r < R; ++r)
                    _mm_prefetch(next + (r * ldw + i) * static_cast<int64_t>(sizeof(W)), _MM_HINT_T0);
        fmaStep<W, R, T>(w, ldw, x, ldx, i, acc, mask...);
    };
    const int64_t steps = k / 16;
    auto tail = [&](__m512(&acc)[R][T]) __attribute__((always_inline)) {
        if (steps * 16 < k) step(steps * 16, acc, static_cast<__mmask16>((1u << (k - steps * 16)) - 1));
    };
    __m512 acc0[R][T], acc1[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc0[r][t] = acc1[r][t] = _mm512_setzero_ps();
    if constexpr (2 * R * T + T + 1 <= 32) { // both chains fit in registers: alternate
        int64_t j = 0;
        for (; j + 2 <= steps; j += 2) {
            step(16 * j, acc0);
            step(16 * (j + 1), acc1);
        }
        if (j < steps) step(16 * j, acc0);
    } else { // even steps, park them, odd steps
        for (int64_t j = 0; j < steps; j += 2) step(16 * j, acc0);
        __m512 parked[R][T];
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) parked[r][t] = acc0[r][t];
        for (int64_t j = 1; j < steps; j += 2) step(16 * j, acc1);
        for (int r = 0; r < R; ++r)
            for (int t = 0; t < T; ++t) acc0[r][t] = parked[r][t];
    }
    tail(acc1);
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = _mm512_reduce_add_ps(_mm512_add_ps(acc0[r][t], acc1[r][t]));
}

// The lane sums of four vectors as [sum a, sum b, sum c, sum d], in one fixed tree for every
// lane: i + (i+8), then + (i+4), then + (i+2), then + (i+1). Two shuffles and an add per level
// serve all four, instead of a reduction each; a lone output passes zeros for b, c and d and
// gets the same bits as in any tile.
inline __m128 reduce4(__m512 a, __m512 b, __m512 c, __m512 d) {
    // [a0..7 + a8..15 | b0..7 + b8..15], likewise c and d (128-bit blocks 0,1 | 2,3).
    const __m512 ab = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xee));
    const __m512 cd = _mm512_add_ps(_mm512_shuffle_f32x4(c, d, 0x44), _mm512_shuffle_f32x4(c, d, 0xee));
    // Block j holds the 4 partial sums of vector j.
    __m512 s = _mm512_add_ps(_mm512_shuffle_f32x4(ab, cd, 0x88), _mm512_shuffle_f32x4(ab, cd, 0xdd));
    s = _mm512_add_ps(s, _mm512_permute_ps(s, 0x4e)); // (i, i+2)
    s = _mm512_add_ps(s, _mm512_permute_ps(s, 0xb1)); // (i, i+1): lane 4j is sum j
    return _mm512_castps512_ps128(_mm512_permutexvar_ps(_mm512_setr_epi32(0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12, 0, 4, 8, 12), s));
}

// One R x T F32 tile over k elements: one accumulator per output (R * T + T + 1 <= 32
// registers), each output's products summed in k order, then reduce4 per 4 rows of a token,
// stored 4 outputs at a time. Every output gets the same bits in any tile.
// W = uint16_t reads F16 rows with the same arithmetic (gemmF16AsF32: an F16 KV cache's keys).
template <int R, int T, class W = float>
void tileF32(const W* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, float* y, int64_t ldy) {
    static_assert(R * T + T + 1 <= 32, "the tile must fit the 32 ZMM registers");
    const char* next = reinterpret_cast<const char*>(w + R * ldw);
    __m512 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
    auto step = [&](int64_t i, auto... mask) __attribute__((always_inline)) {
        // Fetch the next tile's rows (contiguous in a matrix) as far ahead as this step reads:
        // a matrix read from memory or L3 (decode, or the first tile of tokens of a panel
        // block) streams without waiting on each line; from L2 the hint costs little.
        for (int r = 0; r < R; ++r)
            _mm_prefetch(next + (r * ldw + i) * static_cast<int64_t>(sizeof(W)), _MM_HINT_T0);
        fmaStep<W, R, T>(w, ldw, x, ldx, i, acc, mask...);
    };
    const int64_t steps = k / 16;
    for (int64_t j = 0; j < steps; ++j) step(16 * j);
    if (steps * 16 < k) step(steps * 16, static_cast<__mmask16>((1u << (k - steps * 16)) - 1));
    const __m512 zero = _mm512_setzero_ps();
    for (int t = 0; t < T; ++t)
        for (int r = 0; r < R; r += 4) {
            const __m128 sums = reduce4(acc[r][t], r + 1 < R ? acc[r + 1][t] : zero, r + 2 < R ? acc[r + 2][t] : zero,
                                        r + 3 < R ? acc[r + 3][t] : zero);
            float* out = y + t * ldy + r;
            if (r + 4 <= R) _mm_storeu_ps(out, sums);
            // The short store as a masked 16-lane vmovups: GCC makes a 4-lane masked store a
            // masked vextractf32x4, which faults on this AMD CPU when the masked-off lanes
            // cross into an unmapped page.
            else _mm512_mask_storeu_ps(out, static_cast<__mmask16>((1u << (R - r)) - 1), _mm512_castps128_ps512(sums));
        }
}

// Weight block -> 32 unsigned bytes q + bias (element order as in the block); kBias per format.
template <class WB> constexpr char kBias = 0;
template <> constexpr char kBias<BlockQ8_0> = static_cast<char>(0x80);
template <> constexpr char kBias<BlockQ4_0> = 8;
inline __m256i decodeBiased(const BlockQ8_0& b) {
    return _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)), _mm256_set1_epi8(-128));
}
inline __m256i decodeBiased(const BlockQ4_0& b) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
    // Elements 0..15 are the low nibbles, 16..31 the high nibbles.
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
    return _mm256_and_si256(both, _mm256_set1_epi8(0x0f));
}
inline __m256 scale(uint16_t d) {
    return _mm256_cvtph_ps(_mm_set1_epi16(static_cast<short>(d)));
}

// One R x T tile of weight blocks against Q8_0 activation blocks: per (row, token, block) one
// vpdpbusd into 8 exact int32 lanes, converted and added with scale dw * dx.
template <class WB, int R, int T>
void tileQuant(const WB* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i bias = _mm256_set1_epi8(kBias<WB>);
    const __m256i zero = _mm256_setzero_si256();
    // One token (decode) streams the weights from memory, R rows at once: fetch the next
    // tile's rows (contiguous in a weight matrix) as far ahead as this step reads.
    const char* next = reinterpret_cast<const char*>(w + R * ldw);
    constexpr int kStepBytes = R * static_cast<int>(sizeof(WB));
    for (int64_t b = 0; b < nb; ++b) {
        if constexpr (T == 1)
            for (int p = 0; p < kStepBytes; p += 64) _mm_prefetch(next + b * kStepBytes + p, _MM_HINT_T0);
        __m256i xq[T], start[T];
        __m256 dx[T];
        for (int t = 0; t < T; ++t) {
            const BlockQ8_0& xb = x[t * ldx + b];
            xq[t] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.qs));
            start[t] = _mm256_sub_epi32(zero, _mm256_dpbusd_epi32(zero, bias, xq[t])); // -bias * sum(x)
            dx[t] = scale(xb.d);
        }
        for (int r = 0; r < R; ++r) {
            const WB& wb = w[r * ldw + b];
            const __m256i wq = decodeBiased(wb);
            const __m256 dw = scale(wb.d);
            for (int t = 0; t < T; ++t) {
                const __m256 sum = _mm256_cvtepi32_ps(_mm256_dpbusd_epi32(start[t], wq, xq[t]));
                acc[r][t] = _mm256_fmadd_ps(_mm256_mul_ps(dw, dx[t]), sum, acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum(acc[r][t]);
}

template <class W, int R, int T> struct FloatTile {
    static void run(const W* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, float* y, int64_t ldy) {
        tileFloat<W, R, T>(w, ldw, x, ldx, k, y, ldy);
    }
};
template <class W, int R, int T> struct F32Tile {
    static void run(const W* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, float* y, int64_t ldy) {
        // Rows the table never uses for T (see kF32Rows) would not fit the registers.
        if constexpr (R * T + T + 1 <= 32) tileF32<R, T, W>(w, ldw, x, ldx, k, y, ldy);
    }
};
template <class W, int R, int T> struct QuantTile {
    static void run(const W* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb, float* y, int64_t ldy) {
        tileQuant<W, R, T>(w, ldw, x, ldx, nb, y, ldy);
    }
};

// Rows per tile for T tokens per tile (index T - 1). Float: R * T accumulators + T
// activations + 1 weight <= 32 ZMM registers; F16's 4 x 6 measured about 2x AVX2's 1 x 6 for
// prefill, where 3 x 6 and 2 x 6 (two accumulators per output) were no faster than AVX2; one
// F16 token reads 4 rows (8 chains). F32 takes the most rows that fit (8 chains for one token,
// which with the prefetch streams rows at the memory's pace). Quantised: one token reads 2
// Q8_0 or 4 Q4_0 rows, each prefetching the next tile.
// Chosen with tests/perf/matmul_bench (docs/PERFORMANCE.md).
constexpr int kF32Rows[kMaxT] = {8, 8, 8, 6, 4, 4};
constexpr int kF16Rows[kMaxT] = {1, 4, 4, 4, 4, 4};
constexpr int kQ4Rows[kMaxT] = {4, 4, 3, 2, 2, 2};
constexpr int kQ8Rows[kMaxT] = {2, 4, 3, 2, 2, 2};

constexpr auto kF32Tiles = tileTable<float, float, F32Tile>();
constexpr auto kF16Tiles = tileTable<uint16_t, float, FloatTile>();
constexpr auto kF16AsF32Tiles = tileTable<uint16_t, float, F32Tile>();
constexpr auto kQ8Tiles = tileTable<BlockQ8_0, BlockQ8_0, QuantTile>();
constexpr auto kQ4Tiles = tileTable<BlockQ4_0, BlockQ8_0, QuantTile>();

} // namespace

void gemmF32(const float* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows, int64_t tokens,
             float* y, int64_t ldy) {
    if (rows > 0 && tokens > 0) panel(kF32Tiles, kF32Rows, w, ldw, x, ldx, k, rows, tokens, y, ldy);
}

void gemmF16(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows, int64_t tokens,
             float* y, int64_t ldy) {
    if (rows > 0 && tokens > 0) panel(kF16Tiles, kF16Rows, w, ldw, x, ldx, k, rows, tokens, y, ldy);
}

void gemmQ8_0(const BlockQ8_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb, int64_t rows,
              int64_t tokens, float* y, int64_t ldy) {
    if (rows > 0 && tokens > 0) panel(kQ8Tiles, kQ8Rows, w, ldw, x, ldx, nb, rows, tokens, y, ldy);
}

void gemmQ4_0(const BlockQ4_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb, int64_t rows,
              int64_t tokens, float* y, int64_t ldy) {
    if (rows > 0 && tokens > 0) panel(kQ4Tiles, kQ4Rows, w, ldw, x, ldx, nb, rows, tokens, y, ldy);
}

namespace {
// Q queries' outputs (y rows ldy apart, weights a rows lda apart) over the same m rows of x,
// V vectors each: a row loaded once serves all Q, and Q * V independent chains hide the
// FMA latency that one query's V chains wait on. Each output is its own chain: the y value,
// then one FMA per row in order j. One query (axpyRows) is the pass with Q = 1.
template <int Q, int V, class T>
void axpyRowsQPass(const float* a, int64_t lda, const T* x, int64_t ldx, int64_t m, float* y, int64_t ldy,
                   __mmask16 last) {
    __m512 acc[Q][V];
#pragma GCC unroll 4
    for (int q = 0; q < Q; ++q)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) acc[q][v] = _mm512_maskz_loadu_ps(v + 1 < V ? 0xffff : last, y + q * ldy + 16 * v);
    for (int64_t j = 0; j < m; ++j) {
        // The rows a few ahead, as a V block from L2 or L3 would otherwise be waited on.
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) _mm_prefetch(reinterpret_cast<const char*>(x + (j + 4) * ldx + 16 * v), _MM_HINT_T0);
        __m512 xv[V];
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) xv[v] = load16(x + j * ldx + 16 * v, v + 1 < V ? 0xffff : last);
#pragma GCC unroll 4
        for (int q = 0; q < Q; ++q) {
            const __m512 aj = _mm512_set1_ps(a[q * lda + j]);
#pragma GCC unroll 4
            for (int v = 0; v < V; ++v) acc[q][v] = _mm512_fmadd_ps(aj, xv[v], acc[q][v]);
        }
    }
#pragma GCC unroll 4
    for (int q = 0; q < Q; ++q)
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) _mm512_mask_storeu_ps(y + q * ldy + 16 * v, v + 1 < V ? 0xffff : last, acc[q][v]);
}

template <class T>
void axpyRowsQOf(const float* a, int64_t lda, int64_t queries, const T* x, int64_t ldx, int64_t m, float* y,
                 int64_t ldy, int64_t n) {
    using Pass = void (*)(const float*, int64_t, const T*, int64_t, int64_t, float*, int64_t, __mmask16);
    static constexpr Pass kPasses[4][4] = {
        {axpyRowsQPass<1, 1, T>, axpyRowsQPass<1, 2, T>, axpyRowsQPass<1, 3, T>, axpyRowsQPass<1, 4, T>},
        {axpyRowsQPass<2, 1, T>, axpyRowsQPass<2, 2, T>, axpyRowsQPass<2, 3, T>, axpyRowsQPass<2, 4, T>},
        {axpyRowsQPass<3, 1, T>, axpyRowsQPass<3, 2, T>, axpyRowsQPass<3, 3, T>, axpyRowsQPass<3, 4, T>},
        {axpyRowsQPass<4, 1, T>, axpyRowsQPass<4, 2, T>, axpyRowsQPass<4, 3, T>, axpyRowsQPass<4, 4, T>}};
    for (int64_t i = 0; i < n; i += 64) {
        const int64_t len = std::min<int64_t>(64, n - i);
        const int64_t vectors = (len + 15) / 16;
        const int64_t tail = len - 16 * (vectors - 1);
        const auto last = static_cast<__mmask16>(tail == 16 ? 0xffff : (1u << tail) - 1);
        for (int64_t q0 = 0; q0 < queries; q0 += 4) {
            const int64_t qs = std::min<int64_t>(4, queries - q0);
            kPasses[qs - 1][vectors - 1](a + q0 * lda, lda, x + i, ldx, m, y + q0 * ldy + i, ldy, last);
        }
    }
}
} // namespace

void axpyRows(const float* a, const float* x, int64_t ldx, int64_t m, float* y, int64_t n) {
    axpyRowsQOf(a, 0, 1, x, ldx, m, y, 0, n);
}

void axpyRowsQ(const float* a, int64_t lda, int64_t queries, const float* x, int64_t ldx, int64_t m, float* y,
               int64_t ldy, int64_t n) {
    axpyRowsQOf(a, lda, queries, x, ldx, m, y, ldy, n);
}

void axpyRowsQF16(const float* a, int64_t lda, int64_t queries, const uint16_t* x, int64_t ldx, int64_t m, float* y,
                  int64_t ldy, int64_t n) {
    axpyRowsQOf(a, lda, queries, x, ldx, m, y, ldy, n);
}

void axpyRowsF16(const float* a, const uint16_t* x, int64_t ldx, int64_t m, float* y, int64_t n) {
    axpyRowsQOf(a, 0, 1, x, ldx, m, y, 0, n);
}

void gemmF16AsF32(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows,
                  int64_t tokens, float* y, int64_t ldy) {
    if (rows > 0 && tokens > 0) panel(kF16AsF32Tiles, kF32Rows, w, ldw, x, ldx, k, rows, tokens, y, ldy);
}

template <class T>
void scoreRows(const T* k, int64_t ldk, int64_t m, const float* q, int64_t heads, int64_t firstHead, int64_t group,
                 int64_t hd, float* s, int64_t lds) {
    for (int64_t j = 0; j < m; ++j)
        for (int64_t h = 0; h < heads; ++h)
            tileF32<1, 1, T>(k + j * ldk + (firstHead + h) / group * hd, 0, q + h * hd, 0, hd, s + h * lds + j, 0);
}

template <class T>
void sumRows(const float* p, int64_t ldp, const T* v, int64_t ldv, int64_t m, int64_t heads, int64_t firstHead,
               int64_t group, int64_t hd, float* y) {
    for (int64_t j = 0; j < m; ++j)
        for (int64_t h = 0; h < heads; ++h) {
            const __m512 a = _mm512_set1_ps(p[h * ldp + j]);
            const T* x = v + j * ldv + (firstHead + h) / group * hd;
            float* yh = y + h * hd;
            for (int64_t i = 0; i < hd; i += 16) {
                const auto mask = static_cast<__mmask16>(hd - i >= 16 ? 0xffff : (1u << (hd - i)) - 1);
                _mm512_mask_storeu_ps(yh + i, mask, _mm512_fmadd_ps(a, load16(x + i, mask), _mm512_maskz_loadu_ps(mask, yh + i)));
            }
        }
}
template void scoreRows<float>(const float*, int64_t, int64_t, const float*, int64_t, int64_t, int64_t, int64_t, float*,
                               int64_t);
template void scoreRows<uint16_t>(const uint16_t*, int64_t, int64_t, const float*, int64_t, int64_t, int64_t, int64_t,
                                  float*, int64_t);
template void sumRows<float>(const float*, int64_t, const float*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                             float*);
template void sumRows<uint16_t>(const float*, int64_t, const uint16_t*, int64_t, int64_t, int64_t, int64_t, int64_t,
                                int64_t, float*);

} // namespace mb::kernels::avx512

#endif
