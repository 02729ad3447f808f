// AVX-512 outer-product products of F32, F16, Q8_0 and Q4_0 panels (kernels/cpu/panels.h) with F32
// or Q8_0 activations.
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

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) &&                      \
    defined(__AVX512VNNI__) && defined(__FMA__) && defined(__F16C__)
#include "kernels/cpu/panel_tiles_avx512.h"

#include <immintrin.h>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics (vcvtdq2ps) start from an undefined vector and warn about it
// wherever they are inlined (GCC bug 105593); that value is never read. (This file holds no
// standard-library containers: their out-of-line copies, built with these -m flags, could
// be the ones the linker keeps for every caller.)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

namespace mb::kernels::avx512 {

namespace {

// Panels fetched ahead of the column being multiplied: 32 columns = 2 KiB per panel, enough
// to keep a matrix streamed from memory (decode) in flight; from L1/L2 (prefill) the hint
// is cheap.
constexpr int64_t kAhead = 32;

// 16 rows of one panel column as F32: F32 panels as stored, F16 panels converted (exactly).
inline __m512 loadColumn(const float* col) { return _mm512_load_ps(col); }
inline __m512 loadColumn(const uint16_t* col) {
    return _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(col)));
}

// y[t * ldy + 16 p + lane] for the lanes of masks[p], p < MP, t < NT. P: the first of MP
// consecutive panels of k columns each, F32 or F16 (T).
template <int MP, int NT, class T>
void panelTile(const T* P, int64_t k, const float* x, int64_t ldx, float* y, int64_t ldy,
               const __mmask16* masks) {
    static_assert(MP * NT + MP + 1 <= 32, "the tile must fit the 32 ZMM registers");
    __m512 acc[MP][NT];
    zeroTile(acc);
    for (int64_t c = 0; c < k; ++c) {
        __m512 w[MP];
#pragma GCC unroll 8
        for (int p = 0; p < MP; ++p) {
            const T* col = P + (p * k + c) * kPanelRows;
            w[p] = loadColumn(col);
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
    storeTile<MP, NT>(acc, y, ldy, masks);
}

constexpr int kMaxMP = 8;
constexpr int kMaxNT = 8;
// Panels per tile for NT tokens (index NT - 1): at least 8 accumulators (the FMA latency
// times its two pipes) and at most what fits the registers.
constexpr int kPanelsFor[kMaxNT] = {8, 4, 3, 3, 3, 3, 3, 3};
// One token over a row range whose weights come from memory rather than the caches (more than
// kStreamedBytes): 4 panels per tile, 4 streams, where 8 streams read slower. On the Emerald
// Rapids VM of 2026-12-05 (`matmul_bench 1 1 3 llama-3.2-1b f32,f16`, 128256 x 2048): F32
// 15.9 GB/s against 13.6-13.7 with 8 panels, F16 14.7-15.5 against 13.9; the probe reads 15-16
// GB/s with one core. Compute is not the limit there (4 accumulators suffice at memory speed).
constexpr int kPanelsForStreamed[kMaxNT] = {4, 4, 3, 3, 3, 3, 3, 3};
constexpr int64_t kStreamedBytes = 4 << 20;

template <class T>
using TileFn = void (*)(const T*, int64_t, const float*, int64_t, float*, int64_t, const __mmask16*);

template <class T> struct PanelTileOf {
    template <int MP, int NT> struct Tile {
        static void run(const T* P, int64_t k, const float* x, int64_t ldx, float* y, int64_t ldy,
                        const __mmask16* masks) {
            // Tiles the driver never picks (more panels than kPanelsFor[NT - 1]) would not fit.
            if constexpr (MP <= kPanelsFor[NT - 1])
                panelTile<MP, NT>(P, k, x, ldx, y, ldy, masks);
            else
                __builtin_trap();
        }
    };
};
// The driver picks the panels per tile from a block's first (widest) tile of tokens and uses
// it for the block's last, narrower one too: that needs kPanelsFor never to grow with NT.
constexpr bool nonIncreasing(const int (&panelsFor)[kMaxNT]) {
    for (int i = 1; i < kMaxNT; ++i)
        if (panelsFor[i] > panelsFor[i - 1]) return false;
    return true;
}
static_assert(nonIncreasing(kPanelsFor) && nonIncreasing(kPanelsForStreamed),
              "kPanelsFor must not grow with the tokens per tile");
constexpr auto kTiles =
    tileGrid<PanelTileOf<float>::Tile, TileFn<float>, kMaxMP>(std::make_index_sequence<kMaxNT>());
constexpr auto kTilesF16 =
    tileGrid<PanelTileOf<uint16_t>::Tile, TileFn<uint16_t>, kMaxMP>(std::make_index_sequence<kMaxNT>());

// Q8_0 panels (panels.h): a tile of MP panels by NT tokens keeps, per output vector, an exact
// int32 sum for the current block (vpdpbusd: 4 unsigned weight bytes times 4 signed
// activation bytes per lane, the activation's 4 bytes broadcast) and an F32 sum over blocks.
// Per block and group of 4 elements: MP panel loads, NT broadcasts, MP * NT vpdpbusd; per
// block: MP * NT conversions and FMAs with the scales. The weights' +128 bias is taken out
// by starting each block's int32 sum at -128 * sum(x) of that block. Each output's F32 sum
// is acc = fma(float(sum_b), dw_b * dx_b, acc) over the blocks in order, from acc = 0.
constexpr int64_t kQ8Ahead = 4; // blocks fetched ahead (2 KiB per panel) for decode's stream

template <int MP, int NT>
void panelTileQ8(const uint8_t* P, int64_t nb, const BlockQ8_0* x, int64_t ldx,
                 const int32_t* xbias, const float* xd, float* y, int64_t ldy,
                 const __mmask16* masks) {
    static_assert(2 * MP * NT + MP + 1 <= 32, "the tile must fit the 32 ZMM registers");
    const int64_t panelBytes = q8PanelStride(nb), quantBytes = nb * kQ8PanelQuantBytes;
    __m512 acc[MP][NT];
    zeroTile(acc);
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* block = P + b * kQ8PanelQuantBytes;
        __m512i sum[MP][NT];
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) {
            const __m512i start = _mm512_set1_epi32(xbias[t * nb + b]);
#pragma GCC unroll 8
            for (int p = 0; p < MP; ++p) sum[p][t] = start;
        }
#pragma GCC unroll 8
        for (int g = 0; g < 8; ++g) {
            __m512i w[MP];
#pragma GCC unroll 8
            for (int p = 0; p < MP; ++p) {
                const uint8_t* q = block + p * panelBytes + g * 64;
                w[p] = _mm512_load_si512(q);
                // An address only (it may lie past the panels' end; a prefetch never faults).
                const uintptr_t ahead = reinterpret_cast<uintptr_t>(q) + kQ8Ahead * kQ8PanelQuantBytes;
                _mm_prefetch(reinterpret_cast<const char*>(ahead), _MM_HINT_T0);
            }
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t) {
                int32_t four;
                std::memcpy(&four, x[t * ldx + b].qs + 4 * g, sizeof four);
                const __m512i xb = _mm512_set1_epi32(four);
#pragma GCC unroll 8
                for (int p = 0; p < MP; ++p) sum[p][t] = _mm512_dpbusd_epi32(sum[p][t], w[p], xb);
            }
        }
#pragma GCC unroll 8
        for (int p = 0; p < MP; ++p) {
            const uint8_t* scales = P + p * panelBytes + quantBytes + b * 32;
            const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales)));
            _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(scales) + 2 * 64), _MM_HINT_T0);
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t)
                acc[p][t] =
                    _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[p][t]),
                                    _mm512_mul_ps(dw, _mm512_set1_ps(xd[t * nb + b])), acc[p][t]);
        }
    }
    storeTile<MP, NT>(acc, y, ldy, masks);
}

