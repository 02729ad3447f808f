// AVX-512 (+VNNI) outer-product products of Q4_K and Q6_K panels (kernels/cpu/panels_k.h) with
// Q8_K activations: vpdpbusd over 16 rows' 4 weights each against one token's 4 activation bytes.
//
// A tile is MP panels (16 * MP rows) by NT tokens. Per sub-block (Q4_K: 32 elements, Q6_K: 16)
// each output's exact int32 sum of q * x runs in its lane (8 or 4 vpdpbusd per token), is
// multiplied by the rows' sub-block scales (vpmulld, one vector per panel) and added to the
// super-block's exact int32 sum; per super-block that sum is converted and chained in F32:
//   Q4_K: acc = fma(float(S), d * xd, acc), then acc = fma(-float(M), dmin * xd, acc), where
//         S = sum_j scale_j * sum(q * x over sub-block j) and M = sum_j min_j * (x's sum over j);
//   Q6_K: acc = fma(float(S), d * xd, acc), S = sum_j scale_j * sum((q - 32) * x over j), the
//         - 32 coming in as each sub-block sum's start, -32 * bsums[j];
// over the super-blocks in order from acc = 0 (d * xd an F32 product), in every tile, so the
// results depend on neither the row range nor the token grouping. The dots' AVX-512 unpacking
// takes 6 instructions per 64 weights and token; here a 64-byte group of stored bytes is
// unpacked once for NT tokens, and one vpdpbusd does 64 multiply-adds.
#include "kernels/cpu/gemm_avx512.h"
#include "kernels/cpu/panels_k.h"

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__) &&             \
    defined(__F16C__)
#include "kernels/cpu/panel_tiles_avx512.h"
#include "kernels/cpu/simd_common.h"

#include <immintrin.h>

#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 intrinsics start from an undefined vector and warn wherever they are inlined
// (GCC bug 105593); that value is never read.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <cstdint>
#include <utility>

namespace mb::kernels::avx512 {

namespace {

// Bytes fetched ahead in each panel's stream (decode reads the weights from memory once).
constexpr int64_t kKAhead = 1024;

inline __m512i broadcast4(const int8_t* q) { return _mm512_set1_epi32(load32(q)); }

// Q4_K: the int32 sums of sub-block j (low nibbles of chunk j / 2 for even j, high for odd)
// for MP panels and NT tokens, scaled and added to tot.
template <int MP, int NT, bool kHigh>
__attribute__((always_inline)) inline void subBlockQ4K(const uint8_t* B, int64_t stride, int j, const BlockQ8_K* x,
                                                       int64_t ldx, __m512i (&tot)[MP][NT]) {
    const __m512i nibble = _mm512_set1_epi8(0x0F);
    __m512i s[MP][NT];
#pragma GCC unroll 8
    for (int p = 0; p < MP; ++p)
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) s[p][t] = _mm512_setzero_si512();
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
#pragma GCC unroll 8
        for (int p = 0; p < MP; ++p) {
            const uint8_t* q = B + p * stride + (8 * (j / 2) + g) * 64;
            const __m512i w = _mm512_load_si512(q);
            if constexpr (!kHigh)
                _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(q) + kKAhead), _MM_HINT_T0);
            const __m512i v = kHigh ? _mm512_and_si512(_mm512_srli_epi16(w, 4), nibble) : _mm512_and_si512(w, nibble);
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t) s[p][t] = _mm512_dpbusd_epi32(s[p][t], v, broadcast4(x[t * ldx].qs + 32 * j + 4 * g));
        }
    }
#pragma GCC unroll 8
    for (int p = 0; p < MP; ++p) {
        const __m512i sc = _mm512_cvtepu8_epi32(load128(B + p * stride + kQ4KPanelScales + 16 * j));
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) tot[p][t] = _mm512_add_epi32(tot[p][t], _mm512_mullo_epi32(s[p][t], sc));
    }
}

// Token t's sums over Q4_K's sub-blocks 2i and 2i + 1 (each from two of Q8_K's 16-element
// bsums) as the int16 pair of word i, for vpdpwssd against the rows' min pairs.
inline void minPairs(const BlockQ8_K& x, int32_t (&pairs)[4]) {
    for (int i = 0; i < 4; ++i) {
        const auto lo = static_cast<uint16_t>(x.bsums[4 * i] + x.bsums[4 * i + 1]);
        const auto hi = static_cast<uint16_t>(x.bsums[4 * i + 2] + x.bsums[4 * i + 3]);
        pairs[i] = static_cast<int32_t>(static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16));
    }
}

