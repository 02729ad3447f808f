// Token selection on the device: argmax (greedy) and temperature sampling from a given uniform number.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/dequant.cuh"

#include <cfloat>

namespace mb::kernels::cuda {

namespace {

constexpr int kThreads = 256;

// Best (value, index) of a and b: larger value, then smaller index.
__device__ __forceinline__ void better(float& v, int64_t& i, float ov, int64_t oi) {
    if (ov > v || (ov == v && oi < i)) {
        v = ov;
        i = oi;
    }
}

// Block-wide best (value, index); the result is valid in thread 0.
__device__ void blockArgmax(float& v, int64_t& i) {
    __shared__ float sv[kThreads / 32];
    __shared__ int64_t si[kThreads / 32];
    for (int o = 16; o > 0; o >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, v, o);
        const int64_t oi = __shfl_xor_sync(0xffffffffu, i, o);
        better(v, i, ov, oi);
    }
    if (threadIdx.x % 32 == 0) {
        sv[threadIdx.x / 32] = v;
        si[threadIdx.x / 32] = i;
    }
    __syncthreads();
    if (threadIdx.x == 0)
        for (int w = 1; w < kThreads / 32; ++w) better(v, i, sv[w], si[w]);
}

__global__ void argmaxKernel(const float* logits, int64_t vocab, int32_t* out) {
    const float* row = logits + blockIdx.x * vocab;
    float v = -FLT_MAX;
    int64_t i = INT64_MAX;
    for (int64_t k = threadIdx.x; k < vocab; k += kThreads) better(v, i, row[k], k);
    blockArgmax(v, i);
    if (threadIdx.x == 0) out[blockIdx.x] = static_cast<int32_t>(i == INT64_MAX ? 0 : i);
}

// Each thread owns a contiguous slice of the row: slice sums, an exclusive scan of the
// 256 sums (by thread 0; tiny), then the thread whose slice holds u * total walks it.
__global__ void sampleKernel(const float* logits, int64_t vocab, float invTemperature, const float* uniforms,
                             int32_t* out) {
    __shared__ float sliceSum[kThreads];
    __shared__ float sliceStart[kThreads];
    __shared__ float maxv;
    __shared__ int32_t chosen;
    const float* row = logits + blockIdx.x * vocab;
    const int64_t per = (vocab + kThreads - 1) / kThreads;
    const int64_t k0 = threadIdx.x * per;
    const int64_t k1 = k0 + per < vocab ? k0 + per : vocab;

    float v = -FLT_MAX;
    int64_t i = INT64_MAX;
    for (int64_t k = k0; k < k1; ++k) better(v, i, row[k], k);
    blockArgmax(v, i);
    if (threadIdx.x == 0) {
        maxv = v;
        chosen = static_cast<int32_t>(i == INT64_MAX ? 0 : i); // if rounding leaves u*total unreached
    }
    __syncthreads();
    float s = 0.0f;
    for (int64_t k = k0; k < k1; ++k) s += __expf((row[k] - maxv) * invTemperature);
    sliceSum[threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float run = 0.0f;
        for (int j = 0; j < kThreads; ++j) {
            sliceStart[j] = run;
            run += sliceSum[j];
        }
        sliceSum[0] = run; // the total, read below after the barrier
        sliceStart[0] = 0.0f;
    }
    __syncthreads();
    const float total = sliceSum[0];
    const float target = uniforms[blockIdx.x] * total;
    const float start = sliceStart[threadIdx.x];
    const float next = threadIdx.x + 1 < kThreads ? sliceStart[threadIdx.x + 1] : total;
    if (k0 < k1 && target >= start && target < next) {
        float run = start;
        for (int64_t k = k0; k < k1; ++k) {
            run += __expf((row[k] - maxv) * invTemperature);
            if (run > target) {
                chosen = static_cast<int32_t>(k);
                break;
            }
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = chosen;
}

} // namespace

void argmaxRows(const float* logits, int64_t n, int64_t vocab, int32_t* out, Stream stream) {
    if (n <= 0) return;
    argmaxKernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(logits, vocab, out);
    MB_CUDA_CHECK_LAUNCH();
}

void sampleRows(const float* logits, int64_t n, int64_t vocab, float temperature, const float* uniforms,
                int32_t* out, Stream stream) {
    if (n <= 0) return;
    if (!(temperature > 0.0f)) throw CudaError("sampleRows: temperature must be > 0 (use argmaxRows for greedy)");
    sampleKernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(logits, vocab, 1.0f / temperature, uniforms, out);
    MB_CUDA_CHECK_LAUNCH();
}

} // namespace mb::kernels::cuda
