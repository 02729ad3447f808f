// The outer-product tiles' shared parts for the AVX-512 panel products (gemm_panels_avx512.cpp,
// gemm_panels_k_avx512.cpp): zeroing and masked stores of a tile's accumulators, the tables of
// tile functions by shape, and the walk over row panels and token blocks.
//
// Include only from a file compiled with the AVX-512 flags. Internal linkage on purpose, as
// gemm_panel.h: each including file gets its own copy built with its own -m flags.
#pragma once

#include "kernels/cpu/panels.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace mb::kernels::avx512 {
namespace { // NOLINT(google-build-namespaces, cert-dcl59-cpp): see the file comment

template <int MP, int NT>
__attribute__((always_inline)) inline void zeroTile(__m512 (&acc)[MP][NT]) {
#pragma GCC unroll 8
    for (int p = 0; p < MP; ++p)
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) acc[p][t] = _mm512_setzero_ps();
}

// y[t * ldy + 16 p + lane] = acc[p][t][lane] for the lanes of masks[p] (masked 16-lane
// stores: lanes masked off are never touched, even across a page end).
template <int MP, int NT>
__attribute__((always_inline)) inline void storeTile(const __m512 (&acc)[MP][NT], float* y,
                                                     int64_t ldy, const __mmask16* masks) {
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t)
#pragma GCC unroll 8
        for (int p = 0; p < MP; ++p)
            _mm512_mask_storeu_ps(y + t * ldy + p * kPanelRows, masks[p], acc[p][t]);
}

// The tile functions of every shape, [NT - 1][MP - 1]: Tile<MP, NT>::run as Fn.
template <template <int, int> class Tile, class Fn, int MaxMP, int NT, size_t... Ps>
constexpr std::array<Fn, MaxMP> tileRow(std::index_sequence<Ps...>) {
    return {&Tile<static_cast<int>(Ps) + 1, NT>::run...};
}
template <template <int, int> class Tile, class Fn, int MaxMP, size_t... Ns>
constexpr std::array<std::array<Fn, MaxMP>, sizeof...(Ns)> tileGrid(std::index_sequence<Ns...>) {
    return {tileRow<Tile, Fn, MaxMP, static_cast<int>(Ns) + 1>(std::make_index_sequence<MaxMP>())...};
}

// Activations kept in L2 per pass over the rows: a block of tokens of about this many bytes.
constexpr int64_t kTokenBlockBytes = 256 * 1024;

// Rows [r0, r1) (panels p0..p1, the first and last masked to the range) against `tokens`
// tokens of tokenBytes each: blocks of tokens that fit kTokenBlockBytes; per block, each
// group of panels (in L1/L2 after its first tile) against every tile of the block's tokens.
// tile(nt, np, firstPanel, firstToken, masks) runs one tile; panelsFor[NT - 1] panels per
// tile of NT tokens, never growing with NT (the block's last, narrower tile reuses the
// group its first tile chose).
template <int MaxNT, int MaxMP, class Tile>
void drivePanels(const int (&panelsFor)[MaxNT], int64_t r0, int64_t r1, int64_t tokens,
                 int64_t tokenBytes, Tile&& tile) {
    const int64_t p0 = r0 / kPanelRows, p1 = (r1 + kPanelRows - 1) / kPanelRows;
    auto maskOf = [&](int64_t p) {
        const int64_t lo = std::max(r0, p * kPanelRows) - p * kPanelRows;
        const int64_t hi = std::min(r1, (p + 1) * kPanelRows) - p * kPanelRows;
        return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
    };
    const int64_t blockTokens = std::max<int64_t>(
        MaxNT, kTokenBlockBytes / std::max<int64_t>(1, tokenBytes) / MaxNT * MaxNT);
    for (int64_t b0 = 0; b0 < tokens; b0 += blockTokens) {
        const int64_t b1 = std::min(tokens, b0 + blockTokens);
        const int mp = panelsFor[std::min<int64_t>(MaxNT, b1 - b0) - 1];
        for (int64_t g = p0; g < p1; g += mp) {
            const int64_t np = std::min<int64_t>(mp, p1 - g);
            __mmask16 masks[MaxMP];
            for (int64_t p = 0; p < np; ++p) masks[p] = maskOf(g + p);
            for (int64_t t0 = b0; t0 < b1; t0 += MaxNT)
                tile(std::min<int64_t>(MaxNT, b1 - t0), np, g, t0, masks);
        }
    }
}

} // namespace
} // namespace mb::kernels::avx512