constexpr int kMaxMPQ8 = 8;
constexpr int kMaxNTQ8 = 6;
// Panels per tile for NT tokens: two vectors per output (int32 and F32 sums) fit fewer.
constexpr int kPanelsForQ8[kMaxNTQ8] = {8, 4, 3, 3, 2, 2};

using TileFnQ8 = void (*)(const uint8_t*, int64_t, const BlockQ8_0*, int64_t, const int32_t*,
                          const float*, float*, int64_t, const __mmask16*);
template <int MP, int NT> struct PanelTileQ8 {
    static void run(const uint8_t* P, int64_t nb, const BlockQ8_0* x, int64_t ldx,
                    const int32_t* xbias, const float* xd, float* y, int64_t ldy,
                    const __mmask16* masks) {
        if constexpr (MP <= kPanelsForQ8[NT - 1])
            panelTileQ8<MP, NT>(P, nb, x, ldx, xbias, xd, y, ldy, masks);
        else
            __builtin_trap();
    }
};
constexpr auto kTilesQ8 = tileGrid<PanelTileQ8, TileFnQ8, kMaxMPQ8>(std::make_index_sequence<kMaxNTQ8>());

// Q4_0 panels (panels.h): as the Q8_0 tile, with each 64-byte group of stored bytes giving two
// groups of 4 elements per row (low nibbles: elements 4g.., high: 16 + 4g..), both multiplied
// by vpdpbusd with the activation bytes they pair with. The nibbles are q, not q - 8: each
// block's int32 sum starts at -8 * sum(x) (the Q8_0 bias, -128 * sum(x), over 16). Same bits
// contract: acc = fma(float(sum_b), dw_b * dx_b, acc) over the blocks in order, from acc = 0.
template <int MP, int NT>
void panelTileQ4(const uint8_t* P, int64_t nb, const BlockQ8_0* x, int64_t ldx, const int32_t* xbias, const float* xd,
                 float* y, int64_t ldy, const __mmask16* masks) {
    static_assert(2 * MP * NT + 4 <= 32, "the tile must fit the 32 ZMM registers");
    const int64_t panelBytes = q4PanelStride(nb), quantBytes = nb * kQ4PanelQuantBytes;
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    __m512 acc[MP][NT];
    zeroTile(acc);
    for (int64_t b = 0; b < nb; ++b) {
        __m512i sum[MP][NT];
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) {
            const __m512i start = _mm512_set1_epi32(xbias[t * nb + b] / 16);
#pragma GCC unroll 8
            for (int p = 0; p < MP; ++p) sum[p][t] = start;
        }
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
#pragma GCC unroll 8
            for (int p = 0; p < MP; ++p) {
                const uint8_t* q = P + p * panelBytes + b * kQ4PanelQuantBytes + g * 64;
                const __m512i w = _mm512_load_si512(q);
                _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(q) + kQ8Ahead * kQ4PanelQuantBytes),
                             _MM_HINT_T0);
                const __m512i lo = _mm512_and_si512(w, nibble);
                const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(w, 4), nibble);
