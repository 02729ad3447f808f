// Causal grouped-query attention over the paged KV cache: split over the sequence (decode) and tiled (prefill),
// with the score rule of the layer (scale, Gemma 2's soft-cap, a sliding window).
//
// Pass 1: one block of 4 warps per (split, head, token). The split's positions are shared
// round-robin by the warps; each warp keeps an online softmax (running max m, sum l, and
// the weighted V sum in registers: headDim/32 floats per lane), then the block merges its
// warps and writes (m, l, o[headDim]) for the split. Pass 2 merges the splits. The split
// ranges are computed on the device from the token's position, so the launch shape is
// fixed for a given n and a captured decode graph stays valid as the sequence grows. On a
// sliding layer only the last `window` positions are split (and read).
//
// Where the time goes: at decode the K/V reads (len * kvDim * 8 bytes per layer); the
// split count keeps enough blocks in flight to read them at full bandwidth for one token.
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/dequant.cuh"

#include <cfloat>

namespace mb::kernels::cuda {

namespace {

constexpr int kWarps = 4;
constexpr int kMaxHeadDim = 256;
constexpr int kPerLane = kMaxHeadDim / 32;

// partial layout: for each (token, head, split) a record of headDim + 2 floats: m, l, o.
__global__ void attentionSplitKernel(const float* q, PagedKv kv, int32_t heads, int32_t group, int32_t headDim,
                                     AttentionRule rule, float* partial) {
    const int32_t split = blockIdx.x, splits = gridDim.x, h = blockIdx.y;
    const int64_t t = blockIdx.z;
    const int32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __shared__ float qs[kMaxHeadDim];
    __shared__ float wm[kWarps], wl[kWarps];
    __shared__ float wo[kWarps][kMaxHeadDim];

    int64_t begin, end;
    splitKeys(kv.posOfToken[t], rule.window, split, splits, &begin, &end);
    const int32_t seq = kv.seqOfToken[t];
    const int32_t headOffset = (h / group) * headDim;
    const float* keys = kv.keys[seq];
    const float* values = kv.values[seq];
    const int64_t layerBase = static_cast<int64_t>(kv.layer) * kv.cacheBlocks[seq];
    const int32_t* table = kv.tables + kv.tableStart[seq];

    for (int32_t d = threadIdx.x; d < headDim; d += blockDim.x)
        qs[d] = q[(t * heads + h) * headDim + d] * rule.scale;
    __syncthreads();

    float m = -FLT_MAX, l = 0.0f;
    float acc[kPerLane];
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) acc[i] = 0.0f;
    bool any = false;
    for (int64_t j = begin + warp; j < end; j += kWarps) {
        const int64_t off = ((layerBase + table[j / kv.blockSize]) * kv.blockSize + j % kv.blockSize) * kv.kvDim +
                            headOffset;
        float dot = 0.0f;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int32_t d = lane + 32 * i;
            if (d < headDim) dot += qs[d] * keys[off + d];
        }
        dot = ruleScore(detail::warpSum(dot), rule);
        const float mNew = fmaxf(m, dot);
        const float c = any ? __expf(m - mNew) : 0.0f;
        const float p = __expf(dot - mNew);
        l = l * c + p;
#pragma unroll
        for (int i = 0; i < kPerLane; ++i) {
            const int32_t d = lane + 32 * i;
            if (d < headDim) acc[i] = acc[i] * c + p * values[off + d];
        }
        m = mNew;
        any = true;
    }
    if (lane == 0) {
        wm[warp] = any ? m : -FLT_MAX;
        wl[warp] = l;
    }
#pragma unroll
    for (int i = 0; i < kPerLane; ++i) {
        const int32_t d = lane + 32 * i;
        if (d < headDim) wo[warp][d] = acc[i];
    }
    __syncthreads();

    // Merge the warps; a warp that saw no position has l = 0 and weight 0.
    float M = -FLT_MAX;
    for (int w = 0; w < kWarps; ++w)
        if (wl[w] > 0.0f) M = fmaxf(M, wm[w]);
    float* rec = partial + ((t * heads + h) * splits + split) * (headDim + 2);
    float L = 0.0f;
    for (int w = 0; w < kWarps; ++w)
        if (wl[w] > 0.0f) L += wl[w] * __expf(wm[w] - M);
    if (threadIdx.x == 0) {
        rec[0] = M;
        rec[1] = L;
    }
    for (int32_t d = threadIdx.x; d < headDim; d += blockDim.x) {
        float o = 0.0f;
        for (int w = 0; w < kWarps; ++w)
            if (wl[w] > 0.0f) o += wo[w][d] * __expf(wm[w] - M);
        rec[2 + d] = o;
    }
}

