// Transformer row operations; the inner products go through the dispatched vector kernels.
#include "kernels/cpu/ops.h"

#include "kernels/cpu/vec.h"

#include <algorithm>
#include <cmath>

namespace mb::kernels {

void rmsNorm(const float* x, const float* weight, float* out, int64_t n, float eps) {
    double ss = 0.0;
    for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float scale = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(n)) + eps);
    for (int64_t i = 0; i < n; ++i) out[i] = x[i] * scale * weight[i];
}

void softmax(float* x, int64_t n) {
    softmaxScaled(x, n, 1.0f);
}

void softmaxScaled(float* x, int64_t n, float scale) {
    if (n <= 0) return;
    const VecKernels& vk = vecKernels();
    const float m = vk.scaleMax(x, n, scale);
    const float inv = 1.0f / vk.expShiftSum(x, n, m);
    for (int64_t i = 0; i < n; ++i) x[i] *= inv; // vectorised by the compiler
}

void siluMul(float* gate, const float* up, int64_t n) {
    vecKernels().siluMul(gate, up, n);
}

void addInPlace(float* x, const float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void geluTanhMul(float* gate, const float* up, int64_t n) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    for (int64_t i = 0; i < n; ++i) {
        const float v = gate[i];
        gate[i] = 0.5f * v * (1.0f + std::tanh(kSqrt2OverPi * (v + 0.044715f * v * v * v))) * up[i];
    }
}

