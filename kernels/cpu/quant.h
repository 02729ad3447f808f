// Quantising and dequantising rows of Q8_0 and Q4_0 blocks, and converting any row to F32.
#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>

namespace mb::kernels {

// x: n floats, n % 32 == 0 -> y: n/32 blocks. Scale d = max|x| / 127, q = round(x / d).
// Error bound per element: |x - d*q| <= d/2 (plus the F16 rounding of d).
void quantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n);

// x: n floats, n % 32 == 0 -> y: n/32 blocks. The value of largest magnitude m maps to
// -8, so d = m / -8 and q = clamp(round(x / d) + 8, 0, 15); error per element <= |d|/2
// for values inside [-8|d|, 7|d|]; the one value at +7.5|d|..8|d| clips by up to |d|.
void quantizeRowQ4_0(const float* x, BlockQ4_0* y, int64_t n);

void dequantizeRowQ8_0(const BlockQ8_0* x, float* y, int64_t n);
void dequantizeRowQ4_0(const BlockQ4_0* x, float* y, int64_t n);

// Any supported type -> F32: `src` holds one row of `n` elements of `type`.
void dequantizeRow(TensorType type, const void* src, float* dst, int64_t n);

// F32 -> any supported type (one row; n a multiple of the block size).
void quantizeRow(TensorType type, const float* src, void* dst, int64_t n);

} // namespace mb::kernels
