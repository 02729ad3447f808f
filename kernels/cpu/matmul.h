// Matrix products of activations with weight matrices of any supported type, split across threads.
#pragma once

#include "kernels/cpu/thread_pool.h"
#include "kernels/tensor_type.h"

#include <cstdint>
#include <span>
#include <vector>

namespace mb::kernels {

// A row-major weight matrix in its stored type: `rows` rows of `cols` elements, each row
// rowBytes(type, cols) bytes, rows contiguous. Non-owning.
struct WeightMatrix {
    TensorType type = TensorType::F32;
    int64_t rows = 0;
    int64_t cols = 0;
    const void* data = nullptr;
    // Optional, F32, F16, Q8_0, Q4_0, Q4_K and Q6_K only: the same matrix as 16-row panels
    // (kernels/cpu/panels.h: packPanels; owned by whoever made them). When set and the kernel
    // table has the type's gemmPanels*, matmul multiplies the panels (outer products; other
    // bits than the rows' dot products, the same for any batch); the rows stay the matrix's
    // definition (and what every other reader uses).
    const void* panels = nullptr;

    const uint8_t* row(int64_t r) const {
        return static_cast<const uint8_t*>(data) + static_cast<size_t>(r) * rowBytes(type, cols);
    }
    size_t bytes() const { return static_cast<size_t>(rows) * rowBytes(type, cols); }
};

// Reusable buffers for matmul (the quantised activations). Owned by one caller; grows
// to the largest product seen and is never shrunk, so the hot path does not allocate.
struct MatmulScratch {
    // The caller's choice, kept with its buffers: multiply every quantised matrix as its
    // dequantised F32 rows times unquantised activations (the weights' error alone, for
    // references and precision checks; slower), instead of the integer kernels.
    bool f32Activations = false;
    std::vector<BlockQ8_0> xq;
    std::vector<BlockQ8_K> xk; // for k-quant weights
    std::vector<int32_t> xbias; // prepareQ8Panels of xq, for Q8_0 panels
    std::vector<float> xscale;
    std::vector<Q8Sums> xsum; // activationSums of xq, for Q4_1, Q5_0, Q5_1 and IQ4_NL weights
};

// y[t, r] = sum_k x[t, k] * W[r, k] for t in [0, n), r in [0, W.rows).
// x: (n, W.cols) F32 row-major; y: (n, W.rows) F32 row-major, ld = W.rows.
// The 32-element formats (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL) multiply activations quantised
// to Q8_0, the k-quants and IQ4_XS activations quantised to Q8_K, with integer dot products;
// float weights multiply F32 activations. Rows of W are split across the
// pool's threads; each thread runs register-tiled kernels (several rows x several tokens
// per tile) with its slice of rows held in cache, so a weight row is read from memory once
// for all n tokens, which is what makes prefill and batched decode cheaper per token than
// single-token decode. Results are bitwise
// independent of the thread count and of n's grouping (one token gives the same bits as
// the same token inside a batch).
void matmul(const WeightMatrix& w, const float* x, int64_t n, float* y, ThreadPool& pool,
            MatmulScratch& scratch);

// Several products of the same activations in one pass over the pool (one wake-up
// instead of one per matrix): ys[i] = x · ws[i]^T. All matrices share `cols`; types may
// differ. Results are identical to separate matmul calls.
void matmulGroup(std::span<const WeightMatrix> ws, const float* x, int64_t n, std::span<float* const> ys,
                 ThreadPool& pool, MatmulScratch& scratch);

// The same product computed with the portable kernels on one thread: the reference.
void matmulReference(const WeightMatrix& w, const float* x, int64_t n, float* y);

} // namespace mb::kernels
