// Register-tiled AVX2 matrix products: R weight rows x T tokens per tile, accumulating in YMM registers.
//
// Why tiles: a dot product per (row, token) loads one weight vector and one activation
// vector per multiply-add. A tile of R rows and T tokens loads R + T vectors for R * T
// multiply-adds, and decodes (F16 -> F32, Q4_0 nibbles -> bytes) each weight vector once
// for T tokens. Prefill runs 1 x 6 float tiles (12 accumulators, two per output, + 1
// weight; activations are FMA memory operands from L1) and 1 x 6 quantised tiles; the
// shapes per token count are in kFloatRows/kQ8Rows/kQ4Rows, chosen by tests/perf/matmul_bench.
//
// Bit stability: every output is accumulated in its own registers (two for float, one
// quantised), in the same order, by the same instructions, whatever tile it falls in; a
// 1 x 1 tile is the single dot product. So results do not depend on the tile shape, on how rows are split across
// threads, nor on how tokens are grouped into chunks.
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/gemm_panel.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

#include <cmath>

namespace mb::kernels::avx2 {

namespace {

inline __m256 load8(const float* p) {
    return _mm256_loadu_ps(p);
}
inline __m256 load8(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}
inline float scalar(float v) {
    return v;
}
inline float scalar(uint16_t h) {
    return _cvtsh_ss(h);
}

// The end of one output's two-chain sum (tileFloat's and the chunked tiles'): the 8-element
// remainder to the first accumulator, the fixed horizontal sum, then the scalar tail.
template <class W>
float finishFloat(const W* w, const float* x, int64_t k, __m256 acc0, __m256 acc1) {
    int64_t i = k / 16 * 16;
    if (i + 8 <= k) {
        acc0 = _mm256_fmadd_ps(load8(w + i), _mm256_loadu_ps(x + i), acc0);
        i += 8;
    }
    float s = hsum(_mm256_add_ps(acc0, acc1));
    for (int64_t j = i; j < k; ++j) s = std::fma(scalar(w[j]), x[j], s);
    return s;
}

// Bytes ahead of the read that the one-token float tile fetches each row (see tileFloat).
constexpr int64_t kFloatAhead = 1024;

// One R x T float tile over k elements. Each output has two accumulators, for the first
// and second 8 elements of every 16 (two dependency chains, so even a 1 x 1 tile is not
// bound by FMA latency); an 8-element remainder goes to the first; then a fixed
// horizontal sum of their sum, then the k % 8 tail with scalar FMAs.
template <class W, int R, int T>
void tileFloat(const W* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, float* y,
               int64_t ldy) {
    __m256 acc0[R][T], acc1[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc0[r][t] = acc1[r][t] = _mm256_setzero_ps();
    auto step = [&](int64_t i, __m256(&acc)[R][T]) {
        __m256 xv[T];
        for (int t = 0; t < T; ++t) xv[t] = _mm256_loadu_ps(x + t * ldx + i);
        for (int r = 0; r < R; ++r) {
            const __m256 wv = load8(w + r * ldw + i);
            for (int t = 0; t < T; ++t) acc[r][t] = _mm256_fmadd_ps(wv, xv[t], acc[r][t]);
        }
    };
    // One token (decode) streams the weights from memory: each of the R rows is fetched
    // kFloatAhead bytes ahead of where it is read, once per 64-byte line.
    int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
        if constexpr (T == 1)
            if ((i * static_cast<int64_t>(sizeof(W))) % 64 == 0)
                for (int r = 0; r < R; ++r)
                    _mm_prefetch(reinterpret_cast<const char*>(w + r * ldw + i) + kFloatAhead, _MM_HINT_T0);
        step(i, acc0);
        step(i + 8, acc1);
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = finishFloat(w + r * ldw, x + t * ldx, k, acc0[r][t], acc1[r][t]);
}

// Weight block -> 32 signed bytes (element order as in the block) and its F16 scale.
inline __m256i decode(const BlockQ8_0& b) {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
}
inline __m256i decode(const BlockQ4_0& b) {
    const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
    // Elements 0..15 are the low nibbles, 16..31 the high nibbles.
    const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
    return _mm256_sub_epi8(_mm256_and_si256(both, _mm256_set1_epi8(0x0f)), _mm256_set1_epi8(8));
}

// One R x T tile of weight blocks against Q8_0 activation blocks. Per (row, token, block):
// 32 byte products summed exactly into 8 int32 lanes (maddubs needs an unsigned operand,
// so |w| times x carrying w's sign), converted to float and added with scale dw * dx.
template <class WB, int R, int T>
void tileQuant(const WB* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb, float* y,
               int64_t ldy) {
    __m256 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm256_setzero_ps();
    const __m256i ones = _mm256_set1_epi16(1);
    // One token (decode) streams the weights from memory, R rows at once; the hardware
    // prefetchers follow R interleaved streams poorly, so fetch the next tile's rows (the
    // next R * ldw blocks, contiguous in a weight matrix) as far ahead as this step reads.
    const char* next = reinterpret_cast<const char*>(w + R * ldw);
    constexpr int kStepBytes = R * static_cast<int>(sizeof(WB));
    for (int64_t b = 0; b < nb; ++b) {
        if constexpr (T == 1)
            for (int p = 0; p < kStepBytes; p += 64) _mm_prefetch(next + b * kStepBytes + p, _MM_HINT_T0);
        __m256 dx[T];
        for (int t = 0; t < T; ++t) dx[t] = _mm256_set1_ps(_cvtsh_ss(x[t * ldx + b].d));
        for (int r = 0; r < R; ++r) {
            const WB& wb = w[r * ldw + b];
            const __m256i wq = decode(wb);
            const __m256i absW = _mm256_sign_epi8(wq, wq);
            const __m256 dw = _mm256_set1_ps(_cvtsh_ss(wb.d));
            for (int t = 0; t < T; ++t) {
                const __m256i xq =
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[t * ldx + b].qs));
                const __m256i pairs = _mm256_maddubs_epi16(absW, _mm256_sign_epi8(xq, wq));
                const __m256 sum = _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, ones));
                acc[r][t] = _mm256_fmadd_ps(_mm256_mul_ps(dw, dx[t]), sum, acc[r][t]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) y[t * ldy + r] = hsum(acc[r][t]);
}

// Rows too wide for six tokens' activations to stay in L1 (6 x 4k bytes over kL1Bytes): the
// 1 x T tiles read every activation vector from L2, 7 loads per 6 FMAs. So prefill over such
// rows walks k in chunks of kChunk elements (a multiple of 16: the same two accumulators see the
// same elements in the same order as tileFloat's), each chunk of T tokens' activations (12 KB)
// staying in L1 while up to kChunkRows rows pass it; each output's two accumulators wait in
// `acc` between chunks. The remainder, the sum and the tail are tileFloat's (finishFloat), so every
// output keeps the single dot's bits.
constexpr int64_t kL1Bytes = 32 * 1024;
constexpr int64_t kChunk = 512;
constexpr int64_t kChunkRows = 64;

// acc[2 t], acc[2 t + 1]: token t's accumulators for elements [c0, c1) of row w (16 | c1 - c0).
template <class W, int T>
void chunkFloat(const W* w, const float* x, int64_t ldx, int64_t c0, int64_t c1, __m256* acc) {
    __m256 a0[T], a1[T];
    for (int t = 0; t < T; ++t) a0[t] = acc[2 * t], a1[t] = acc[2 * t + 1];
    for (int64_t i = c0; i < c1; i += 16) {
        const __m256 w0 = load8(w + i), w1 = load8(w + i + 8);
        for (int t = 0; t < T; ++t) {
            a0[t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + t * ldx + i), a0[t]);
            a1[t] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + t * ldx + i + 8), a1[t]);
        }
    }
    for (int t = 0; t < T; ++t) acc[2 * t] = a0[t], acc[2 * t + 1] = a1[t];
}