#pragma GCC unroll 8
                for (int t = 0; t < NT; ++t) {
                    int32_t four[2];
                    std::memcpy(&four[0], x[t * ldx + b].qs + 4 * g, sizeof(int32_t));
                    std::memcpy(&four[1], x[t * ldx + b].qs + 16 + 4 * g, sizeof(int32_t));
                    sum[p][t] = _mm512_dpbusd_epi32(sum[p][t], lo, _mm512_set1_epi32(four[0]));
                    sum[p][t] = _mm512_dpbusd_epi32(sum[p][t], hi, _mm512_set1_epi32(four[1]));
                }
            }
        }
#pragma GCC unroll 8
        for (int p = 0; p < MP; ++p) {
            const uint8_t* scales = P + p * panelBytes + quantBytes + b * 32;
            const __m512 dw = _mm512_cvtph_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(scales)));
            _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(scales) + 2 * 64), _MM_HINT_T0);
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t)
                acc[p][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sum[p][t]), _mm512_mul_ps(dw, _mm512_set1_ps(xd[t * nb + b])),
                                            acc[p][t]);
        }
    }
    storeTile<MP, NT>(acc, y, ldy, masks);
}

constexpr int kMaxMPQ4 = 7;
constexpr int kMaxNTQ4 = 6;
constexpr int kPanelsForQ4[kMaxNTQ4] = {7, 4, 3, 3, 2, 2};
template <int MP, int NT> struct PanelTileQ4 {
    static void run(const uint8_t* P, int64_t nb, const BlockQ8_0* x, int64_t ldx, const int32_t* xbias,
                    const float* xd, float* y, int64_t ldy, const __mmask16* masks) {
        if constexpr (MP <= kPanelsForQ4[NT - 1])
            panelTileQ4<MP, NT>(P, nb, x, ldx, xbias, xd, y, ldy, masks);
        else
            __builtin_trap();
    }
};
constexpr auto kTilesQ4 = tileGrid<PanelTileQ4, TileFnQ8, kMaxMPQ4>(std::make_index_sequence<kMaxNTQ4>());


} // namespace

