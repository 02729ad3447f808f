// The CLIP encoder's products on cuBLAS in F32: linear layers and the two batched products of attention.
//
// Row-major (r, c) arrays with leading dimension ld are column-major (c, r) arrays with the
// same ld, so each product below is written as the transposed column-major one. The handle's
// default math mode keeps F32 GEMMs in F32 (no TF32 unless NVIDIA_TF32_OVERRIDE says so).
#include "kernels/cuda/cuda_check.h"
#include "kernels/cuda/cuda_ops.h"

#include <cublas_v2.h>

namespace mb::kernels::cuda {

void gemmF32(const BlasHandle& blas, const float* w, int64_t rows, int64_t cols, const float* x, int64_t n, float* y) {
    // y^T (rows, n) = op_T(W^T) (rows, cols) · x^T (cols, n); see gemmF16.
    const float alpha = 1.0f, beta = 0.0f;
    MB_CUBLAS_CHECK(cublasSgemm(blas.get(), CUBLAS_OP_T, CUBLAS_OP_N, static_cast<int>(rows), static_cast<int>(n),
                                static_cast<int>(cols), &alpha, w, static_cast<int>(cols), x, static_cast<int>(cols),
                                &beta, y, static_cast<int>(rows)));
}

void attentionScores(const BlasHandle& blas, const float* q, const float* k, int64_t n, int32_t heads,
                     int32_t headDim, float scale, float* scores) {
    // Per head h: S_h^T (n_keys, n_queries) = op_T(K_h^T) · Q_h^T, where K_h^T and Q_h^T are the
    // column-major views (headDim, n) at column offset h * headDim with ld = heads * headDim.
    const int ld = heads * headDim, nn = static_cast<int>(n);
    const float beta = 0.0f;
    MB_CUBLAS_CHECK(cublasSgemmStridedBatched(blas.get(), CUBLAS_OP_T, CUBLAS_OP_N, nn, nn, headDim, &scale, k, ld,
                                              headDim, q, ld, headDim, &beta, scores, nn,
                                              static_cast<long long>(n) * n, heads));
}

void attentionValues(const BlasHandle& blas, const float* p, const float* v, int64_t n, int32_t heads,
                     int32_t headDim, float* out) {
    // Per head h: O_h^T (headDim, n) = V_h^T (headDim, n_keys) · P_h^T (n_keys, n), V and O at
    // column offset h * headDim with ld = heads * headDim, P_h the row-major (n, n) block h.
    const int ld = heads * headDim, nn = static_cast<int>(n);
    const float alpha = 1.0f, beta = 0.0f;
    MB_CUBLAS_CHECK(cublasSgemmStridedBatched(blas.get(), CUBLAS_OP_N, CUBLAS_OP_N, headDim, nn, nn, &alpha, v, ld,
                                              headDim, p, nn, static_cast<long long>(n) * n, &beta, out, ld, headDim,
                                              heads));
}

} // namespace mb::kernels::cuda
