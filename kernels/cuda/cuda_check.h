// Checks every CUDA runtime and cuBLAS call: a failure throws CudaError naming the file and line.
// Include only from files compiled against the CUDA toolkit (.cu, and .cpp files in kernels/cuda).
#pragma once

#include "kernels/cuda/device_buffer.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

namespace mb::kernels::cuda::detail {

[[noreturn]] inline void throwCuda(cudaError_t err, const char* expr, const char* file, int line) {
    cudaGetLastError(); // clear a non-sticky error so the next call starts clean
    throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: " +
                    cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

[[noreturn]] inline void throwCublas(cublasStatus_t status, const char* expr, const char* file, int line) {
    throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + expr + " failed: cuBLAS status " +
                    std::to_string(static_cast<int>(status)));
}

} // namespace mb::kernels::cuda::detail

#define MB_CUDA_CHECK(expr)                                                                                    \
    do {                                                                                                       \
        const cudaError_t mbCudaErr_ = (expr);                                                                 \
        if (mbCudaErr_ != cudaSuccess) ::mb::kernels::cuda::detail::throwCuda(mbCudaErr_, #expr, __FILE__, __LINE__); \
    } while (0)

#define MB_CUBLAS_CHECK(expr)                                                                                  \
    do {                                                                                                       \
        const cublasStatus_t mbBlasStatus_ = (expr);                                                           \
        if (mbBlasStatus_ != CUBLAS_STATUS_SUCCESS)                                                            \
            ::mb::kernels::cuda::detail::throwCublas(mbBlasStatus_, #expr, __FILE__, __LINE__);                 \
    } while (0)

// After a kernel launch: reports a bad launch configuration at the launch site.
#define MB_CUDA_CHECK_LAUNCH() MB_CUDA_CHECK(cudaGetLastError())
