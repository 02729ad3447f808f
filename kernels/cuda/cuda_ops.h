// Host launchers of the CUDA kernels, callable from code compiled without CUDA headers.
//
// Every pointer is a device pointer unless said otherwise; every launcher enqueues on
// `stream` and returns at once (errors of the launch itself throw CudaError). Shapes are
// (rows, cols) row-major; positions are token indices from 0.
#pragma once

#include "kernels/clip_math.h"
#include "kernels/cuda/device_buffer.h"
#include "kernels/cuda/layer_math.h"
#include "kernels/tensor_type.h"

#include <cstdint>

namespace mb::kernels::cuda {

// A weight matrix in device memory in a GGUF layout: rows of rowBytes(type, cols) bytes of a
// device weight type (kernels/quant_blocks.h's blocks, byte for byte as in the file).
struct DeviceMatrix {
    TensorType type = TensorType::F16;
    int64_t rows = 0;
    int64_t cols = 0;
    const void* data = nullptr;
};

// True when the kernels below can use `type` as weights: every row of the tensor-type table
// but Q8_K (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K ... Q6_K, IQ4_XS), as
// listed by decode::withDecoder (kernels/cuda/block_decode.h). Blocks stay as stored and are
// decoded in registers by each kernel, bit for bit the CPU's traits(type).toFloat.
bool deviceWeightType(TensorType type);

// The first layer's input rows. Token t takes inputs row rowOf[t] as it is (an input
// embedding: an image position) when rowOf is not null and rowOf[t] >= 0; otherwise row ids[t]
// of `table`, dequantised and multiplied by `scale` (gemma2: sqrt(dim); else 1).
struct EmbedArgs {
    DeviceMatrix table;             // (vocab, dim)
    const int32_t* ids = nullptr;   // (n) token ids
    float scale = 1.0f;
    const float* inputs = nullptr;  // (rows given, dim) F32 input embeddings, or null
    const int32_t* rowOf = nullptr; // (n) row of `inputs` per token, -1 = look the id up; or null
};
// x(n, table.cols) F32.
void embedRows(const EmbedArgs& args, int64_t n, float* x, Stream stream);

// For each of n rows of `dim`: when `residual` is not null, x += residual (written back,
// the fused residual add); then out = x / sqrt(mean(x^2) + eps) * weight. out may alias x
// (each element is read and written by the same thread, after the row's sum): per-head Q/K
// norms (rows = tokens x heads, dim = headDim) and post-norms run in place.
void addRmsNorm(float* x, const float* residual, const float* weight, float* out, int64_t n, int64_t dim, float eps,
                Stream stream);

// x[i] += y[i], i < count (the unfused residual add).
void addInPlace(float* x, const float* y, int64_t count, Stream stream);

// Each of `rows` rows of x(rows, width) += bias(width) (qwen2's Q/K/V biases).
void addBiasRows(float* x, const float* bias, int64_t rows, int64_t width, Stream stream);

// gate[i] = silu(gate[i]) * up[i], i < count (SwiGLU; layer_math.h's siluGate).
void siluMul(float* gate, const float* up, int64_t count, Stream stream);
// gate[i] = gelu_tanh(gate[i]) * up[i], i < count (GeGLU, gemma2; layer_math.h's geluTanhGate).
void geluTanhMul(float* gate, const float* up, int64_t count, Stream stream);

// x[i] = cap * tanh(x[i] / cap), i < count, cap > 0 (gemma2's final logit soft-cap).
void softcap(float* x, int64_t count, float cap, Stream stream);

// The paged KV cache of one batch, as device arrays the caller fills before the launch
// (so a captured graph reads the current step's values). Sequence s keeps K in keys[s],
// laid out (layers, cacheBlocks[s], blockSize, kvDim) F32 like engine::KvCache, and maps
// its logical block i to that cache's block tables[tableStart[s] + i]. Token t belongs to
// sequence seqOfToken[t] and sits at position posOfToken[t].
struct PagedKv {
    float* const* keys = nullptr;       // (seqs)
    float* const* values = nullptr;     // (seqs)
    const int32_t* cacheBlocks = nullptr; // (seqs)
    const int32_t* tables = nullptr;    // flat block tables
    const int32_t* tableStart = nullptr; // (seqs)
    const int32_t* seqOfToken = nullptr; // (n)
    const int32_t* posOfToken = nullptr; // (n)
    int32_t blockSize = 16;
    int32_t kvDim = 0;
    int32_t layer = 0;
};

// RoPE on q(n, heads*headDim) and k(n, kvHeads*headDim) in place, rotating for i < ropeDim/2
// the pairs ropePair(form, i) (Norm: (2i, 2i+1); Neox: (i, i + ropeDim/2)) by the angle
// pos * posScale * base^(-2i/ropeDim) / factors[i]. Angles come from the table
// (cosTable/sinTable: (tablePositions, ropeDim/2), the fast profile's precomputation, which
// already holds posScale and the factors) when it is not null, else are computed in double
// precision like kernels::ropeAngles (layer_math.h's ropeCosSin). When `writeKv`, also stores
// the rotated k and v(n, kvDim) into the paged cache (fused).
struct RopeArgs {
    float* q = nullptr;
    float* k = nullptr;
    const float* v = nullptr;
    int64_t n = 0;
    int32_t heads = 0, kvHeads = 0, headDim = 0, ropeDim = 0;
    float base = 10000.0f;
    const float* cosTable = nullptr;
    const float* sinTable = nullptr;
    RopeForm form = RopeForm::Norm;
    float posScale = 1.0f;          // 1 / linear scaling factor
    const float* factors = nullptr; // (ropeDim/2) rope_freqs.weight, or null for all 1
};
void ropeAndStore(const RopeArgs& args, const PagedKv& kv, bool writeKv, Stream stream);

// Copies k and v(n, kvDim) into the paged cache (the unfused KV write).
void storeKv(const float* k, const float* v, int64_t n, const PagedKv& kv, Stream stream);

// Causal grouped-query attention of n query tokens over the paged cache: token t's head h
// attends to positions [0, posOfToken[t]] of its sequence (the last rule.window of them on a
// sliding layer) through KV head h / (heads / kvHeads), with scores scaled and soft-capped by
// `rule`. The visible positions are split into `splits` ranges computed on the device from the
// position (flash-decoding, layer_math.h's splitKeys), each range reduced with an online
// softmax, then merged. q: (n, heads*headDim); out: (n, heads*headDim); partial: scratch of
// attentionScratchFloats(n, heads, headDim, splits) floats. headDim <= 256.
int64_t attentionScratchFloats(int64_t n, int32_t heads, int32_t headDim, int32_t splits);
void attention(const float* q, const PagedKv& kv, int64_t n, int32_t heads, int32_t kvHeads, int32_t headDim,
               const AttentionRule& rule, int32_t splits, float* partial, float* out, Stream stream);

// The same attention for a prefill chunk of ONE sequence: all n tokens belong to sequence
// seqOfToken[0] and sit at consecutive positions posOfToken[0] + i. Queries are taken in
// tiles that share each K/V tile through shared memory (K/V read once per tile and KV head).
// Supported when heads / kvHeads <= 32 and headDim <= 128; otherwise use attention().
bool prefillAttentionSupported(int32_t heads, int32_t kvHeads, int32_t headDim);
void prefillAttention(const float* q, const PagedKv& kv, int64_t n, int32_t heads, int32_t kvHeads,
                      int32_t headDim, const AttentionRule& rule, float* out, Stream stream);

// Decode product: y(n, w.rows) = x(n, w.cols) · W^T for n <= kMatvecMaxTokens, reading each
// weight block once for all n tokens and dequantising in registers (one warp per row; block
// types a 32-element group per lane and step). Each token's sum is accumulated in the same
// order whatever n is. Precondition: w.cols a multiple of the type's block size.
constexpr int64_t kMatvecMaxTokens = 8;
void matvec(const DeviceMatrix& w, const float* x, int64_t n, float* y, Stream stream);

// W (rows, cols) of any device weight type -> dst (rows, cols) __half (for cuBLAS): the CPU's
// dequantised value rounded to nearest even.
void dequantizeToF16(const DeviceMatrix& w, void* dst, Stream stream);
// x (count) F32 -> dst (count) __half.
void convertToF16(const float* x, void* dst, int64_t count, Stream stream);

// out[r] = argmax of logits row r (n rows of vocab), the first index on ties.
void argmaxRows(const float* logits, int64_t n, int64_t vocab, int32_t* out, Stream stream);
// out[r] = a token drawn from softmax(logits row r / temperature) with the uniform number
// uniforms[r] in [0, 1): the first index whose cumulative probability exceeds u.
// temperature > 0.
void sampleRows(const float* logits, int64_t n, int64_t vocab, float temperature, const float* uniforms,
                int32_t* out, Stream stream);

// ---- The CLIP vision encoder (engine/cuda_clip.cpp; kernels/cuda/clip.cu, clip_blas.cpp) ----
// Activations are (tokens, width) F32 row-major; the elementwise math is kernels/clip_math.h.

// cols (patches, 3 * P * P) = im2col of chw (3, S, S): row py * G + px (G = S / P), column
// c * P * P + kh * P + kw, the layout of the patch-embedding weight's rows.
void patchColumns(const float* chw, int32_t imageSize, int32_t patchSize, float* cols, Stream stream);
// x (patches + 1, hidden): row 0 = classEmbd, rows 1.. (the patch products) += patchBias (may be
// null); then every row += pos (patches + 1, hidden).
void clipEmbeddings(float* x, const float* classEmbd, const float* patchBias, const float* pos, int64_t patches,
                    int64_t hidden, Stream stream);
// y (n, width) = LayerNorm of each row of x with statistics in double, then * w + b (width
// each) through clip::layerNormValue. y may equal x.
void layerNorm(const float* x, const float* w, const float* b, float* y, int64_t n, int64_t width, float eps,
               Stream stream);
// y (n, width) += b (width) on every row.
void addBias(float* y, const float* b, int64_t n, int64_t width, Stream stream);
// x[i] = clip::activate(act, x[i]), i < count.
void applyActivation(float* x, int64_t count, clip::Activation act, Stream stream);
// Softmax of each of `rows` rows of `cols` floats, in place (max and exponentials in float,
// their sum in double, then each times (float)(1 / sum)).
void softmaxRows(float* s, int64_t rows, int64_t cols, Stream stream);

// y (n, rows) = x (n, cols) · W (rows, cols)^T, F32 in and out (cublasSgemm).
void gemmF32(const BlasHandle& blas, const float* w, int64_t rows, int64_t cols, const float* x, int64_t n, float* y);
// Non-causal multi-head attention's products over n tokens of q, k, v (n, heads * headDim),
// head h being features h * headDim ...: scores (heads, n, n)[h][i][j] = scale * q_h[i] · k_h[j]
// (one strided-batched SGEMM), and out (n, heads * headDim) = p_h · v_h per head, with
// p (heads, n, n) the softmaxed scores.
void attentionScores(const BlasHandle& blas, const float* q, const float* k, int64_t n, int32_t heads,
                     int32_t headDim, float scale, float* scores);
void attentionValues(const BlasHandle& blas, const float* p, const float* v, int64_t n, int32_t heads,
                     int32_t headDim, float* out);

} // namespace mb::kernels::cuda