// y for rows [0, rows) (rows <= kChunkRows) and T tokens.
template <class W, int T>
void chunkedTokens(const W* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows, float* y,
                   int64_t ldy) {
    const int64_t full = k / 16 * 16;
    alignas(32) __m256 acc[kChunkRows][2 * T];
    for (int64_t r = 0; r < rows; ++r)
        for (int i = 0; i < 2 * T; ++i) acc[r][i] = _mm256_setzero_ps();
    for (int64_t c0 = 0; c0 < full; c0 += kChunk) {
        const int64_t c1 = std::min(full, c0 + kChunk);
        for (int64_t r = 0; r < rows; ++r) chunkFloat<W, T>(w + r * ldw, x, ldx, c0, c1, acc[r]);
    }
    for (int64_t r = 0; r < rows; ++r)
        for (int t = 0; t < T; ++t)
            y[t * ldy + r] = finishFloat(w + r * ldw, x + t * ldx, k, acc[r][2 * t], acc[r][2 * t + 1]);
}

// tokens > kMaxT over wide rows: blocks of rows (at most kChunkRows, about kBlockBytes of weights,
// kept in L2 as panel() keeps its blocks, so a matrix larger than L2 is read from memory once),
// each against every tile of T tokens, split as panel() splits them.
template <class W>
void chunkedFloat(const W* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows, int64_t tokens,
                  float* y, int64_t ldy) {
    using Fn = void (*)(const W*, int64_t, const float*, int64_t, int64_t, int64_t, float*, int64_t);
    constexpr Fn fns[kMaxT] = {chunkedTokens<W, 1>, chunkedTokens<W, 2>, chunkedTokens<W, 3>,
                               chunkedTokens<W, 4>, chunkedTokens<W, 5>, chunkedTokens<W, 6>};
    const int64_t rowBytes = k * static_cast<int64_t>(sizeof(W));
    const int64_t block = std::clamp<int64_t>(2 * kBlockBytes / rowBytes, 8, kChunkRows);
    for (int64_t r0 = 0; r0 < rows; r0 += block) {
        const int64_t nr = std::min(block, rows - r0);
        forEachTokenTile(tokens, kMaxT, [&](int64_t t0, int64_t T) {
            fns[T - 1](w + r0 * ldw, ldw, x + t0 * ldx, ldx, k, nr, y + t0 * ldy + r0, ldy);
        });
    }
}

