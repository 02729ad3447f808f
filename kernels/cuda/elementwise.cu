// Row and elementwise kernels: embedding gather (or input rows), RMSNorm (+ residual), biases, gated activations,
// soft-cap, RoPE (+ KV write), F16 casts.
//
// All of these are memory-bound and tiny next to the weight products; they exist so that the
// activations never leave the device between the products. The per-element math is
// layer_math.h's, which the CPU tests check against the CPU engine.
#include "kernels/cuda/block_decode.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/dequant.cuh"

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>

namespace mb::kernels::cuda {

using detail::gridFor;

namespace {

constexpr int kRowThreads = 256;

// One block per token: its input row as it is, or its table row decoded (bit for bit the CPU's
// dequantisation, D being the table's block decoder) and scaled.
template <class D>
__global__ void embedKernel(EmbedArgs a, int64_t rowBytes, float* x) {
    const int64_t t = blockIdx.x, dim = a.table.cols;
    const int32_t inputRow = a.rowOf ? a.rowOf[t] : -1;
    if (inputRow >= 0) {
        const float* in = a.inputs + static_cast<int64_t>(inputRow) * dim;
        for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) x[t * dim + i] = in[i];
        return;
    }
    const uint8_t* row = static_cast<const uint8_t*>(a.table.data) + static_cast<int64_t>(a.ids[t]) * rowBytes;
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
        const float v = decode::rowElement<D>(row, i);
        x[t * dim + i] = a.scale != 1.0f ? v * a.scale : v;
    }
}

// One block per row: optional residual add, then the sum of squares reduced over the block.
__global__ void addRmsNormKernel(float* x, const float* residual, const float* weight, float* out, int64_t dim,
                                 float eps) {
    __shared__ float warpSums[kRowThreads / 32];
    float* xr = x + blockIdx.x * dim;
    float ss = 0.0f;
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
        float v = xr[i];
        if (residual) {
            v += residual[blockIdx.x * dim + i];
            xr[i] = v;
        }
        ss += v * v;
    }
    ss = detail::warpSum(ss);
    if (threadIdx.x % 32 == 0) warpSums[threadIdx.x / 32] = ss;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < blockDim.x / 32 ? warpSums[threadIdx.x] : 0.0f;
        v = detail::warpSum(v);
        if (threadIdx.x == 0) warpSums[0] = v;
    }
    __syncthreads();
    const float inv = rsqrtf(warpSums[0] / static_cast<float>(dim) + eps);
    for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) out[blockIdx.x * dim + i] = xr[i] * inv * weight[i];
}

__global__ void addKernel(float* x, const float* y, int64_t count) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < count) x[i] += y[i];
}

__global__ void biasKernel(float* x, const float* bias, int64_t count, int64_t width) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < count) x[i] += bias[i % width];
}

__global__ void siluMulKernel(float* gate, const float* up, int64_t count) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < count) gate[i] = siluGate(gate[i], up[i]);
}

__global__ void geluTanhMulKernel(float* gate, const float* up, int64_t count) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < count) gate[i] = geluTanhGate(gate[i], up[i]);
}

__global__ void softcapKernel(float* x, int64_t count, float cap) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < count) x[i] = softcapped(x[i], cap);
}

// Where position `pos` of token t's sequence lives in layer kv.layer (element offset).
__device__ __forceinline__ int64_t kvOffset(const PagedKv& kv, int32_t seq, int64_t pos) {
    const int64_t block = kv.tables[kv.tableStart[seq] + pos / kv.blockSize];
    return ((static_cast<int64_t>(kv.layer) * kv.cacheBlocks[seq] + block) * kv.blockSize + pos % kv.blockSize) *
           kv.kvDim;
}

// One block per token: rotate every pair of q and k, then (fused) write k and v to the cache.
__global__ void ropeKernel(RopeArgs a, PagedKv kv, bool writeKv) {
    const int64_t t = blockIdx.x;
    const int64_t pos = kv.posOfToken[t];
    const int32_t half = a.ropeDim / 2;
    const int32_t qDim = a.heads * a.headDim, kvDim = a.kvHeads * a.headDim;
    const int32_t pairs = (a.heads + a.kvHeads) * half;
    for (int32_t p = threadIdx.x; p < pairs; p += blockDim.x) {
        const int32_t head = p / half, i = p % half;
        float c, s;
        if (a.cosTable) { // the host checked that the table covers every position
            c = a.cosTable[pos * half + i];
            s = a.sinTable[pos * half + i];
        } else { // as kernels::ropeAngles: double precision, then rounded
            ropeCosSin(pos, i, a.ropeDim, a.base, a.posScale, a.factors, &c, &s);
        }
        float* v = head < a.heads ? a.q + t * qDim + head * a.headDim
                                  : a.k + t * kvDim + (head - a.heads) * a.headDim;
        ropeRotate(v, ropePair(a.form, i, a.ropeDim), c, s);
    }
    if (!writeKv) return;
    __syncthreads(); // k is rotated before it is copied
    const int64_t off = kvOffset(kv, kv.seqOfToken[t], pos);
    for (int32_t i = threadIdx.x; i < kvDim; i += blockDim.x) {
        kv.keys[kv.seqOfToken[t]][off + i] = a.k[t * kvDim + i];
        kv.values[kv.seqOfToken[t]][off + i] = a.v[t * kvDim + i];
    }
}