void softcap(float* x, int64_t n, float cap) {
    for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

void addBiasRows(float* x, const float* bias, int64_t rows, int64_t width) {
    for (int64_t r = 0; r < rows; ++r) addInPlace(x + r * width, bias, width);
}

void ropeAngles(int64_t pos, int64_t rotDim, float base, float* cosOut, float* sinOut, float posScale,
                const float* factors) {
    for (int64_t i = 0; i < rotDim / 2; ++i) {
        const double freq = std::pow(static_cast<double>(base), -2.0 * static_cast<double>(i) /
                                                                    static_cast<double>(rotDim));
        double angle = static_cast<double>(pos) * freq;
        if (posScale != 1.0f) angle *= static_cast<double>(posScale);
        if (factors) angle /= static_cast<double>(factors[i]);
        cosOut[i] = static_cast<float>(std::cos(angle));
        sinOut[i] = static_cast<float>(std::sin(angle));
    }
}

void ropeApply(float* x, int64_t heads, int64_t headDim, int64_t rotDim, const float* cosv,
               const float* sinv) {
    for (int64_t h = 0; h < heads; ++h) {
        float* v = x + h * headDim;
        for (int64_t i = 0; i < rotDim / 2; ++i) {
            const float a = v[2 * i], b = v[2 * i + 1];
            v[2 * i] = a * cosv[i] - b * sinv[i];
            v[2 * i + 1] = a * sinv[i] + b * cosv[i];
        }
    }
}

void ropeApplyNeox(float* x, int64_t heads, int64_t headDim, int64_t rotDim, const float* cosv,
                   const float* sinv) {
    const int64_t half = rotDim / 2;
    for (int64_t h = 0; h < heads; ++h) {
        float* v = x + h * headDim;
        for (int64_t i = 0; i < half; ++i) {
            const float a = v[i], b = v[i + half];
            v[i] = a * cosv[i] - b * sinv[i];
            v[i + half] = a * sinv[i] + b * cosv[i];
        }
    }
}

void attentionWeights(float* scores, int64_t len, const ScoreRule& rule) {
    if (rule.softcap <= 0 && (rule.window <= 0 || rule.window >= len)) {
        softmaxScaled(scores, len, rule.scale);
        return;
    }
    const int64_t first = rule.window > 0 && rule.window < len ? len - rule.window : 0;
    std::fill(scores, scores + first, 0.0f);
    float* s = scores + first;
    const int64_t n = len - first;
    if (rule.softcap > 0) {
        for (int64_t j = 0; j < n; ++j) s[j] = rule.softcap * std::tanh(s[j] * rule.scale / rule.softcap);
        softmax(s, n);
    } else {
        softmaxScaled(s, n, rule.scale);
    }
}

void attendPaged(const float* q, const float* const* kBlocks, const float* const* vBlocks,
                 int64_t blockSize, int64_t len, int64_t stride, int64_t headOffset,
                 int64_t headDim, const ScoreRule& rule, float* scores, float* out) {
    attendPagedRun(q, 0, 1, kBlocks, vBlocks, blockSize, len, stride, headOffset, headDim, rule, scores, 0, out, 0);
}

namespace {
// The VecKernels entries attention uses, per K/V element type (called as (vk.*entry)(...)):
// a block's key scores, its V sum for one query and for several, and a decode token's
// whole-row scores and sums.
template <class T> struct KvKernels;
template <> struct KvKernels<float> {
    static constexpr auto scores = &VecKernels::gemmF32;
    static constexpr auto sum = &VecKernels::axpyRows;
    static constexpr auto sums = &VecKernels::axpyRowsQ;
    static constexpr auto scoreRows = &VecKernels::scoreRowsF32;
    static constexpr auto sumRows = &VecKernels::sumRowsF32;
};
template <> struct KvKernels<uint16_t> {
    static constexpr auto scores = &VecKernels::gemmF16AsF32;
    static constexpr auto sum = &VecKernels::axpyRowsF16;
    static constexpr auto sums = &VecKernels::axpyRowsQF16;
    static constexpr auto scoreRows = &VecKernels::scoreRowsF16;
    static constexpr auto sumRows = &VecKernels::sumRowsF16;
};

template <class T>
void attendRun(const float* q, int64_t qStride, int64_t queries, const T* const* kBlocks, const T* const* vBlocks,
               int64_t blockSize, int64_t len, int64_t stride, int64_t headOffset, int64_t headDim, const ScoreRule& rule,
               float* scores, int64_t scoreStride, float* out, int64_t outStride) {
    // Each block's keys against all queries at once: a gemm over `n` key rows `stride` apart
    // and the queries as its tokens, so a key loaded once serves up to 6 queries (a query that
    // must not see a key gets a score it never uses). Then per query the softmax over its own
    // keys and the weighted sum of V rows, block by block with every query's output in turn,
    // so a block's V rows stay in L1 meanwhile. Each query's scores and output are the same
    // bits as attendPaged on that query alone (gemm tiles equal single dots).
    const VecKernels& vk = vecKernels();
    const int64_t lenAll = len + queries - 1; // keys the last query sees
    for (int64_t j0 = 0, b = 0; j0 < lenAll; j0 += blockSize, ++b) {
        const int64_t n = std::min(blockSize, lenAll - j0);
        (vk.*KvKernels<T>::scores)(kBlocks[b] + headOffset, stride, q, qStride, headDim, n, queries, scores + j0,
                                   scoreStride);
    }
    for (int64_t t = 0; t < queries; ++t) {
        attentionWeights(scores + t * scoreStride, len + t, rule);
        std::fill(out + t * outStride, out + t * outStride + headDim, 0.0f);
    }
    for (int64_t j0 = 0, b = 0; j0 < lenAll; j0 += blockSize, ++b) {
        if (j0 + blockSize <= len) { // every query sees the whole block: one pass for all
            (vk.*KvKernels<T>::sums)(scores + j0, scoreStride, queries, vBlocks[b] + headOffset, stride, blockSize,
                                     out, outStride, headDim);
            continue;
        }
        for (int64_t t = 0; t < queries; ++t) {
            const int64_t n = std::min(blockSize, len + t - j0);
            if (n > 0)
                (vk.*KvKernels<T>::sum)(scores + t * scoreStride + j0, vBlocks[b] + headOffset, stride, n,
                                        out + t * outStride, headDim);
        }
    }
}
} // namespace

void attendPagedRun(const float* q, int64_t qStride, int64_t queries, const float* const* kBlocks,
                    const float* const* vBlocks, int64_t blockSize, int64_t len, int64_t stride, int64_t headOffset,
                    int64_t headDim, const ScoreRule& rule, float* scores, int64_t scoreStride, float* out, int64_t outStride) {
    attendRun(q, qStride, queries, kBlocks, vBlocks, blockSize, len, stride, headOffset, headDim, rule, scores,
              scoreStride, out, outStride);
}

void attendPagedRun(const float* q, int64_t qStride, int64_t queries, const uint16_t* const* kBlocks,
                    const uint16_t* const* vBlocks, int64_t blockSize, int64_t len, int64_t stride,
                    int64_t headOffset, int64_t headDim, const ScoreRule& rule, float* scores, int64_t scoreStride, float* out,
                    int64_t outStride) {
    attendRun(q, qStride, queries, kBlocks, vBlocks, blockSize, len, stride, headOffset, headDim, rule, scores,
              scoreStride, out, outStride);
}

namespace {
template <class T>
void attendHeads(const float* q, int64_t heads, int64_t firstHead, int64_t group, const T* const* kBlocks,
                 const T* const* vBlocks, int64_t blockSize, int64_t len, int64_t stride, int64_t headDim, const ScoreRule& rule,
                 float* scores, int64_t scoreStride, float* out) {
    // attendRun's three phases for one query, each over whole rows for all the heads: every
    // key row's scores, each head's softmax, then every value row's contribution.
    const VecKernels& vk = vecKernels();
    for (int64_t j0 = 0, b = 0; j0 < len; j0 += blockSize, ++b)
        (vk.*KvKernels<T>::scoreRows)(kBlocks[b], stride, std::min(blockSize, len - j0), q, heads, firstHead, group,
                                      headDim, scores + j0, scoreStride);
    for (int64_t h = 0; h < heads; ++h) attentionWeights(scores + h * scoreStride, len, rule);
    std::fill(out, out + heads * headDim, 0.0f);
    for (int64_t j0 = 0, b = 0; j0 < len; j0 += blockSize, ++b)
        (vk.*KvKernels<T>::sumRows)(scores + j0, scoreStride, vBlocks[b], stride, std::min(blockSize, len - j0), heads,
                                    firstHead, group, headDim, out);
}
} // namespace

void attendPagedHeads(const float* q, int64_t heads, int64_t firstHead, int64_t group, const float* const* kBlocks,
                      const float* const* vBlocks, int64_t blockSize, int64_t len, int64_t stride, int64_t headDim,
                      const ScoreRule& rule, float* scores, int64_t scoreStride, float* out) {
    attendHeads(q, heads, firstHead, group, kBlocks, vBlocks, blockSize, len, stride, headDim, rule, scores,
                scoreStride, out);
}

void attendPagedHeads(const float* q, int64_t heads, int64_t firstHead, int64_t group, const uint16_t* const* kBlocks,
                      const uint16_t* const* vBlocks, int64_t blockSize, int64_t len, int64_t stride, int64_t headDim,
                      const ScoreRule& rule, float* scores, int64_t scoreStride, float* out) {
    attendHeads(q, heads, firstHead, group, kBlocks, vBlocks, blockSize, len, stride, headDim, rule, scores,
                scoreStride, out);
}

} // namespace mb::kernels
