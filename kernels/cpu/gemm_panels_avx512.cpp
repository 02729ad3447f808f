// AVX-512 outer-product products of F32 panels (kernels/cpu/panels.h) with F32 activations.
//
// A tile is MP panels (16 * MP weight rows) by NT tokens: MP * NT accumulators, each holding
// 16 outputs (one per row, in its lane). Per column c: MP aligned panel loads, NT broadcast
// activations (folded into the FMAs as {1to16} operands), MP * NT FMAs. The 3 x 8 tile loads 3
// vectors and 8 scalars per 24 FMAs, where the row-major 4 x 6 dot tile loads 10 vectors, and
// it needs no horizontal reduction at the end. Each output is one FMA chain over c from 0
// in order, so every tile, slice and token grouping gives the bits of
// acc = std::fma(w(r, c), x(t, c), acc) looped over c from acc = 0.
//
// Measured (docs/PERFORMANCE.md, "F32 panels"): the layer products of a 128-token prefill at
// the FMA peak within the machine's clock variation, where the dot tiles reached 40-75% of it.
#include "kernels/cpu/gemm_avx512.h"
#include "kernels/cpu/panels.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__FMA__)
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

namespace mb::kernels::avx512 {

namespace {

// Panels fetched ahead of the column being multiplied: 32 columns = 2 KiB per panel, enough
// to keep a matrix streamed from memory (decode) in flight; from L1/L2 (prefill) the hint
// is cheap.
constexpr int64_t kAhead = 32;

// y[t * ldy + 16 p + lane] for the lanes of masks[p], p < MP, t < NT. P: the first of MP
// consecutive panels of k columns each.
template <int MP, int NT>
void panelTile(const float* P, int64_t k, const float* x, int64_t ldx, float* y, int64_t ldy,
               const __mmask16* masks) {
    static_assert(MP * NT + MP + 1 <= 32, "the tile must fit the 32 ZMM registers");
    __m512 acc[MP][NT];
#pragma GCC unroll 8
    for (int p = 0; p < MP; ++p)
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) acc[p][t] = _mm512_setzero_ps();
    for (int64_t c = 0; c < k; ++c) {
        __m512 w[MP];
#pragma GCC unroll 8
        for (int p = 0; p < MP; ++p) {
            const float* col = P + (p * k + c) * kPanelRows;
            w[p] = _mm512_load_ps(col);
            // An address, not a pointer into the panels: past the last panel's end it points
            // nowhere, which a prefetch may (it never faults).
            _mm_prefetch(
                reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(col) + kAhead * 64),
                _MM_HINT_T0);
        }
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) {
            const __m512 b = _mm512_set1_ps(x[t * ldx + c]);
#pragma GCC unroll 8
            for (int p = 0; p < MP; ++p) acc[p][t] = _mm512_fmadd_ps(w[p], b, acc[p][t]);
        }
    }
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t)
#pragma GCC unroll 8
        for (int p = 0; p < MP; ++p)
            _mm512_mask_storeu_ps(y + t * ldy + p * kPanelRows, masks[p], acc[p][t]);
}

constexpr int kMaxMP = 8;
constexpr int kMaxNT = 8;
// Panels per tile for NT tokens (index NT - 1): at least 8 accumulators (the FMA latency
// times its two pipes) and at most what fits the registers.
constexpr int kPanelsFor[kMaxNT] = {8, 4, 3, 3, 3, 3, 3, 3};

using TileFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t,
                        const __mmask16*);

template <int MP, int NT> struct PanelTile {
    static void run(const float* P, int64_t k, const float* x, int64_t ldx, float* y, int64_t ldy,
                    const __mmask16* masks) {
        // Tiles the driver never picks (more panels than kPanelsFor[NT - 1]) would not fit.
        if constexpr (MP <= kPanelsFor[NT - 1])
            panelTile<MP, NT>(P, k, x, ldx, y, ldy, masks);
        else
            __builtin_trap();
    }
};
// The driver picks the panels per tile from a block's first (widest) tile of tokens and uses
// it for the block's last, narrower one too: that needs kPanelsFor never to grow with NT.
constexpr bool nonIncreasing() {
    for (int i = 1; i < kMaxNT; ++i)
        if (kPanelsFor[i] > kPanelsFor[i - 1]) return false;
    return true;
}
static_assert(nonIncreasing(), "kPanelsFor must not grow with the tokens per tile");
template <int NT, size_t... Ps>
constexpr std::array<TileFn, kMaxMP> panelRow(std::index_sequence<Ps...>) {
    return {&PanelTile<static_cast<int>(Ps) + 1, NT>::run...};
}
// [NT - 1][MP - 1]
template <size_t... Ns>
constexpr std::array<std::array<TileFn, kMaxMP>, kMaxNT> panelTable(std::index_sequence<Ns...>) {
    return {panelRow<static_cast<int>(Ns) + 1>(std::make_index_sequence<kMaxMP>())...};
}
constexpr auto kTiles = panelTable(std::make_index_sequence<kMaxNT>());

// Activations kept in L2 per pass over the rows: a block of tokens of about this many bytes.
constexpr int64_t kTokenBlockBytes = 256 * 1024;

} // namespace

void gemmPanelsF32(const float* panels, int64_t k, int64_t r0, int64_t r1, const float* x,
                   int64_t ldx, int64_t tokens, float* y, int64_t ldy) {
    if (r0 >= r1 || tokens <= 0 || k <= 0) return;
    const int64_t p0 = r0 / kPanelRows, p1 = (r1 + kPanelRows - 1) / kPanelRows;
    auto maskOf = [&](int64_t p) {
        const int64_t lo = std::max(r0, p * kPanelRows) - p * kPanelRows;
        const int64_t hi = std::min(r1, (p + 1) * kPanelRows) - p * kPanelRows;
        return static_cast<__mmask16>(((1u << hi) - 1u) & ~((1u << lo) - 1u));
    };
    const int64_t rowBytes = k * static_cast<int64_t>(sizeof(float));
    const int64_t blockTokens =
        std::max<int64_t>(kMaxNT, kTokenBlockBytes / rowBytes / kMaxNT * kMaxNT);
    for (int64_t b0 = 0; b0 < tokens; b0 += blockTokens) {
        const int64_t b1 = std::min(tokens, b0 + blockTokens);
        const int mp = kPanelsFor[std::min<int64_t>(kMaxNT, b1 - b0) - 1];
        // Each group of panels (in L1/L2 after its first tile) against every tile of the block's
        // tokens.
        for (int64_t g = p0; g < p1; g += mp) {
            const int64_t np = std::min<int64_t>(mp, p1 - g);
            __mmask16 masks[kMaxMP];
            for (int64_t p = 0; p < np; ++p) masks[p] = maskOf(g + p);
            for (int64_t t0 = b0; t0 < b1; t0 += kMaxNT) {
                const int64_t nt = std::min<int64_t>(kMaxNT, b1 - t0);
                kTiles[static_cast<size_t>(nt - 1)][static_cast<size_t>(np - 1)](
                    panels + g * kPanelRows * k, k, x + t0 * ldx, ldx,
                    y + t0 * ldy + g * kPanelRows, ldy, masks);
            }
        }
    }
}

} // namespace mb::kernels::avx512

#endif