// One block per (token, head): merges the split records into the normalised output.
__global__ void attentionMergeKernel(const float* partial, int32_t heads, int32_t headDim, int32_t splits,
                                     float* out) {
    const int64_t th = blockIdx.x; // t * heads + h
    const float* recs = partial + th * splits * (headDim + 2);
    float M = -FLT_MAX;
    for (int s = 0; s < splits; ++s)
        if (recs[s * (headDim + 2) + 1] > 0.0f) M = fmaxf(M, recs[s * (headDim + 2)]);
    float L = 0.0f;
    for (int s = 0; s < splits; ++s) {
        const float* r = recs + s * (headDim + 2);
        if (r[1] > 0.0f) L += r[1] * __expf(r[0] - M);
    }
    const float inv = L > 0.0f ? 1.0f / L : 0.0f;
    for (int32_t d = threadIdx.x; d < headDim; d += blockDim.x) {
        float o = 0.0f;
        for (int s = 0; s < splits; ++s) {
            const float* r = recs + s * (headDim + 2);
            if (r[1] > 0.0f) o += r[2 + d] * __expf(r[0] - M);
        }
        out[th * headDim + d] = o * inv;
    }
}

// --- Prefill: one sequence, consecutive positions, K/V tiles shared by a tile of queries ---
//
// One block of 4 warps per (query tile, KV head): the tile's tokens times the `group` query
// heads of that KV head are the block's rows (at most 32), each warp owning every 4th row.
// The block walks the keys in tiles of kTileK positions up to the tile's last position,
// staging each K/V tile in shared memory once for all rows (K rows padded by one float so
// the lanes, one per key, read different banks); each row keeps an online softmax in
// registers (lanes over headDim for the V sum). K/V are read from memory once per (query
// tile, KV head) instead of once per (token, query head) as in the split kernel.
constexpr int kTileK = 16;
constexpr int kMaxRows = 32;
constexpr int kRowsPerWarp = kMaxRows / kWarps;
constexpr int kPrefillMaxHeadDim = 128;
constexpr int kPrefillPerLane = kPrefillMaxHeadDim / 32;

__global__ void attentionPrefillKernel(const float* q, PagedKv kv, int32_t n, int32_t heads, int32_t group,
                                       int32_t headDim, int32_t tileQ, AttentionRule rule, float* out) {
    extern __shared__ float smem[];
    const int32_t rows = tileQ * group;
    float* qs = smem;                                // (rows, headDim), pre-scaled
    float* ks = qs + rows * headDim;                 // (kTileK, headDim + 1)
    float* vs = ks + kTileK * (headDim + 1);         // (kTileK, headDim)
    const int32_t tile = blockIdx.x, g = blockIdx.y;
    const int32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int32_t t0 = tile * tileQ;
    const int32_t tEnd = t0 + tileQ < n ? t0 + tileQ : n;
    const int32_t seq = kv.seqOfToken[t0];
    const float* keys = kv.keys[seq];
    const float* values = kv.values[seq];
    const int64_t layerBase = static_cast<int64_t>(kv.layer) * kv.cacheBlocks[seq];
    const int32_t* table = kv.tables + kv.tableStart[seq];
    const int64_t lastPos = kv.posOfToken[tEnd - 1];

    // Row r: token t0 + r / group, query head g * group + r % group.
    for (int32_t i = threadIdx.x; i < rows * headDim; i += blockDim.x) {
        const int32_t r = i / headDim, d = i % headDim, t = t0 + r / group;
        qs[i] = t < n ? q[(static_cast<int64_t>(t) * heads + g * group + r % group) * headDim + d] * rule.scale
                      : 0.0f;
    }

    float m[kRowsPerWarp], l[kRowsPerWarp], acc[kRowsPerWarp][kPrefillPerLane];
#pragma unroll
    for (int k = 0; k < kRowsPerWarp; ++k) {
        m[k] = -FLT_MAX;
        l[k] = 0.0f;
#pragma unroll
        for (int i = 0; i < kPrefillPerLane; ++i) acc[k][i] = 0.0f;
    }

    // Key tiles from the one holding the first key the tile's first query sees (0 unless sliding).
    const int64_t firstKey = firstVisibleKey(kv.posOfToken[t0], rule.window);
    for (int64_t j0 = firstKey / kTileK * kTileK; j0 <= lastPos; j0 += kTileK) {
        __syncthreads(); // the previous tile is consumed (and, the first time, q is staged)
        for (int32_t i = threadIdx.x; i < kTileK * headDim; i += blockDim.x) {
            const int32_t j = i / headDim, d = i % headDim;
            const int64_t pos = j0 + j;
            float kvK = 0.0f, kvV = 0.0f;
            if (pos <= lastPos) {
                const int64_t off = ((layerBase + table[pos / kv.blockSize]) * kv.blockSize + pos % kv.blockSize) *
                                        kv.kvDim + g * headDim + d;
                kvK = keys[off];
                kvV = values[off];
            }
            ks[j * (headDim + 1) + d] = kvK;
            vs[j * headDim + d] = kvV;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kRowsPerWarp; ++k) {
            const int32_t r = warp + kWarps * k;
            const int32_t t = t0 + r / group;
            if (r >= rows || t >= n) continue; // warp-uniform
            const int64_t rowPos = kv.posOfToken[t];
            // No key of this tile is visible to the row (warp-uniform): after it, or before its window.
            if (rowPos < j0 || firstVisibleKey(rowPos, rule.window) >= j0 + kTileK) continue;
            // Lane j scores key j0 + j.
            float sc = -FLT_MAX;
            const bool visible = lane < kTileK && keyVisible(rowPos, j0 + lane, rule.window);
            if (visible) {
                float dot = 0.0f;
                for (int32_t d = 0; d < headDim; ++d) dot += qs[r * headDim + d] * ks[lane * (headDim + 1) + d];
                sc = ruleScore(dot, rule);
            }
            const float mNew = fmaxf(m[k], detail::warpMax(sc));
            const float c = __expf(m[k] - mNew); // 0 while m is the -FLT_MAX sentinel
            const float p = visible ? __expf(sc - mNew) : 0.0f;
            l[k] = l[k] * c + detail::warpSum(p);
#pragma unroll
            for (int i = 0; i < kPrefillPerLane; ++i) acc[k][i] *= c;
            for (int j = 0; j < kTileK; ++j) {
                const float pj = __shfl_sync(0xffffffffu, p, j);
#pragma unroll
                for (int i = 0; i < kPrefillPerLane; ++i) {
                    const int32_t d = lane + 32 * i;
                    if (d < headDim) acc[k][i] += pj * vs[j * headDim + d];
                }
            }
            m[k] = mNew;
        }
    }
#pragma unroll
    for (int k = 0; k < kRowsPerWarp; ++k) {
        const int32_t r = warp + kWarps * k;
        const int32_t t = t0 + r / group;
        if (r >= rows || t >= n) continue;
        const float inv = l[k] > 0.0f ? 1.0f / l[k] : 0.0f;
        float* o = out + (static_cast<int64_t>(t) * heads + g * group + r % group) * headDim;
#pragma unroll
        for (int i = 0; i < kPrefillPerLane; ++i) {
            const int32_t d = lane + 32 * i;
            if (d < headDim) o[d] = acc[k][i] * inv;
        }
    }
}

} // namespace

