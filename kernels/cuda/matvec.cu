// Dequantising matrix-vector products for decode (every device weight type) and F16 expansion for cuBLAS.
//
// Where the time goes: batch-1 decode is bound by reading the weights once per token, so
// each weight byte is read exactly once per launch (one warp per output row, lanes over
// consecutive 32-element groups so a warp reads a contiguous stretch of the row) and up to
// kMatvecMaxTokens activations are multiplied with it while it is in registers. A group is
// decoded by kernels/cuda/block_decode.h into 32 floats (the CPU's dequantised values, bit for
// bit), then dotted with each token's 32 activations. Accumulation per token is in the same
// order whatever n is, so a token gives the same result alone or in a batch.
#include "kernels/cuda/block_decode.h"
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/dequant.cuh"

#include <cuda_fp16.h>

#include <string>
#include <type_traits>

namespace mb::kernels::cuda {

namespace {

constexpr int kRowsPerBlock = 4; // warps per block, one row each

// acc[t] += w · x[t] over one lane's share of a row of plain floats (F32, F16, BF16; any cols).
template <class D, int NT>
__device__ __forceinline__ void plainRow(const uint8_t* row, int64_t cols, const float* x, int n, int lane,
                                         float* acc) {
    if constexpr (std::is_same_v<D, decode::DecodeF16>) {
        if (cols % 2 == 0) { // rows start 4-byte aligned: read pairs
            const __half2* w2 = reinterpret_cast<const __half2*>(row);
            for (int64_t k = lane; k < cols / 2; k += 32) {
                const float2 wf = __half22float2(w2[k]);
#pragma unroll
                for (int t = 0; t < NT; ++t)
                    if (t < n) acc[t] += wf.x * x[t * cols + 2 * k] + wf.y * x[t * cols + 2 * k + 1];
            }
            return;
        }
    }
    for (int64_t k = lane; k < cols; k += 32) {
        const float wf = decode::rowElement<D>(row, k);
#pragma unroll
        for (int t = 0; t < NT; ++t)
            if (t < n) acc[t] += wf * x[t * cols + k];
    }
}

// The same over a row of blocks: one 32-element group per lane and step, decoded in registers.
template <class D, int NT>
__device__ __forceinline__ void blockRow(const uint8_t* row, int64_t cols, const float* x, int n, int lane,
                                         float* acc) {
    const int64_t groups = cols / 32;
    for (int64_t g = lane; g < groups; g += 32) {
        float w[32];
        decode::rowGroup<D>(row, g, w);
#pragma unroll
        for (int t = 0; t < NT; ++t) {
            if (t >= n) continue;
            const float* xg = x + t * cols + g * 32;
            float s = 0.0f;
#pragma unroll
            for (int i = 0; i < 32; ++i) s += w[i] * xg[i];
            acc[t] += s;
        }
    }
}

// y[t, r] for t < n <= NT. w: rows of rowBytes bytes of D's blocks; x: (n, cols) F32.
template <class D, int NT>
__global__ void matvecKernel(const uint8_t* w, int64_t rowBytes, int64_t rows, int64_t cols, const float* x, int n,
                             float* y) {
    const int64_t r = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (r >= rows) return;
    float acc[NT];
#pragma unroll
    for (int t = 0; t < NT; ++t) acc[t] = 0.0f;
    const uint8_t* row = w + r * rowBytes;
    if constexpr (D::kElems == 1)
        plainRow<D, NT>(row, cols, x, n, lane, acc);
    else
        blockRow<D, NT>(row, cols, x, n, lane, acc);
#pragma unroll
    for (int t = 0; t < NT; ++t) {
        const float v = detail::warpSum(acc[t]);
        if (lane == 0 && t < n) y[t * rows + r] = v;
    }
}

// Two floats as the bits of a __half2 (round to nearest even, as __float2half).
__device__ __forceinline__ uint32_t packHalves(float a, float b) {
    return static_cast<uint32_t>(__half_as_ushort(__float2half(a))) |
           (static_cast<uint32_t>(__half_as_ushort(__float2half(b))) << 16);
}

// dst row blockIdx.y (cols __half) from a row of D: one element per thread for plain floats,
// one 32-element group per thread (four 16-byte stores) for blocks.
template <class D>
__global__ void toF16Kernel(const uint8_t* w, int64_t rowBytes, int64_t cols, __half* dst) {
    const int64_t r = blockIdx.y;
    const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const uint8_t* row = w + r * rowBytes;
    if constexpr (D::kElems == 1) {
        if (i < cols) dst[r * cols + i] = __float2half(decode::rowElement<D>(row, i));
    } else {
        if (i >= cols / 32) return;
        float v[32];
        decode::rowGroup<D>(row, i, v);
        auto* out = reinterpret_cast<uint4*>(dst + r * cols + i * 32); // 64-byte aligned: cols % 32 == 0
#pragma unroll
        for (int k = 0; k < 4; ++k)
            out[k] = make_uint4(packHalves(v[8 * k], v[8 * k + 1]), packHalves(v[8 * k + 2], v[8 * k + 3]),
                                packHalves(v[8 * k + 4], v[8 * k + 5]), packHalves(v[8 * k + 6], v[8 * k + 7]));
    }
}

void checkMatrix(const DeviceMatrix& w) {
    if (!deviceWeightType(w.type))
        throw CudaError("CUDA kernels have no " + std::string(tensorTypeName(w.type)) + " weights");
    if (w.cols % blockSize(w.type) != 0)
        throw CudaError(std::string(tensorTypeName(w.type)) + " weights need rows that are a multiple of " +
                        std::to_string(blockSize(w.type)));
}

template <int NT>
void launchMatvec(const DeviceMatrix& w, const float* x, int n, float* y, Stream stream) {
    const unsigned grid = detail::gridFor(w.rows, kRowsPerBlock);
    const auto* data = static_cast<const uint8_t*>(w.data);
    const auto bytes = static_cast<int64_t>(rowBytes(w.type, w.cols));
    decode::withDecoder(w.type, [&](auto d) {
        matvecKernel<decltype(d), NT><<<grid, kRowsPerBlock * 32, 0, stream>>>(data, bytes, w.rows, w.cols, x, n, y);
        MB_CUDA_CHECK_LAUNCH();
    });
}

} // namespace

bool deviceWeightType(TensorType type) { return decode::deviceDecodes(type); }

void matvec(const DeviceMatrix& w, const float* x, int64_t n, float* y, Stream stream) {
    checkMatrix(w);
    if (n < 1 || n > kMatvecMaxTokens) throw CudaError("matvec: n must be 1.." + std::to_string(kMatvecMaxTokens));
    if (n == 1)
        launchMatvec<1>(w, x, 1, y, stream);
    else
        launchMatvec<kMatvecMaxTokens>(w, x, static_cast<int>(n), y, stream);
}

void dequantizeToF16(const DeviceMatrix& w, void* dst, Stream stream) {
    checkMatrix(w);
    // One grid row per matrix row (gridDim.y <= 65535): larger matrices go in slices.
    const auto bytes = static_cast<int64_t>(rowBytes(w.type, w.cols));
    const int64_t perRow = blockSize(w.type) == 1 ? w.cols : w.cols / 32; // threads per row
    decode::withDecoder(w.type, [&](auto d) {
        for (int64_t r0 = 0; r0 < w.rows; r0 += 65535) {
            const int64_t rs = w.rows - r0 < 65535 ? w.rows - r0 : 65535;
            const dim3 grid(detail::gridFor(perRow, 256), static_cast<unsigned>(rs));
            toF16Kernel<decltype(d)><<<grid, 256, 0, stream>>>(static_cast<const uint8_t*>(w.data) + r0 * bytes, bytes,
                                                              w.cols, static_cast<__half*>(dst) + r0 * w.cols);
            MB_CUDA_CHECK_LAUNCH();
        }
    });
}

} // namespace mb::kernels::cuda
