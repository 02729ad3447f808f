// Quantising and dequantising rows of every tensor type, and converting any row to F32.
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

// The rows of tensorTypeTable(): src holds n elements (n a multiple of the block size) of the
// named type; dst n floats. Each dequantisation gives ggml's to_float bits (products and sums
// in ggml's order, F32, no fused multiply-add).
void dequantizeRowF32(const void* src, float* dst, int64_t n);
void dequantizeRowF16(const void* src, float* dst, int64_t n);
void dequantizeRowBF16(const void* src, float* dst, int64_t n);
void dequantizeRowQ4_1(const void* src, float* dst, int64_t n);
void dequantizeRowQ5_0(const void* src, float* dst, int64_t n);
void dequantizeRowQ5_1(const void* src, float* dst, int64_t n);
void dequantizeRowIq4Nl(const void* src, float* dst, int64_t n);
// kernels/cpu/quant_k.cpp: the 256-element super-block types.
void dequantizeRowQ2_K(const void* src, float* dst, int64_t n);
void dequantizeRowQ3_K(const void* src, float* dst, int64_t n);
void dequantizeRowQ4_K(const void* src, float* dst, int64_t n);
void dequantizeRowQ5_K(const void* src, float* dst, int64_t n);
void dequantizeRowQ6_K(const void* src, float* dst, int64_t n);
void dequantizeRowQ8_K(const void* src, float* dst, int64_t n);
void dequantizeRowIq4Xs(const void* src, float* dst, int64_t n);

void quantizeRowF32(const float* src, void* dst, int64_t n);
void quantizeRowF16(const float* src, void* dst, int64_t n);
void quantizeRowBF16(const float* src, void* dst, int64_t n);
// Activations for k-quant products: d = max|x| / 127, q = round(x / d), bsums the sums of 16.
void quantizeRowQ8_K(const float* src, void* dst, int64_t n);
// kernels/cpu/quantize_k.cpp: weights to the other block formats (per sub-block least-squares
// scales and mins, the super-block's scales quantised, values rounded against those). Not
// llama.cpp's search, and not bit-identical to its files; the error per type is tested.
void quantizeRowQ2_K(const float* src, void* dst, int64_t n);
void quantizeRowQ3_K(const float* src, void* dst, int64_t n);
void quantizeRowQ4_K(const float* src, void* dst, int64_t n);
void quantizeRowQ5_K(const float* src, void* dst, int64_t n);
void quantizeRowQ6_K(const float* src, void* dst, int64_t n);
void quantizeRowIq4Nl(const float* src, void* dst, int64_t n);
void quantizeRowIq4Xs(const float* src, void* dst, int64_t n);
void quantizeRowQ4_1(const float* src, void* dst, int64_t n);
void quantizeRowQ5_0(const float* src, void* dst, int64_t n);
void quantizeRowQ5_1(const float* src, void* dst, int64_t n);

// Q4_K and Q5_K's packed 6-bit scale and min of sub-block j (0..7) from the 12 bytes.
inline void scaleMinK4(int j, const uint8_t* q, uint8_t& scale, uint8_t& min) {
    if (j < 4) {
        scale = q[j] & 63;
        min = q[j + 4] & 63;
    } else {
        scale = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        min = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

// Q3_K's 6-bit scale of sub-block s (0..15), without the offset of 32.
inline int scaleQ3_K(const uint8_t* scales, int s) {
    const int low = s < 8 ? (scales[s] & 0xF) : (scales[s - 8] >> 4);
    const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
    return low | (high << 4);
}

// Any type -> F32 through the table: `src` holds one row of `n` elements of `type`.
void dequantizeRow(TensorType type, const void* src, float* dst, int64_t n);

// F32 -> `type` (one row; n a multiple of the block size). Throws std::invalid_argument for a
// type the engine cannot write (traits(type).fromFloat is nullptr).
void quantizeRow(TensorType type, const float* src, void* dst, int64_t n);

} // namespace mb::kernels
