// Unpacking of Q3_K's and IQ4_XS's packed 6-bit sub-block scales into int16 lanes, shared by the
// AVX2 and AVX-512 tiles of those types (kquant_tiles_avx2.cpp, kquant_tiles_avx512.cpp).
// Internal linkage, as gemm_panel.h: include only from a file compiled for one instruction set
// (AVX2 at least).
#pragma once

#include "kernels/quant_blocks.h"

#include <immintrin.h>

#include <cstring>

namespace mb::kernels {
namespace { // NOLINT(google-build-namespaces, cert-dcl59-cpp): see gemm_panel.h

// Q3_K's 16 6-bit scales minus 32 as int16 lanes: low 4 bits from the nibbles of bytes 0-7 (low
// nibbles for scales 0-7, high for 8-15), high 2 bits of scale 4g + i from byte 8 + i at bit 2g.
inline __m256i scalesQ3_K(const uint8_t* q) {
    const __m128i lo8 = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(q));
    const __m128i nibble = _mm_set1_epi8(0x0F);
    const __m128i low = _mm_unpacklo_epi64(_mm_and_si128(lo8, nibble), _mm_and_si128(_mm_srli_epi16(lo8, 4), nibble));
    int32_t c = 0;
    std::memcpy(&c, q + 8, 4);
    // Dword g: c >> 2g, so its byte i holds scale 4g + i's high bits at bits 0-1.
    const __m128i high = _mm_and_si128(_mm_srlv_epi32(_mm_set1_epi32(c), _mm_setr_epi32(0, 2, 4, 6)),
                                       _mm_set1_epi8(3));
    const __m128i sc = _mm_or_si128(low, _mm_slli_epi16(high, 4)); // bytes <= 63: the shift stays in its byte
    return _mm256_sub_epi16(_mm256_cvtepu8_epi16(sc), _mm256_set1_epi16(32));
}

// IQ4_XS's 8 6-bit scales minus 32 as int16 lanes 0-7: low 4 bits from scalesL's nibbles (low
// first), high 2 bits of scale s from scalesH at bit 2s.
inline __m128i scalesIq4Xs(const BlockIq4Xs& b) {
    uint32_t l = 0;
    std::memcpy(&l, b.scalesL, 4);
    const __m128i lo = _mm_cvtsi32_si128(static_cast<int>(l)), nibble = _mm_set1_epi8(0x0F);
    const __m128i low = _mm_unpacklo_epi8(_mm_and_si128(lo, nibble), _mm_and_si128(_mm_srli_epi16(lo, 4), nibble));
    // scalesH's 2-bit fields spread to one per byte (fields 0-3 and 4-7 to 32-bit halves, pairs
    // to 16-bit lanes, singles to bytes), then to bits 4-5.
    uint64_t high = b.scalesH;
    high = (high | (high << 24)) & 0x000000FF000000FFull;
    high = (high | (high << 12)) & 0x000F000F000F000Full;
    high = (high | (high << 6)) & 0x0303030303030303ull;
    const __m128i sc = _mm_or_si128(low, _mm_cvtsi64_si128(static_cast<long long>(high << 4)));
    return _mm_sub_epi16(_mm_cvtepu8_epi16(sc), _mm_set1_epi16(32));
}

} // namespace
} // namespace mb::kernels
