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

// y[i] += sum_j a[j] * x[j * ldx + i]: up to 64 elements of y in registers per pass over the
// m rows, one FMA per element and row in order j (the same bits as AVX2's axpyRows).
void axpyRows(const float* a, const float* x, int64_t ldx, int64_t m, float* y, int64_t n);
// axpyRows over F16 rows, converted on load: the same FMAs, so the same bits.
void axpyRowsF16(const float* a, const uint16_t* x, int64_t ldx, int64_t m, float* y, int64_t n);
// VecKernels::axpyRowsQ (axpyRowsQF16): up to 4 queries over each row at once.
void axpyRowsQ(const float* a, int64_t lda, int64_t queries, const float* x, int64_t ldx, int64_t m, float* y,
               int64_t ldy, int64_t n);
void axpyRowsQF16(const float* a, int64_t lda, int64_t queries, const uint16_t* x, int64_t ldx, int64_t m, float* y,
                  int64_t ldy, int64_t n);
// VecKernels::gemmF16AsF32: the F32 tiles reading F16 rows (converting loads, same arithmetic).
void gemmF16AsF32(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows,
                  int64_t tokens, float* y, int64_t ldy);
// VecKernels::scoreRows* and sumRows*: that 1 x 1 tile per (row, head), and per element
// the FMA chain of axpyRows (axpyRowsF16).
// T = float (F32 rows) or uint16_t (F16 rows); instantiated for both in the .cpp only.
template <class T>
void scoreRows(const T* k, int64_t ldk, int64_t m, const float* q, int64_t heads, int64_t firstHead, int64_t group,
               int64_t hd, float* s, int64_t lds);
template <class T>
void sumRows(const float* p, int64_t ldp, const T* v, int64_t ldv, int64_t m, int64_t heads, int64_t firstHead,
             int64_t group, int64_t hd, float* y);

// VecKernels::gemmPanelsF32, defined in gemm_panels_avx512.cpp: outer-product tiles of F32
// panels (kernels/cpu/panels.h).
void gemmPanelsF32(const float* panels, int64_t k, int64_t r0, int64_t r1, const float* x, int64_t ldx,
                   int64_t tokens, float* y, int64_t ldy);
// VecKernels::gemmPanelsF16: the same tiles over F16 panels, converted on load.
void gemmPanelsF16(const uint16_t* panels, int64_t k, int64_t r0, int64_t r1, const float* x, int64_t ldx,
                   int64_t tokens, float* y, int64_t ldy);
// VecKernels::gemmPanelsQ8_0: vpdpbusd outer-product tiles of Q8_0 panels.
void gemmPanelsQ8_0(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_0* x, int64_t ldx,
                    const int32_t* xbias, const float* xscale, int64_t tokens, float* y, int64_t ldy);
// VecKernels::gemmPanelsQ4_0: the same over Q4_0 panels.
void gemmPanelsQ4_0(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_0* x, int64_t ldx,
                    const int32_t* xbias, const float* xscale, int64_t tokens, float* y, int64_t ldy);
// VecKernels::gemmPanelsQ4_K and gemmPanelsQ6_K, defined in gemm_panels_k_avx512.cpp: vpdpbusd
// outer-product tiles of Q4_K and Q6_K panels (kernels/cpu/panels_k.h) with Q8_K activations.
void gemmPanelsQ4_K(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_K* x, int64_t ldx,
                    int64_t tokens, float* y, int64_t ldy);
void gemmPanelsQ6_K(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_K* x, int64_t ldx,
                    int64_t tokens, float* y, int64_t ldy);

} // namespace mb::kernels::avx512