// Q4_K's super-block: its 8 sub-blocks into tot, then the F32 chain with the mins' sums.
struct Q4K {
    static constexpr int64_t kBlockBytes = kQ4KPanelBlockBytes;
    static constexpr int64_t stride(int64_t nb) { return q4kPanelStride(nb); }
    template <int MP, int NT>
    __attribute__((always_inline)) static void sums(const uint8_t* B, int64_t stride, const BlockQ8_K* x, int64_t ldx,
                                                    __m512i (&tot)[MP][NT]) {
        for (int c = 0; c < 4; ++c) {
            subBlockQ4K<MP, NT, false>(B, stride, 2 * c, x, ldx, tot);
            subBlockQ4K<MP, NT, true>(B, stride, 2 * c + 1, x, ldx, tot);
        }
    }
    template <int MP, int NT>
    __attribute__((always_inline)) static void chain(const uint8_t* B, int64_t stride, const BlockQ8_K* x, int64_t ldx,
                                                     const __m512i (&tot)[MP][NT], __m512 (&acc)[MP][NT]) {
        int32_t pairs[NT][4];
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) minPairs(x[t * ldx], pairs[t]);
#pragma GCC unroll 8
        for (int p = 0; p < MP; ++p) {
            const uint8_t* meta = B + p * stride;
            const __m512 d = _mm512_cvtph_ps(load256(meta + kQ4KPanelD));
            const __m512 dmin = _mm512_cvtph_ps(load256(meta + kQ4KPanelDmin));
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t) {
                __m512i m = _mm512_setzero_si512();
#pragma GCC unroll 4
                for (int i = 0; i < 4; ++i)
                    m = _mm512_dpwssd_epi32(m, _mm512_cvtepu8_epi16(load256(meta + kQ4KPanelMins + 32 * i)),
                                            _mm512_set1_epi32(pairs[t][i]));
                const __m512 xd = _mm512_set1_ps(x[t * ldx].d);
                acc[p][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(tot[p][t]), _mm512_mul_ps(d, xd), acc[p][t]);
                acc[p][t] = _mm512_fnmadd_ps(_mm512_cvtepi32_ps(m), _mm512_mul_ps(dmin, xd), acc[p][t]);
            }
        }
    }
};

// Q6_K: sub-block j's 16 values per row from 4 low-nibble groups (half j % 2 of groups
// 4 (j / 2) + g) and the bit pairs g of high group j; sums started at -32 * bsums[j].
template <int MP, int NT, bool kHigh>
__attribute__((always_inline)) inline void subBlockQ6K(const uint8_t* B, int64_t stride, int j, const BlockQ8_K* x,
                                                       int64_t ldx, __m512i (&tot)[MP][NT]) {
    const __m512i nibble = _mm512_set1_epi8(0x0F), top = _mm512_set1_epi8(0x30);
    __m512i s[MP][NT];
#pragma GCC unroll 8
    for (int t = 0; t < NT; ++t) {
        const __m512i start = _mm512_set1_epi32(-32 * x[t * ldx].bsums[j]);
#pragma GCC unroll 8
        for (int p = 0; p < MP; ++p) s[p][t] = start;
    }
#pragma GCC unroll 8
    for (int p = 0; p < MP; ++p) {
        const uint8_t* panel = B + p * stride;
        const __m512i qh = _mm512_load_si512(panel + kQ6KPanelHigh + 64 * j);
        if constexpr (!kHigh)
            _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(panel + kQ6KPanelHigh + 64 * j) +
                                                       kKAhead),
                         _MM_HINT_T0);
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {
            const uint8_t* q = panel + (4 * (j / 2) + g) * 64;
            const __m512i l = _mm512_load_si512(q);
            if constexpr (!kHigh)
                _mm_prefetch(reinterpret_cast<const char*>(reinterpret_cast<uintptr_t>(q) + kKAhead), _MM_HINT_T0);
            const __m512i low = kHigh ? _mm512_and_si512(_mm512_srli_epi16(l, 4), nibble) : _mm512_and_si512(l, nibble);
            // Bit pair g to bits 4-5 (16-bit shifts: what crosses a byte is masked off below).
            const __m512i up = g == 0 ? _mm512_slli_epi16(qh, 4)
                               : g == 1 ? _mm512_slli_epi16(qh, 2)
                               : g == 2 ? qh
                                        : _mm512_srli_epi16(qh, 2);
            const __m512i v = _mm512_ternarylogic_epi32(low, up, top, 0xF8); // low | (up & 0x30)
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t) s[p][t] = _mm512_dpbusd_epi32(s[p][t], v, broadcast4(x[t * ldx].qs + 16 * j + 4 * g));
        }
    }
#pragma GCC unroll 8
    for (int p = 0; p < MP; ++p) {
        const __m512i sc = _mm512_cvtepi8_epi32(load128(B + p * stride + kQ6KPanelScales + 16 * j));
#pragma GCC unroll 8
        for (int t = 0; t < NT; ++t) tot[p][t] = _mm512_add_epi32(tot[p][t], _mm512_mullo_epi32(s[p][t], sc));
    }
}