// Whether a float product takes the chunked path: prefill (more tokens than one tile) over rows
// whose six tokens' activations exceed L1.
inline bool chunked(int64_t k, int64_t tokens) { return tokens > kMaxT && 6 * 4 * k > kL1Bytes; }

template <class W, int R, int T> struct FloatTile {
    static void run(const W* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, float* y,
                    int64_t ldy) {
        tileFloat<W, R, T>(w, ldw, x, ldx, k, y, ldy);
    }
};
template <class W, int R, int T> struct QuantTile {
    static void run(const W* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb, float* y,
                    int64_t ldy) {
        tileQuant<W, R, T>(w, ldw, x, ldx, nb, y, ldy);
    }
};

// Rows per tile for a given number of tokens per tile (index T - 1): as many accumulators
// as the registers allow (float: 2 * R * T + 1 + temporaries <= 16; quantised tiles need
// more temporaries per row). Measured on Zen 5 (matmul_bench, 128 tokens): 1 x 6 beat
// 2 x 3 and 1 x 4 for F16 by 10-20%; quantised shapes differ by less than the noise.
// One token (decode) reads four float rows at once on Intel: on the Emerald Rapids VM of
// 2026-12-05, `matmul_bench 1 1 5 llama-3.2-1b f16` under MODEBENCH_CPU=avx2 gave 6.4 GMAC/s
// (12.8 GB/s) for the 128256 x 2048 F16 matrix with 4 rows against 5.8-6.0 with 2 and 4.8 with
// 1 (more misses in flight), and 15 against 9-11 at the layer shapes. On AMD (the Zen 5 VM
// before it) one row measured faster than interleaved rows, so AMD keeps one (kFloatRowsAmd).
// Two Q8_0 rows and four Q4_0 rows (best of 1, 2 and 4 in matmul_bench's one-token 32000 x 768
// product, though by less than the noise of the shared machine for Q4_0).
constexpr int kFloatRows[kMaxT] = {4, 3, 2, 1, 1, 1};
constexpr int kFloatRowsAmd[kMaxT] = {1, 3, 2, 1, 1, 1};
inline const int* floatRows() { return cpuFeatures().amd ? kFloatRowsAmd : kFloatRows; }
constexpr int kQ4Rows[kMaxT] = {4, 3, 2, 2, 1, 1};
constexpr int kQ8Rows[kMaxT] = {2, 3, 2, 2, 1, 1};

constexpr auto kF32Tiles = tileTable<float, float, FloatTile>();
constexpr auto kF16Tiles = tileTable<uint16_t, float, FloatTile>();
constexpr auto kQ8Tiles = tileTable<BlockQ8_0, BlockQ8_0, QuantTile>();
constexpr auto kQ4Tiles = tileTable<BlockQ4_0, BlockQ8_0, QuantTile>();

} // namespace

void gemmF32(const float* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows,
             int64_t tokens, float* y, int64_t ldy) {
    if (rows <= 0 || tokens <= 0) return;
    if (chunked(k, tokens))
        chunkedFloat(w, ldw, x, ldx, k, rows, tokens, y, ldy);
    else
        panel(kF32Tiles, floatRows(), w, ldw, x, ldx, k, rows, tokens, y, ldy);
}

