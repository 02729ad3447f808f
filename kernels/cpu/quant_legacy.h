// Q4_1, Q5_0, Q5_1 and IQ4_NL weight rows times Q8_0 activation rows: the portable reference
// (quant_legacy_portable.cpp), the AVX2 tiles (quant_legacy_avx2.cpp) and the VNNI tiles
// (quant_legacy_avx512.cpp).
#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>

// Per (row, token) and 32-element block b the products' exact int32 sum s_b, then in block order
// acc += (dw_b * dx_b) * s_b (an F32 product of the two F16 scales), and for Q4_1 and Q5_1, whose
// values are q * dw + mw, also acc += mw_b * xs_b.s: xs (activationSums, one Q8Sums per
// activation block, ldx apart as the blocks) holds each activation block's scale as F32 and
// that scale times the sum of its values. Each table sums the parts in its own fixed order, the
// same for a row and token whatever tile computes them (VecKernels::gemmQ4_1 and friends), so
// results do not depend on threads or batches.
// Declarations only: no intrinsics here. Call avx2:: only when the CPU has AVX2+FMA+F16C, and
// avx512:: only with the AVX-512 set (cpuFeatures().hasAvx512Set()).
namespace mb::kernels {

// xs[b] = {fp16ToFloat(x[b].d), that times the sum of x[b].qs} for b < nb (kernels/quant_blocks.h).
void activationSums(const BlockQ8_0* x, int64_t nb, Q8Sums* xs);

namespace portable {
float dotQ4_1(const BlockQ4_1* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb);
float dotQ5_0(const BlockQ5_0* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb);
float dotQ5_1(const BlockQ5_1* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb);
float dotIq4Nl(const BlockIq4Nl* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb);
// y[t * ldy + r] = dot(w + r * ldw, x + t * ldx, xs + t * ldx) for r < rows, t < tokens.
void gemmQ4_1(const BlockQ4_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void gemmQ5_0(const BlockQ5_0* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void gemmQ5_1(const BlockQ5_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void gemmIq4Nl(const BlockIq4Nl* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
               int64_t rows, int64_t tokens, float* y, int64_t ldy);
} // namespace portable

// Register-tiled products (several rows times several tokens per tile, gemm_panel.h's shapes);
// every output the bits of the table's single dot, which is the 1 x 1 tile.
namespace avx2 {
void gemmQ4_1(const BlockQ4_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void gemmQ5_0(const BlockQ5_0* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void gemmQ5_1(const BlockQ5_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void gemmIq4Nl(const BlockIq4Nl* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
               int64_t rows, int64_t tokens, float* y, int64_t ldy);
} // namespace avx2
// The same with vpdpbusd (AVX-512 VL + VNNI on 256-bit vectors).
namespace avx512 {
void gemmQ4_1(const BlockQ4_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void gemmQ5_0(const BlockQ5_0* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void gemmQ5_1(const BlockQ5_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void gemmIq4Nl(const BlockIq4Nl* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
               int64_t rows, int64_t tokens, float* y, int64_t ldy);
} // namespace avx512

} // namespace mb::kernels
