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
    if (n <= 0) return;
    const float m = *std::max_element(x, x + n);
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - m);
        sum += x[i];
    }
    const float inv = 1.0f / sum;
    for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void siluMul(float* gate, const float* up, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
        const float g = gate[i];
        gate[i] = g / (1.0f + std::exp(-g)) * up[i];
    }
}

void addInPlace(float* x, const float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void ropeAngles(int64_t pos, int64_t rotDim, float base, float* cosOut, float* sinOut) {
    for (int64_t i = 0; i < rotDim / 2; ++i) {
        const double freq = std::pow(static_cast<double>(base), -2.0 * static_cast<double>(i) /
                                                                    static_cast<double>(rotDim));
        const double angle = static_cast<double>(pos) * freq;
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

void attendPaged(const float* q, const float* const* kBlocks, const float* const* vBlocks,
                 int64_t blockSize, int64_t len, int64_t stride, int64_t headOffset,
                 int64_t headDim, float scale, float* scores, float* out) {
    // q against each block's keys: a one-token gemm over `n` key rows `stride` apart
    // (tiles of 8 keys); then the softmax-weighted sum of each block's V rows, with the
    // output kept in registers across the rows of a block.
    const VecKernels& vk = vecKernels();
    for (int64_t j0 = 0, b = 0; j0 < len; j0 += blockSize, ++b) {
        const int64_t n = std::min(blockSize, len - j0);
        vk.gemmF32(kBlocks[b] + headOffset, stride, q, 0, headDim, n, 1, scores + j0, 1);
        for (int64_t j = 0; j < n; ++j) scores[j0 + j] *= scale;
    }
    softmax(scores, len);
    std::fill(out, out + headDim, 0.0f);
    for (int64_t j0 = 0, b = 0; j0 < len; j0 += blockSize, ++b) {
        const int64_t n = std::min(blockSize, len - j0);
        vk.axpyRows(scores + j0, vBlocks[b] + headOffset, stride, n, out, headDim);
    }
}

} // namespace mb::kernels
