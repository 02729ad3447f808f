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

} // namespace mb::kernels::avx512
