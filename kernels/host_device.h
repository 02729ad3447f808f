// Qualifiers for functions compiled for the host and, under nvcc, the device too; and a product no compiler may fuse.
//
// Plain C++ (no CUDA header without nvcc): the CPU code and its tests include the very functions
// the CUDA kernels run, so those can be tested on a machine without a GPU.
#pragma once

#if defined(__CUDACC__)
#define MB_HD __host__ __device__ __forceinline__
#define MB_UNROLL _Pragma("unroll")
#else
#define MB_HD inline
#define MB_UNROLL
#endif

namespace mb::kernels {

// a * b rounded once and never contracted with a following add into an FMA (the CPU's unfused
// F32 order; on the host the project builds without FMA contraction for the baseline target).
MB_HD float mulRn(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

} // namespace mb::kernels
