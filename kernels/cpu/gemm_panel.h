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

// The panel: for each tile of tokens (whose activations then stay in L1), every tile of
// rows. The weights stream from L2 instead (callers keep a panel's rows small enough), which
// costs less: a weight vector is 16 bytes in F16 and 18-34 bytes per 32 elements quantised,
// an activation vector 32 bytes per 8 elements. rowsPerTile[T - 1]: rows per tile of T tokens.
template <class W, class X>
void panel(const TileTable<W, X>& table, const int* rowsPerTile, const W* w, int64_t ldw, const X* x,
           int64_t ldx, int64_t k, int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    for (int64_t t0 = 0; t0 < tokens; t0 += kMaxT) {
        const int64_t T = std::min<int64_t>(kMaxT, tokens - t0);
        const int64_t rowTile = rowsPerTile[T - 1];
        for (int64_t r0 = 0; r0 < rows; r0 += rowTile) {
            const int64_t R = std::min(rowTile, rows - r0);
            table[static_cast<size_t>(T - 1)][static_cast<size_t>(R - 1)](
                w + r0 * ldw, ldw, x + t0 * ldx, ldx, k, y + t0 * ldy + r0, ldy);
        }
    }
}

// A single dot product as the 1 x 1 tile of a gemm (VecKernels::gemm* signature), so a dot
// and every tile holding that row and token agree bit for bit.
template <auto Gemm, class W, class X>
float dotOfGemm(const W* w, const X* x, int64_t n) {
    float y;
    Gemm(w, 0, x, 0, n, 1, 1, &y, 1);
    return y;
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
