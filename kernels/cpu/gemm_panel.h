// Tile tables, the panel loop and small helpers shared by the SIMD kernel files (gemm_*, vec_*).
//
// Include only from a file compiled for one instruction set. Everything here has internal
// linkage (an unnamed namespace) on purpose: each including file gets its own copy built with
// its own -m flags, so the linker can never pick an AVX-512 build of panel() for the AVX2 table.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace mb::kernels {
namespace { // NOLINT(google-build-namespaces, cert-dcl59-cpp): see the file comment

// Tile tables indexed [T - 1][R - 1] (T tokens, R weight rows per tile), so edge tiles (fewer
// rows or tokens) use the same code with smaller constants.
constexpr int kMaxR = 8;
constexpr int kMaxT = 6;

// One tile: y[t * ldy + r] for r < R, t < T; weight rows ldw apart, activation rows ldx apart,
// k elements (float) or blocks (quantised) per row.
template <class W, class X>
using TileFn = void (*)(const W*, int64_t, const X*, int64_t, int64_t, float*, int64_t);
template <class W, class X>
using TileTable = std::array<std::array<TileFn<W, X>, kMaxR>, kMaxT>;

template <class W, class X, template <class, int, int> class Tile, int T, size_t... Rs>
constexpr std::array<TileFn<W, X>, kMaxR> rowTable(std::index_sequence<Rs...>) {
    return {&Tile<W, static_cast<int>(Rs) + 1, T>::run...};
}
template <class W, class X, template <class, int, int> class Tile>
constexpr TileTable<W, X> tileTable() {
    constexpr auto rs = std::make_index_sequence<kMaxR>();
    return {rowTable<W, X, Tile, 1>(rs), rowTable<W, X, Tile, 2>(rs), rowTable<W, X, Tile, 3>(rs),
            rowTable<W, X, Tile, 4>(rs), rowTable<W, X, Tile, 5>(rs), rowTable<W, X, Tile, 6>(rs)};
}

// The panel: rows in blocks of about kBlockBytes of weights (kept in L2), and for each block,
// each tile of tokens (whose activations then stay in L1) against every tile of the block's
// rows. So a matrix bigger than L2 (the output matrix) is read from memory once per call, not
// once per tile of tokens; the activations, re-read per block, are the smaller stream: a weight
// vector is 16 bytes in F16 and 18-34 bytes per 32 elements quantised, an activation vector 32
// bytes per 8 elements. rowsPerTile[T - 1]: rows per tile of T tokens. Which tile computes an
// output never changes its bits (the tile functions' contract), so blocking is free to choose.
constexpr int64_t kBlockBytes = 256 * 1024;

// Tokens in the fewest tiles of at most maxT, as even as can be (8 = 4 + 4, not 6 + 2: a 2-token
// tile loads 10 vectors per 16 products where a 4-token one loads 10 per 24): fn(t0, T) per tile.
template <class Fn>
void forEachTokenTile(int64_t tokens, int64_t maxT, Fn&& fn) {
    for (int64_t t0 = 0, T = 0; t0 < tokens; t0 += T) {
        const int64_t left = tokens - t0;
        const int64_t tiles = (left + maxT - 1) / maxT;
        T = (left + tiles - 1) / tiles;
        fn(t0, T);
    }
}

// The panel's walk over rows of rowBytes each: fn(T, R, r0, t0) for the tile of R rows from r0
// and T tokens from t0, rows in blocks of about kBlockBytes.
template <class Fn>
void forEachTile(const int* rowsPerTile, int64_t rowBytes, int64_t rows, int64_t tokens, Fn&& fn) {
    // A multiple of 24, which the common tile heights (8, 6, 4, 3, 2) divide.
    const int64_t block =
        tokens <= kMaxT ? rows : std::max<int64_t>(24, kBlockBytes / std::max<int64_t>(1, rowBytes) / 24 * 24);
    for (int64_t b0 = 0; b0 < rows; b0 += block) {
        const int64_t b1 = std::min(rows, b0 + block);
        forEachTokenTile(tokens, kMaxT, [&](int64_t t0, int64_t T) {
            const int64_t rowTile = rowsPerTile[T - 1];
            for (int64_t r0 = b0; r0 < b1; r0 += rowTile) fn(T, std::min(rowTile, b1 - r0), r0, t0);
        });
    }
}

template <class W, class X>
void panel(const TileTable<W, X>& table, const int* rowsPerTile, const W* w, int64_t ldw, const X* x,
           int64_t ldx, int64_t k, int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    forEachTile(rowsPerTile, k * static_cast<int64_t>(sizeof(W)), rows, tokens,
                [&](int64_t T, int64_t R, int64_t r0, int64_t t0) {
                    table[static_cast<size_t>(T - 1)][static_cast<size_t>(R - 1)](
                        w + r0 * ldw, ldw, x + t0 * ldx, ldx, k, y + t0 * ldy + r0, ldy);
                });
}

// A single dot product as the 1 x 1 tile of a gemm (VecKernels::gemm* signature), so a dot
// and every tile holding that row and token agree bit for bit.
template <auto Gemm, class W, class X>
float dotOfGemm(const W* w, const X* x, int64_t n) {
    float y;
    Gemm(w, 0, x, 0, n, 1, 1, &y, 1);
    return y;
}

// VecKernels::axpyRowsQ as one AxpyRows call per query (tables without a multi-query pass).
template <auto AxpyRows, class T>
void axpyRowsEach(const float* a, int64_t lda, int64_t queries, const T* x, int64_t ldx, int64_t m, float* y,
                  int64_t ldy, int64_t n) {
    for (int64_t q = 0; q < queries; ++q) AxpyRows(a + q * lda, x, ldx, m, y + q * ldy, n);
}

#if defined(__AVX__)
// The sum of 8 floats in a fixed order.
inline float hsum(__m256 v) {
    __m128 lo = _mm256_castps256_ps128(v);
    __m128 hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
    return _mm_cvtss_f32(lo);
}
#endif

} // namespace
} // namespace mb::kernels
