// Kernels of the CLIP vision encoder (engine/cuda_clip.cpp): im2col, embeddings, LayerNorm, bias, activations, softmax.
//
// Where the time goes: the encoder's products (cuBLAS, clip_blas.cpp) hold nearly all the
// arithmetic; these kernels are memory-bound passes over (tokens, width) activations, one
// CUDA block per row where a row needs a reduction. The elementwise math is
// kernels/clip_math.h, the same functions the CPU pass calls.
#include "kernels/clip_math.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/dequant.cuh"

#include <cfloat>

namespace mb::kernels::cuda {

using detail::gridFor;

namespace {

constexpr int kThreads = 256;

__global__ void patchColumnsKernel(const float* chw, int s, int p, float* cols) {
    const int g = s / p, perPatch = 3 * p * p;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= static_cast<int64_t>(g) * g * perPatch) return;
    const int patch = static_cast<int>(i / perPatch), col = static_cast<int>(i % perPatch);
    const int py = patch / g, px = patch % g;
    const int c = col / (p * p), kh = (col / p) % p, kw = col % p;
    cols[i] = chw[(static_cast<int64_t>(c) * s + py * p + kh) * s + px * p + kw];
}

// x (patches + 1, hidden): row 0 = class; rows 1.. += bias; every row += pos.
__global__ void embeddingsKernel(float* x, const float* cls, const float* bias, const float* pos, int64_t patches,
                                 int64_t hidden) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i >= (patches + 1) * hidden) return;
    const int64_t f = i % hidden;
    float v = i < hidden ? cls[f] : x[i];
    if (i >= hidden && bias) v += bias[f];
    x[i] = v + pos[i];
}

// Sum of `v` over the CUDA block (blockDim.x a multiple of 32, at most 1024); every thread gets it.
template <class T>
__device__ T blockSum(T v, T* shared) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x < 32) {
        T w = threadIdx.x < blockDim.x / 32 ? shared[threadIdx.x] : T(0);
        for (int o = 16; o > 0; o >>= 1) w += __shfl_xor_sync(0xffffffffu, w, o);
        if (threadIdx.x == 0) shared[0] = w;
    }
    __syncthreads();
    const T total = shared[0];
    __syncthreads(); // `shared` may be reused at once
    return total;
}

// One block per row: mean and variance in double (two passes, as the CPU), then each element
// through clip::layerNormValue. y may equal x: every thread reads its elements before it
// writes them, and all reads of the statistics' passes are done by then.
__global__ void layerNormKernel(const float* x, const float* w, const float* b, float* y, int64_t width, float eps) {
    __shared__ double partial[kThreads / 32];
    const float* xr = x + blockIdx.x * width;
    double s = 0.0;
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x) s += xr[i];
    const double mean = blockSum(s, partial) / static_cast<double>(width);
    double v = 0.0;
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x) v += (xr[i] - mean) * (xr[i] - mean);
    const double var = blockSum(v, partial) / static_cast<double>(width);
    const double inv = 1.0 / sqrt(var + eps);
    float* yr = y + blockIdx.x * width;
    for (int64_t i = threadIdx.x; i < width; i += blockDim.x) yr[i] = clip::layerNormValue(xr[i], mean, inv, w[i], b[i]);
}

__global__ void addBiasKernel(float* y, const float* b, int64_t n, int64_t width) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n * width) y[i] += b[i % width];
}

__global__ void activationKernel(float* x, int64_t count, clip::Activation act) {
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count) x[i] = clip::activate(act, x[i]);
}

// One block per row of `cols` scores: max in float, exponentials in float, their sum in
// double (as the CPU), then each probability times (float)(1 / sum).
__global__ void softmaxKernel(float* s, int64_t cols) {
    __shared__ float maxes[kThreads / 32];
    __shared__ double sums[kThreads / 32];
    float* row = s + blockIdx.x * cols;
    float mx = -FLT_MAX;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) mx = fmaxf(mx, row[j]);
    mx = detail::warpMax(mx);
    if (threadIdx.x % 32 == 0) maxes[threadIdx.x / 32] = mx;
    __syncthreads();
    mx = maxes[0];
    for (unsigned w = 1; w < blockDim.x / 32; ++w) mx = fmaxf(mx, maxes[w]);
    double sum = 0.0;
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) {
        const float e = expf(row[j] - mx);
        row[j] = e;
        sum += e;
    }
    const auto inv = static_cast<float>(1.0 / blockSum(sum, sums));
    for (int64_t j = threadIdx.x; j < cols; j += blockDim.x) row[j] *= inv;
}

} // namespace

void patchColumns(const float* chw, int32_t imageSize, int32_t patchSize, float* cols, Stream stream) {
    const int64_t g = imageSize / patchSize, count = g * g * 3 * patchSize * patchSize;
    patchColumnsKernel<<<gridFor(count, kThreads), kThreads, 0, stream>>>(chw, imageSize, patchSize, cols);
    MB_CUDA_CHECK_LAUNCH();
}

void clipEmbeddings(float* x, const float* classEmbd, const float* patchBias, const float* pos, int64_t patches,
                    int64_t hidden, Stream stream) {
    embeddingsKernel<<<gridFor((patches + 1) * hidden, kThreads), kThreads, 0, stream>>>(x, classEmbd, patchBias, pos,
                                                                                         patches, hidden);
    MB_CUDA_CHECK_LAUNCH();
}

void layerNorm(const float* x, const float* w, const float* b, float* y, int64_t n, int64_t width, float eps,
               Stream stream) {
    if (n <= 0) return;
    layerNormKernel<<<static_cast<unsigned>(n), kThreads, 0, stream>>>(x, w, b, y, width, eps);
    MB_CUDA_CHECK_LAUNCH();
}

void addBias(float* y, const float* b, int64_t n, int64_t width, Stream stream) {
    if (n * width <= 0) return;
    addBiasKernel<<<gridFor(n * width, kThreads), kThreads, 0, stream>>>(y, b, n, width);
    MB_CUDA_CHECK_LAUNCH();
}

void applyActivation(float* x, int64_t count, clip::Activation act, Stream stream) {
    if (count <= 0) return;
    activationKernel<<<gridFor(count, kThreads), kThreads, 0, stream>>>(x, count, act);
    MB_CUDA_CHECK_LAUNCH();
}

void softmaxRows(float* s, int64_t rows, int64_t cols, Stream stream) {
    if (rows <= 0) return;
    softmaxKernel<<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(s, cols);
    MB_CUDA_CHECK_LAUNCH();
}

} // namespace mb::kernels::cuda