__global__ void storeKvKernel(const float* k, const float* v, PagedKv kv) {
    const int64_t t = blockIdx.x;
    const int32_t seq = kv.seqOfToken[t];
    const int64_t off = kvOffset(kv, seq, kv.posOfToken[t]);
    for (int32_t i = threadIdx.x; i < kv.kvDim; i += blockDim.x) {
        kv.keys[seq][off + i] = k[t * kv.kvDim + i];
        kv.values[seq][off + i] = v[t * kv.kvDim + i];
    }
}

__global__ void toHalfKernel(const float* x, __half* y, int64_t count) {
    const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
    if (i < count) y[i] = __float2half(x[i]);
}

} // namespace

void embedRows(const EmbedArgs& args, int64_t n, float* x, Stream stream) {
    if (n <= 0) return;
    const auto bytes = static_cast<int64_t>(rowBytes(args.table.type, args.table.cols));
    const bool known = decode::withDecoder(args.table.type, [&](auto d) {
        embedKernel<decltype(d)><<<static_cast<unsigned>(n), kRowThreads, 0, stream>>>(args, bytes, x);
        MB_CUDA_CHECK_LAUNCH();
    });
    if (!known)
        throw CudaError("CUDA kernels have no " + std::string(tensorTypeName(args.table.type)) + " embeddings");
}

void addRmsNorm(float* x, const float* residual, const float* weight, float* out, int64_t n, int64_t dim, float eps,
                Stream stream) {
    if (n <= 0) return;
    // Whole warps, no more than the row needs: a head's norm (dim 64-256) uses 2-8 warps.
    const auto threads = static_cast<unsigned>(std::min<int64_t>(kRowThreads, (dim + 31) / 32 * 32));
    addRmsNormKernel<<<static_cast<unsigned>(n), threads, 0, stream>>>(x, residual, weight, out, dim, eps);
    MB_CUDA_CHECK_LAUNCH();
}

void addBiasRows(float* x, const float* bias, int64_t rows, int64_t width, Stream stream) {
    const int64_t count = rows * width;
    if (count <= 0) return;
    biasKernel<<<gridFor(count, 256), 256, 0, stream>>>(x, bias, count, width);
    MB_CUDA_CHECK_LAUNCH();
}

void addInPlace(float* x, const float* y, int64_t count, Stream stream) {
    if (count <= 0) return;
    addKernel<<<gridFor(count, 256), 256, 0, stream>>>(x, y, count);
    MB_CUDA_CHECK_LAUNCH();
}

void siluMul(float* gate, const float* up, int64_t count, Stream stream) {
    if (count <= 0) return;
    siluMulKernel<<<gridFor(count, 256), 256, 0, stream>>>(gate, up, count);
    MB_CUDA_CHECK_LAUNCH();
}

void geluTanhMul(float* gate, const float* up, int64_t count, Stream stream) {
    if (count <= 0) return;
    geluTanhMulKernel<<<gridFor(count, 256), 256, 0, stream>>>(gate, up, count);
    MB_CUDA_CHECK_LAUNCH();
}

void softcap(float* x, int64_t count, float cap, Stream stream) {
    if (count <= 0) return;
    softcapKernel<<<gridFor(count, 256), 256, 0, stream>>>(x, count, cap);
    MB_CUDA_CHECK_LAUNCH();
}

void ropeAndStore(const RopeArgs& args, const PagedKv& kv, bool writeKv, Stream stream) {
    if (args.n <= 0) return;
    ropeKernel<<<static_cast<unsigned>(args.n), 128, 0, stream>>>(args, kv, writeKv);
    MB_CUDA_CHECK_LAUNCH();
}

void storeKv(const float* k, const float* v, int64_t n, const PagedKv& kv, Stream stream) {
    if (n <= 0) return;
    storeKvKernel<<<static_cast<unsigned>(n), 128, 0, stream>>>(k, v, kv);
    MB_CUDA_CHECK_LAUNCH();
}

void convertToF16(const float* x, void* dst, int64_t count, Stream stream) {
    if (count <= 0) return;
    toHalfKernel<<<gridFor(count, 256), 256, 0, stream>>>(x, static_cast<__half*>(dst), count);
    MB_CUDA_CHECK_LAUNCH();
}

} // namespace mb::kernels::cuda
