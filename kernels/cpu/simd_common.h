// Small SIMD helpers shared by the AVX2 and AVX-512 kernel files: F16 scalars, unaligned loads,
// fixed-order horizontal sums and the constant-lane structs the AVX-512 kernels read from memory.
//
// Include only from a file compiled for one instruction set (AVX2 at least). Internal linkage on
// purpose, as gemm_panel.h: each including file gets its own copy built with its own -m flags.
#pragma once

#include "kernels/cpu/gemm_panel.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace mb::kernels {
namespace { // NOLINT(google-build-namespaces, cert-dcl59-cpp): see the file comment

// F16 bits to float with F16C (exact, as fp16ToFloat).
inline float half(uint16_t h) { return _cvtsh_ss(h); }

inline __m128i load128(const void* p) { return _mm_loadu_si128(static_cast<const __m128i*>(p)); }
inline __m256i load256(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline int32_t load32(const void* p) {
    int32_t v = 0;
    std::memcpy(&v, p, 4);
    return v;
}

#if defined(__AVX512F__)
inline __m512i load512(const void* p) { return _mm512_loadu_si512(p); }

// The sum of 16 floats in a fixed order: the two 256-bit halves added, then hsum's order.
inline float hsum512(__m512 v) {
    const __m256 high = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
    return hsum(_mm256_add_ps(_mm512_castps512_ps256(v), high));
}

// Constant vectors read from memory (no set-up instructions per row, no static guard): vpermw
// indices and shift counts as int16 lanes, bit masks as bytes.
struct alignas(64) Lanes16 {
    int16_t v[32];
};
struct alignas(64) Lanes8 {
    uint8_t v[64];
};
#endif

} // namespace
} // namespace mb::kernels
