// The panel loop of gemm_panel.h for the tiles that also read activation block sums (Q4_1, Q5_0,
// Q5_1, IQ4_NL against Q8_0: kernels/cpu/quant_legacy.h). Internal linkage, as gemm_panel.h:
// include only from a file compiled for one instruction set.
#pragma once

#include "kernels/cpu/gemm_panel.h"
#include "kernels/tensor_type.h"

namespace mb::kernels {
namespace { // NOLINT(google-build-namespaces, cert-dcl59-cpp): see gemm_panel.h

// One tile: y[t * ldy + r] for r < R, t < T; weight rows ldw blocks apart, activation rows
// (blocks and sums) ldx apart, nb blocks per row.
template <class W>
using LegacyTileFn = void (*)(const W*, int64_t, const BlockQ8_0*, const Q8Sums*, int64_t, int64_t, float*, int64_t);
template <class W>
using LegacyTileTable = std::array<std::array<LegacyTileFn<W>, kMaxR>, kMaxT>;

template <class W, template <class, int, int> class Tile, int T, size_t... Rs>
constexpr std::array<LegacyTileFn<W>, kMaxR> legacyRowTable(std::index_sequence<Rs...>) {
    return {&Tile<W, static_cast<int>(Rs) + 1, T>::run...};
}
template <class W, template <class, int, int> class Tile>
constexpr LegacyTileTable<W> legacyTileTable() {
    constexpr auto rs = std::make_index_sequence<kMaxR>();
    return {legacyRowTable<W, Tile, 1>(rs), legacyRowTable<W, Tile, 2>(rs), legacyRowTable<W, Tile, 3>(rs),
            legacyRowTable<W, Tile, 4>(rs), legacyRowTable<W, Tile, 5>(rs), legacyRowTable<W, Tile, 6>(rs)};
}

// gemm_panel.h's panel() for these tiles.
template <class W>
void legacyPanel(const LegacyTileTable<W>& table, const int* rowsPerTile, const W* w, int64_t ldw, const BlockQ8_0* x,
                 const Q8Sums* xs, int64_t ldx, int64_t nb, int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    if (rows <= 0 || tokens <= 0) return;
    forEachTile(rowsPerTile, nb * static_cast<int64_t>(sizeof(W)), rows, tokens,
                [&](int64_t T, int64_t R, int64_t r0, int64_t t0) {
                    table[static_cast<size_t>(T - 1)][static_cast<size_t>(R - 1)](
                        w + r0 * ldw, ldw, x + t0 * ldx, xs + t0 * ldx, ldx, nb, y + t0 * ldy + r0, ldy);
                });
}

// A single dot as the 1 x 1 tile of a gemm (VecKernels::gemmQ4_1's signature), so a dot and
// every tile holding that row and token agree bit for bit.
template <auto Gemm, class W>
float legacyDotOfGemm(const W* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb) {
    float y;
    Gemm(w, 0, x, xs, 0, nb, 1, 1, &y, 1);
    return y;
}

} // namespace
} // namespace mb::kernels