// Q6_K's super-block: its 16 sub-blocks into tot, then the F32 chain.
struct Q6K {
    static constexpr int64_t kBlockBytes = kQ6KPanelBlockBytes;
    static constexpr int64_t stride(int64_t nb) { return q6kPanelStride(nb); }
    template <int MP, int NT>
    __attribute__((always_inline)) static void sums(const uint8_t* B, int64_t stride, const BlockQ8_K* x, int64_t ldx,
                                                    __m512i (&tot)[MP][NT]) {
        for (int i = 0; i < 8; ++i) {
            subBlockQ6K<MP, NT, false>(B, stride, 2 * i, x, ldx, tot);
            subBlockQ6K<MP, NT, true>(B, stride, 2 * i + 1, x, ldx, tot);
        }
    }
    template <int MP, int NT>
    __attribute__((always_inline)) static void chain(const uint8_t* B, int64_t stride, const BlockQ8_K* x, int64_t ldx,
                                                     const __m512i (&tot)[MP][NT], __m512 (&acc)[MP][NT]) {
#pragma GCC unroll 8
        for (int p = 0; p < MP; ++p) {
            const __m512 d = _mm512_cvtph_ps(load256(B + p * stride + kQ6KPanelD));
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t)
                acc[p][t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(tot[p][t]), _mm512_mul_ps(d, _mm512_set1_ps(x[t * ldx].d)),
                                            acc[p][t]);
        }
    }
};

// MP panels by NT tokens of type K (Q4K or Q6K): per super-block the exact sums, then the chain.
template <class K, int MP, int NT>
void panelTileK(const uint8_t* P, int64_t nb, const BlockQ8_K* x, int64_t ldx, float* y, int64_t ldy,
                const __mmask16* masks) {
    static_assert(3 * MP * NT + 6 <= 32, "the tile must fit the 32 ZMM registers");
    const int64_t stride = K::stride(nb);
    __m512 acc[MP][NT];
    zeroTile(acc);
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* B = P + b * K::kBlockBytes;
        __m512i tot[MP][NT];
#pragma GCC unroll 8
        for (int p = 0; p < MP; ++p)
#pragma GCC unroll 8
            for (int t = 0; t < NT; ++t) tot[p][t] = _mm512_setzero_si512();
        K::template sums<MP, NT>(B, stride, x + b, ldx, tot);
        K::template chain<MP, NT>(B, stride, x + b, ldx, tot, acc);
    }
    storeTile<MP, NT>(acc, y, ldy, masks);
}

constexpr int kMaxMPK = 8;
constexpr int kMaxNTK = 4;
// Panels per tile for NT tokens: three vectors per output (sub-block sum, super-block sum, F32
// chain).
constexpr int kPanelsForK[kMaxNTK] = {8, 4, 2, 2};
using TileFnK = void (*)(const uint8_t*, int64_t, const BlockQ8_K*, int64_t, float*, int64_t, const __mmask16*);
template <class K> struct PanelTileK {
    template <int MP, int NT> struct Tile {
        static void run(const uint8_t* P, int64_t nb, const BlockQ8_K* x, int64_t ldx, float* y, int64_t ldy,
                        const __mmask16* masks) {
            if constexpr (MP <= kPanelsForK[NT - 1])
                panelTileK<K, MP, NT>(P, nb, x, ldx, y, ldy, masks);
            else
                __builtin_trap();
        }
    };
};

template <class K>
void kPanels(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_K* x, int64_t ldx,
             int64_t tokens, float* y, int64_t ldy) {
    if (r0 >= r1 || tokens <= 0 || nb <= 0) return;
    constexpr auto tiles = tileGrid<PanelTileK<K>::template Tile, TileFnK, kMaxMPK>(std::make_index_sequence<kMaxNTK>());
    drivePanels<kMaxNTK, kMaxMPK>(
        kPanelsForK, r0, r1, tokens, nb * static_cast<int64_t>(sizeof(BlockQ8_K)),
        [&](int64_t nt, int64_t np, int64_t g, int64_t t0, const __mmask16* masks) {
            tiles[static_cast<size_t>(nt - 1)][static_cast<size_t>(np - 1)](
                panels + g * K::stride(nb), nb, x + t0 * ldx, ldx, y + t0 * ldy + g * kPanelRows, ldy, masks);
        });
}

} // namespace

void gemmPanelsQ4_K(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_K* x, int64_t ldx,
                    int64_t tokens, float* y, int64_t ldy) {
    kPanels<Q4K>(panels, nb, r0, r1, x, ldx, tokens, y, ldy);
}

void gemmPanelsQ6_K(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_K* x, int64_t ldx,
                    int64_t tokens, float* y, int64_t ldy) {
    kPanels<Q6K>(panels, nb, r0, r1, x, ldx, tokens, y, ldy);
}

} // namespace mb::kernels::avx512

#else // compiler without the flags: the AVX-512 table does not exist, nothing calls these

namespace mb::kernels::avx512 {
void gemmPanelsQ4_K(const uint8_t*, int64_t, int64_t, int64_t, const BlockQ8_K*, int64_t, int64_t, float*, int64_t) {}
void gemmPanelsQ6_K(const uint8_t*, int64_t, int64_t, int64_t, const BlockQ8_K*, int64_t, int64_t, float*, int64_t) {}
} // namespace mb::kernels::avx512

#endif
