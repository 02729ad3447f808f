// Dequantising matrix-vector products for decode (F32, F16, Q8_0, Q4_0 weights) and F16 expansion for cuBLAS.
//
// Where the time goes: batch-1 decode is bound by reading the weights once per token, so
// each weight byte is read exactly once per launch (one warp per output row, lanes over
// consecutive blocks so a warp reads a contiguous stretch of the row) and up to
// kMatvecMaxTokens activations are multiplied with it while it is in registers.
// Accumulation per token is in the same order whatever n is, so a token gives the same
// result alone or in a batch.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/dequant.cuh"

#include <cuda_fp16.h>

namespace mb::kernels::cuda {

namespace {

constexpr int kRowsPerBlock = 4; // warps per block, one row each

// y[t, r] for t < n <= NT. x: (n, cols) F32.
template <int NT>
__global__ void matvecKernel(TensorType type, const uint8_t* w, int64_t rows, int64_t cols, const float* x, int n,
                             float* y) {
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (r >= rows) return;
    float acc[NT];
#pragma unroll
    for (int t = 0; t < NT; ++t) acc[t] = 0.0f;
    const uint8_t* row = w + r * detail::deviceRowBytes(type, cols);

    if (type == TensorType::Q8_0 || type == TensorType::Q4_0) {
        const int64_t blocks = cols / 32;
        for (int64_t b = lane; b < blocks; b += 32) {
            float sums[NT];
#pragma unroll
            for (int t = 0; t < NT; ++t) sums[t] = 0.0f;
            float d;
            if (type == TensorType::Q8_0) {
                const auto* blk = reinterpret_cast<const BlockQ8_0*>(row) + b;
                d = detail::halfBits(blk->d);
#pragma unroll 8
                for (int i = 0; i < 32; ++i) {
                    const float q = static_cast<float>(blk->qs[i]);
#pragma unroll
                    for (int t = 0; t < NT; ++t)
                        if (t < n) sums[t] += q * x[t * cols + b * 32 + i];
                }
            } else {
                const auto* blk = reinterpret_cast<const BlockQ4_0*>(row) + b;
                d = detail::halfBits(blk->d);
#pragma unroll 4
                for (int i = 0; i < 16; ++i) {
                    const uint8_t byte = blk->qs[i];
                    const float lo = static_cast<float>((byte & 0x0F) - 8), hi = static_cast<float>((byte >> 4) - 8);
#pragma unroll
                    for (int t = 0; t < NT; ++t)
                        if (t < n) sums[t] += lo * x[t * cols + b * 32 + i] + hi * x[t * cols + b * 32 + 16 + i];
                }
            }
#pragma unroll
            for (int t = 0; t < NT; ++t) acc[t] += d * sums[t];
        }
    } else if (type == TensorType::F16) {
        const __half* wr = reinterpret_cast<const __half*>(row);
        if (cols % 2 == 0) { // rows start 4-byte aligned: read pairs
            const __half2* w2 = reinterpret_cast<const __half2*>(wr);
            for (int64_t k = lane; k < cols / 2; k += 32) {
                const float2 wf = __half22float2(w2[k]);
#pragma unroll
                for (int t = 0; t < NT; ++t)
                    if (t < n) acc[t] += wf.x * x[t * cols + 2 * k] + wf.y * x[t * cols + 2 * k + 1];
            }
        } else {
            for (int64_t k = lane; k < cols; k += 32) {
                const float wf = __half2float(wr[k]);
#pragma unroll
                for (int t = 0; t < NT; ++t)
                    if (t < n) acc[t] += wf * x[t * cols + k];
            }
        }
    } else { // F32
        const float* wr = reinterpret_cast<const float*>(row);
        for (int64_t k = lane; k < cols; k += 32) {
            const float wf = wr[k];
#pragma unroll
            for (int t = 0; t < NT; ++t)
                if (t < n) acc[t] += wf * x[t * cols + k];
        }
    }
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        const float v = detail::warpSum(acc[t]);
        if (lane == 0 && t < n) y[t * rows + r] = v;
    }
}

__global__ void dequantizeKernel(TensorType type, const uint8_t* w, int64_t rowBytes, int64_t cols, __half* dst) {
    const int64_t r = blockIdx.y;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < cols) dst[r * cols + i] = __float2half(detail::loadElement(type, w + r * rowBytes, i));
}

void checkMatrix(const DeviceMatrix& w) {
    if (!deviceWeightType(w.type))
        throw CudaError("CUDA kernels have no " + std::string(tensorTypeName(w.type)) + " weights");
    if ((w.type == TensorType::Q8_0 || w.type == TensorType::Q4_0) && w.cols % 32 != 0)
        throw CudaError("quantised weights need rows that are a multiple of 32");
}

} // namespace

void matvec(const DeviceMatrix& w, const float* x, int64_t n, float* y, Stream stream) {
    checkMatrix(w);
    if (n < 1 || n > kMatvecMaxTokens) throw CudaError("matvec: n must be 1.." + std::to_string(kMatvecMaxTokens));
    const unsigned grid = detail::gridFor(w.rows, kRowsPerBlock);
    const auto* data = static_cast<const uint8_t*>(w.data);
    if (n == 1)
        matvecKernel<1><<<grid, kRowsPerBlock * 32, 0, stream>>>(w.type, data, w.rows, w.cols, x, 1, y);
    else
        matvecKernel<kMatvecMaxTokens><<<grid, kRowsPerBlock * 32, 0, stream>>>(w.type, data, w.rows, w.cols, x,
                                                                               static_cast<int>(n), y);
    MB_CUDA_CHECK_LAUNCH();
}

void dequantizeToF16(const DeviceMatrix& w, void* dst, Stream stream) {
    checkMatrix(w);
    // One grid row per matrix row (gridDim.y <= 65535): larger matrices go in slices.
    const int64_t rowBytes = detail::deviceRowBytes(w.type, w.cols);
    for (int64_t r0 = 0; r0 < w.rows; r0 += 65535) {
        const int64_t rs = w.rows - r0 < 65535 ? w.rows - r0 : 65535;
        const dim3 grid(detail::gridFor(w.cols, 256), static_cast<unsigned>(rs));
        dequantizeKernel<<<grid, 256, 0, stream>>>(w.type, static_cast<const uint8_t*>(w.data) + r0 * rowBytes,
                                                   rowBytes, w.cols, static_cast<__half*>(dst) + r0 * w.cols);
        MB_CUDA_CHECK_LAUNCH();
    }
}

} // namespace mb::kernels::cuda
