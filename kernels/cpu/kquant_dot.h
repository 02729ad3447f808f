// Dot products of k-quant (and IQ4_XS) weight rows with Q8_K activation rows: the portable
// reference (kquant_portable.cpp), the AVX2 versions (kquant_avx2.cpp: Q4_K, Q5_K, Q6_K;
// kquant_tiles_avx2.cpp: Q2_K, Q3_K, IQ4_XS) and AVX-512's (kquant_avx512.cpp).
#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>

// w: nb weight blocks of one row; x: nb Q8_K blocks of one token (the same 256 columns each).
// Per block the products of each sub-block are summed exactly in int32 and scaled by its
// integer scale (and min, through x's bsums), then the block's sum is scaled by the F32 product
// of the two block scales and added in block order; each table's result is the same bits for a
// given (row, token) whatever the caller's split, so products do not depend on threads or batches.
// Declarations only: no intrinsics here. Call avx2:: only when the CPU has AVX2+FMA.
namespace mb::kernels {

// Tokens per k-quant tile: a weight block is unpacked once for this many tokens (prefill).
constexpr int kKTileTokens = 4;

namespace portable {
float dotQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t nb);
float dotQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t nb);
float dotQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb);
float dotQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t nb);
float dotQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb);
float dotIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t nb);
} // namespace portable

namespace avx2 {
float dotQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t nb);
float dotQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t nb);
float dotQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb);
float dotQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t nb);
float dotQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb);
float dotIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t nb);
// kKTileTokens tokens at once: y[t * ldy] = dot(w, x + t * ldx, nb), each the bits of the dot
// above (the same operations per token, in the same order).
void tileQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
void tileQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
void tileQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
void tileQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
void tileQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
void tileIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
// quantizeRowQ8_K's blocks (the same bits), 8 lanes at a time.
void quantizeQ8_K(const float* x, BlockQ8_K* y, int64_t n);
} // namespace avx2

// The AVX-512 table's (kquant_avx512.cpp, vpdpwssd): the same contract, other bits than avx2's.
// Call only when cpuFeatures().hasAvx512Set().
namespace avx512 {
float dotQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb);
float dotQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t nb);
float dotQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb);
void tileQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
void tileQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
void tileQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
// kquant_tiles_avx512.cpp (vpdpwssd, as above).
float dotQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t nb);
float dotQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t nb);
float dotIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t nb);
void tileQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
void tileQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
void tileIq4Xs(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
} // namespace avx512

} // namespace mb::kernels