namespace {
template <class T, class Grid>
void floatPanels(const Grid& tiles, const T* panels, int64_t k, int64_t r0, int64_t r1, const float* x, int64_t ldx,
                 int64_t tokens, float* y, int64_t ldy) {
    if (r0 >= r1 || tokens <= 0 || k <= 0) return;
    const bool streamed = (r1 - r0) * k * static_cast<int64_t>(sizeof(T)) > kStreamedBytes;
    drivePanels<kMaxNT, kMaxMP>(
        streamed ? kPanelsForStreamed : kPanelsFor, r0, r1, tokens, k * static_cast<int64_t>(sizeof(float)),
        [&](int64_t nt, int64_t np, int64_t g, int64_t t0, const __mmask16* masks) {
            tiles[static_cast<size_t>(nt - 1)][static_cast<size_t>(np - 1)](
                panels + g * kPanelRows * k, k, x + t0 * ldx, ldx, y + t0 * ldy + g * kPanelRows,
                ldy, masks);
        });
}
} // namespace

void gemmPanelsF32(const float* panels, int64_t k, int64_t r0, int64_t r1, const float* x,
                   int64_t ldx, int64_t tokens, float* y, int64_t ldy) {
    floatPanels(kTiles, panels, k, r0, r1, x, ldx, tokens, y, ldy);
}

void gemmPanelsF16(const uint16_t* panels, int64_t k, int64_t r0, int64_t r1, const float* x,
                   int64_t ldx, int64_t tokens, float* y, int64_t ldy) {
    floatPanels(kTilesF16, panels, k, r0, r1, x, ldx, tokens, y, ldy);
}

void gemmPanelsQ8_0(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_0* x,
                    int64_t ldx, const int32_t* xbias, const float* xscale, int64_t tokens,
                    float* y, int64_t ldy) {
    if (r0 >= r1 || tokens <= 0 || nb <= 0) return;
    drivePanels<kMaxNTQ8, kMaxMPQ8>(
        kPanelsForQ8, r0, r1, tokens, nb * static_cast<int64_t>(sizeof(BlockQ8_0)),
        [&](int64_t nt, int64_t np, int64_t g, int64_t t0, const __mmask16* masks) {
            kTilesQ8[static_cast<size_t>(nt - 1)][static_cast<size_t>(np - 1)](
                panels + g * q8PanelStride(nb), nb, x + t0 * ldx, ldx, xbias + t0 * nb,
                xscale + t0 * nb, y + t0 * ldy + g * kPanelRows, ldy, masks);
        });
}

void gemmPanelsQ4_0(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_0* x,
                    int64_t ldx, const int32_t* xbias, const float* xscale, int64_t tokens,
                    float* y, int64_t ldy) {
    if (r0 >= r1 || tokens <= 0 || nb <= 0) return;
    drivePanels<kMaxNTQ4, kMaxMPQ4>(
        kPanelsForQ4, r0, r1, tokens, nb * static_cast<int64_t>(sizeof(BlockQ8_0)),
        [&](int64_t nt, int64_t np, int64_t g, int64_t t0, const __mmask16* masks) {
            kTilesQ4[static_cast<size_t>(nt - 1)][static_cast<size_t>(np - 1)](
                panels + g * q4PanelStride(nb), nb, x + t0 * ldx, ldx, xbias + t0 * nb,
                xscale + t0 * nb, y + t0 * ldy + g * kPanelRows, ldy, masks);
        });
}

} // namespace mb::kernels::avx512

#endif