void gemmF16(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows,
             int64_t tokens, float* y, int64_t ldy) {
    if (rows <= 0 || tokens <= 0) return;
    if (chunked(k, tokens))
        chunkedFloat(w, ldw, x, ldx, k, rows, tokens, y, ldy);
    else
        panel(kF16Tiles, floatRows(), w, ldw, x, ldx, k, rows, tokens, y, ldy);
}

void gemmQ8_0(const BlockQ8_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    if (rows > 0 && tokens > 0)
        panel(kQ8Tiles, kQ8Rows, w, ldw, x, ldx, nb, rows, tokens, y, ldy);
}

void gemmQ4_0(const BlockQ4_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    if (rows > 0 && tokens > 0)
        panel(kQ4Tiles, kQ4Rows, w, ldw, x, ldx, nb, rows, tokens, y, ldy);
}

namespace {
// y[0..n) += sum_j a[j] * x_j: 32 outputs at a time stay in four registers across all m
// rows; each output sees the same FMAs in the same order as m calls of axpy.
template <class T>
void axpyRowsOf(const float* a, const T* x, int64_t ldx, int64_t m, float* y, int64_t n) {
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 y0 = _mm256_loadu_ps(y + i), y1 = _mm256_loadu_ps(y + i + 8);
        __m256 y2 = _mm256_loadu_ps(y + i + 16), y3 = _mm256_loadu_ps(y + i + 24);
        for (int64_t j = 0; j < m; ++j) {
            const __m256 aj = _mm256_set1_ps(a[j]);
            const T* xj = x + j * ldx + i;
            y0 = _mm256_fmadd_ps(aj, load8(xj), y0);
            y1 = _mm256_fmadd_ps(aj, load8(xj + 8), y1);
            y2 = _mm256_fmadd_ps(aj, load8(xj + 16), y2);
            y3 = _mm256_fmadd_ps(aj, load8(xj + 24), y3);
        }
        _mm256_storeu_ps(y + i, y0);
        _mm256_storeu_ps(y + i + 8, y1);
        _mm256_storeu_ps(y + i + 16, y2);
        _mm256_storeu_ps(y + i + 24, y3);
    }
    for (; i + 8 <= n; i += 8) {
        __m256 y0 = _mm256_loadu_ps(y + i);
        for (int64_t j = 0; j < m; ++j) y0 = _mm256_fmadd_ps(_mm256_set1_ps(a[j]), load8(x + j * ldx + i), y0);
        _mm256_storeu_ps(y + i, y0);
    }
    for (; i < n; ++i) {
        float s = y[i];
        for (int64_t j = 0; j < m; ++j) s = std::fma(a[j], scalar(x[j * ldx + i]), s);
        y[i] = s;
    }
}
} // namespace

void axpyRows(const float* a, const float* x, int64_t ldx, int64_t m, float* y, int64_t n) {
    axpyRowsOf(a, x, ldx, m, y, n);
}

void axpyRowsF16(const float* a, const uint16_t* x, int64_t ldx, int64_t m, float* y, int64_t n) {
    axpyRowsOf(a, x, ldx, m, y, n);
}

template <class T>
void scoreRows(const T* k, int64_t ldk, int64_t m, const float* q, int64_t heads, int64_t firstHead, int64_t group,
                 int64_t hd, float* s, int64_t lds) {
    for (int64_t j = 0; j < m; ++j)
        for (int64_t h = 0; h < heads; ++h)
            tileFloat<T, 1, 1>(k + j * ldk + (firstHead + h) / group * hd, 0, q + h * hd, 0, hd, s + h * lds + j, 0);
}

template <class T>
void sumRows(const float* p, int64_t ldp, const T* v, int64_t ldv, int64_t m, int64_t heads, int64_t firstHead,
               int64_t group, int64_t hd, float* y) {
    for (int64_t j = 0; j < m; ++j)
        for (int64_t h = 0; h < heads; ++h) {
            const float a = p[h * ldp + j];
            const T* x = v + j * ldv + (firstHead + h) / group * hd;
            float* yh = y + h * hd;
            int64_t i = 0;
            for (; i + 8 <= hd; i += 8)
                _mm256_storeu_ps(yh + i, _mm256_fmadd_ps(_mm256_set1_ps(a), load8(x + i), _mm256_loadu_ps(yh + i)));
            for (; i < hd; ++i) yh[i] = std::fma(a, scalar(x[i]), yh[i]);
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

} // namespace mb::kernels::avx2

#endif
