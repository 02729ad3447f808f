// Device-side readers of GGUF weight blocks (F32, F16, Q8_0, Q4_0), shared by the .cu files.
#pragma once

#include "kernels/tensor_type.h"

#include <cuda_fp16.h>

#include <cstdint>

namespace mb::kernels::cuda::detail {

// The F16 scale of a block, stored as raw bits (possibly at an odd 2-byte offset, so read
// as an unsigned short and reinterpret).
__device__ __forceinline__ float halfBits(uint16_t bits) { return __half2float(__ushort_as_half(bits)); }

// Element i of a row of `type` starting at `row` (one element; for gathers and conversions).
__device__ __forceinline__ float loadElement(TensorType type, const uint8_t* row, int64_t i) {
    switch (type) {
    case TensorType::F32: return reinterpret_cast<const float*>(row)[i];
    case TensorType::F16: return __half2float(reinterpret_cast<const __half*>(row)[i]);
    case TensorType::Q8_0: {
        const auto* b = reinterpret_cast<const BlockQ8_0*>(row) + i / kQ8_0BlockSize;
        return halfBits(b->d) * static_cast<float>(b->qs[i % kQ8_0BlockSize]);
    }
    case TensorType::Q4_0: {
        const auto* b = reinterpret_cast<const BlockQ4_0*>(row) + i / kQ4_0BlockSize;
        const int64_t j = i % kQ4_0BlockSize;
        const int q = j < 16 ? (b->qs[j] & 0x0F) : (b->qs[j - 16] >> 4);
        return halfBits(b->d) * static_cast<float>(q - 8);
    }
    default: return 0.0f; // rejected on the host before any launch
    }
}

// Host-side row size, usable in device code too.
__host__ __device__ __forceinline__ int64_t deviceRowBytes(TensorType type, int64_t cols) {
    switch (type) {
    case TensorType::F32: return cols * 4;
    case TensorType::F16: return cols * 2;
    case TensorType::Q8_0: return cols / kQ8_0BlockSize * static_cast<int64_t>(sizeof(BlockQ8_0));
    case TensorType::Q4_0: return cols / kQ4_0BlockSize * static_cast<int64_t>(sizeof(BlockQ4_0));
    default: return 0;
    }
}

// Sum over a warp; every lane gets the total.
__device__ __forceinline__ float warpSum(float v) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float warpMax(float v) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Grid size for `count` items at `perBlock` items per block, as a launch dimension.
inline unsigned gridFor(int64_t count, int64_t perBlock) {
    return static_cast<unsigned>((count + perBlock - 1) / perBlock);
}

} // namespace mb::kernels::cuda::detail
