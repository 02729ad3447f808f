// Elementwise and row operations of the transformer: RMSNorm, softmax, SiLU gating, RoPE, attention.
#pragma once

#include <cstdint>

namespace mb::kernels {

// out[i] = x[i] / sqrt(mean(x^2) + eps) * weight[i], i < n. out may alias x.
void rmsNorm(const float* x, const float* weight, float* out, int64_t n, float eps);

// In place, numerically stable (max subtracted).
void softmax(float* x, int64_t n);
// softmax of x[i] * scale, in place (attention's scaled scores): the same bits as scaling
// first, then softmax.
void softmaxScaled(float* x, int64_t n, float scale);

// gate[i] = silu(gate[i]) * up[i], silu(v) = v / (1 + exp(-v)).
void siluMul(float* gate, const float* up, int64_t n);
// gate[i] = gelu(gate[i]) * up[i] with the tanh form of GELU (Gemma's GeGLU), computed exactly
// in float: gelu(v) = 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))).
void geluTanhMul(float* gate, const float* up, int64_t n);

// x[i] = cap * tanh(x[i] / cap): Gemma 2's logit soft-capping.
void softcap(float* x, int64_t n, float cap);

// Each of `rows` rows of `width` floats += bias(width).
void addBiasRows(float* x, const float* bias, int64_t rows, int64_t width);

// x[i] += y[i]
void addInPlace(float* x, const float* y, int64_t n);

// RoPE angles for one position: cos/sin of pos * posScale * base^(-2i/rotDim) / factors[i]
// for i < rotDim/2 (factors: rope_freqs.weight, or null for all 1). cosOut, sinOut: rotDim/2
// floats each.
void ropeAngles(int64_t pos, int64_t rotDim, float base, float* cosOut, float* sinOut, float posScale = 1.0f,
                const float* factors = nullptr);

// Rotates adjacent pairs (2i, 2i+1), i < rotDim/2, of each of `heads` vectors of
// `headDim` floats laid out back to back (the GGUF llama convention).
void ropeApply(float* x, int64_t heads, int64_t headDim, int64_t rotDim, const float* cosv,
               const float* sinv);
// The NEOX form: rotates the pairs (i, i + rotDim/2), i < rotDim/2 (qwen2, gemma2, phi3).
void ropeApplyNeox(float* x, int64_t heads, int64_t headDim, int64_t rotDim, const float* cosv,
                   const float* sinv);

// How a query's raw scores s_j = q.k_j over keys j <= p (its own position) become softmax
// weights: s * scale, then cap * tanh(s / cap) when softcap > 0 (Gemma 2), then keys with
// p - j >= window get weight exactly 0 when window > 0 (sliding-window layers). A float
// converts to the plain rule, whose weights are softmaxScaled's bits.
struct ScoreRule {
    float scale = 1.0f;
    float softcap = 0.0f;
    int64_t window = 0;
    ScoreRule(float s = 1.0f, float cap = 0.0f, int64_t w = 0) : scale(s), softcap(cap), window(w) {} // NOLINT
};
// scores(len) of a query at position len - 1 -> its weights, in place.
void attentionWeights(float* scores, int64_t len, const ScoreRule& rule);

// One head of causal attention over `len` cached positions stored in blocks of
// `blockSize` positions: position j lives at kBlocks[j / blockSize] + (j % blockSize) *
// stride + headOffset (likewise for V). out(headDim) = sum_j softmax_j(scale * q.k_j) v_j.
// scores: scratch of len floats.
void attendPaged(const float* q, const float* const* kBlocks, const float* const* vBlocks,
                 int64_t blockSize, int64_t len, int64_t stride, int64_t headOffset,
                 int64_t headDim, const ScoreRule& rule, float* scores, float* out);

// attendPaged for a run of `queries` consecutive positions of one sequence and head: query t
// (q + t * qStride) sees positions [0, len + t) and writes out + t * outStride. scores:
// scratch of queries * scoreStride floats, scoreStride >= len + queries - 1. Each query's
// output is bit for bit attendPaged's for it alone; the run shares key and value loads.
void attendPagedRun(const float* q, int64_t qStride, int64_t queries, const float* const* kBlocks,
                    const float* const* vBlocks, int64_t blockSize, int64_t len, int64_t stride, int64_t headOffset,
                    int64_t headDim, const ScoreRule& rule, float* scores, int64_t scoreStride, float* out, int64_t outStride);
// The same over an F16 cache (PRODUCT.md's `mixed` and `f16` keep K/V in F16): bit for bit
// the F32 version on the K/V converted to F32 (VecKernels::gemmF16AsF32, axpyRowsF16).
void attendPagedRun(const float* q, int64_t qStride, int64_t queries, const uint16_t* const* kBlocks,
                    const uint16_t* const* vBlocks, int64_t blockSize, int64_t len, int64_t stride,
                    int64_t headOffset, int64_t headDim, const ScoreRule& rule, float* scores, int64_t scoreStride, float* out,
                    int64_t outStride);

// One query (a decode step) for `heads` consecutive query heads at once: query head
// firstHead + h reads q + h * headDim and kv head (firstHead + h) / group, and writes
// out + h * headDim; scores: scratch of heads * scoreStride floats, scoreStride >= len.
// Keys and values are read a whole position at a time (VecKernels::scoreRows*, sumRows*),
// which the prefetchers follow where one head's slices of every position they do not; each
// head's output is bit for bit attendPagedRun's for that head alone. F32 and F16 caches.
void attendPagedHeads(const float* q, int64_t heads, int64_t firstHead, int64_t group, const float* const* kBlocks,
                      const float* const* vBlocks, int64_t blockSize, int64_t len, int64_t stride, int64_t headDim,
                      const ScoreRule& rule, float* scores, int64_t scoreStride, float* out);
void attendPagedHeads(const float* q, int64_t heads, int64_t firstHead, int64_t group, const uint16_t* const* kBlocks,
                      const uint16_t* const* vBlocks, int64_t blockSize, int64_t len, int64_t stride, int64_t headDim,
                      const ScoreRule& rule, float* scores, int64_t scoreStride, float* out);

} // namespace mb::kernels