bool prefillAttentionSupported(int32_t heads, int32_t kvHeads, int32_t headDim) {
    return kvHeads >= 1 && heads % kvHeads == 0 && heads / kvHeads <= kMaxRows && headDim >= 1 &&
           headDim <= kPrefillMaxHeadDim;
}

void prefillAttention(const float* q, const PagedKv& kv, int64_t n, int32_t heads, int32_t kvHeads,
                      int32_t headDim, const AttentionRule& rule, float* out, Stream stream) {
    if (n <= 0) return;
    if (!prefillAttentionSupported(heads, kvHeads, headDim))
        throw CudaError("prefillAttention: unsupported heads/KV heads/head dimension (see prefillAttentionSupported)");
    const int32_t group = heads / kvHeads;
    const int32_t tileQ = kMaxRows / group; // >= 1
    const int32_t rows = tileQ * group;
    const size_t smem = static_cast<size_t>(rows * headDim + kTileK * (headDim + 1) + kTileK * headDim) * sizeof(float);
    const dim3 grid(detail::gridFor(n, tileQ), static_cast<unsigned>(kvHeads));
    attentionPrefillKernel<<<grid, kWarps * 32, smem, stream>>>(q, kv, static_cast<int32_t>(n), heads, group, headDim,
                                                                tileQ, rule, out);
    MB_CUDA_CHECK_LAUNCH();
}

int64_t attentionScratchFloats(int64_t n, int32_t heads, int32_t headDim, int32_t splits) {
    return n * heads * splits * (headDim + 2);
}

void attention(const float* q, const PagedKv& kv, int64_t n, int32_t heads, int32_t kvHeads, int32_t headDim,
               const AttentionRule& rule, int32_t splits, float* partial, float* out, Stream stream) {
    if (n <= 0) return;
    if (headDim > kMaxHeadDim || headDim < 1)
        throw CudaError("attention: head dimension " + std::to_string(headDim) + " is outside 1.." +
                        std::to_string(kMaxHeadDim));
    if (kvHeads < 1 || heads % kvHeads != 0) throw CudaError("attention: heads must be a multiple of KV heads");
    if (splits < 1 || n > 65535) throw CudaError("attention: bad split count or too many tokens in one launch");
    const dim3 grid(static_cast<unsigned>(splits), static_cast<unsigned>(heads), static_cast<unsigned>(n));
    attentionSplitKernel<<<grid, kWarps * 32, 0, stream>>>(q, kv, heads, heads / kvHeads, headDim, rule, partial);
    MB_CUDA_CHECK_LAUNCH();
    attentionMergeKernel<<<static_cast<unsigned>(n * heads), 128, 0, stream>>>(partial, heads, headDim, splits, out);
    MB_CUDA_CHECK_LAUNCH();
}

} // namespace mb::kernels::cuda
