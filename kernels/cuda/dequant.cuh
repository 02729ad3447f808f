// Device helpers shared by the .cu files: warp reductions and grid sizes (block decoders: block_decode.h).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace mb::kernels::cuda::detail {

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
