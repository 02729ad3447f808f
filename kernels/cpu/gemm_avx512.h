// Register-tiled AVX-512 (+VNNI) matrix products, defined in gemm_avx512.cpp (the only caller is
// the AVX-512 vector table, vec_avx512.cpp).
#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>

// Declarations only: no intrinsics here, so any file may include this. Call only when
// cpuFeatures().hasAvx512Set(). Parameters as in VecKernels::gemm* (kernels/cpu/vec.h).
namespace mb::kernels::avx512 {

void gemmF32(const float* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows,
             int64_t tokens, float* y, int64_t ldy);
void gemmF16(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows,
             int64_t tokens, float* y, int64_t ldy);
void gemmQ8_0(const BlockQ8_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void gemmQ4_0(const BlockQ4_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);

// y[i] += sum_j a[j] * x[j * ldx + i]: up to 128 elements of y in registers per pass over the
// m rows, one FMA per element and row in order j (the same bits as AVX2's axpyRows).
void axpyRows(const float* a, const float* x, int64_t ldx, int64_t m, float* y, int64_t n);
// axpyRows over F16 rows, converted on load: the same FMAs, so the same bits.
void axpyRowsF16(const float* a, const uint16_t* x, int64_t ldx, int64_t m, float* y, int64_t n);

} // namespace mb::kernels::avx512
