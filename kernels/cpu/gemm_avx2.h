// Register-tiled AVX2 matrix products, defined in gemm_avx2.cpp and gemm_panels_avx2.cpp (the only
// callers are the AVX2 vector table).
#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>

// Declarations only: no intrinsics here, so any file may include this. Call only when the
// CPU has AVX2+FMA+F16C. Parameters as in VecKernels::gemm* (kernels/cpu/vec.h).
namespace mb::kernels::avx2 {

void gemmF32(const float* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows,
             int64_t tokens, float* y, int64_t ldy);
void gemmF16(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows,
             int64_t tokens, float* y, int64_t ldy);
void gemmQ8_0(const BlockQ8_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void gemmQ4_0(const BlockQ4_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy);
void axpyRows(const float* a, const float* x, int64_t ldx, int64_t m, float* y, int64_t n);
// axpyRows over F16 rows, converted on load: the same FMAs, so the same bits.
void axpyRowsF16(const float* a, const uint16_t* x, int64_t ldx, int64_t m, float* y, int64_t n);
// VecKernels::scoreRows* and sumRows*: this file's 1 x 1 float tile per (row, head) (F16 is
// the F32 tile with converting loads, so gemmF16 serves as gemmF16AsF32), and per element
// the FMA chain of axpyRows (axpyRowsF16).
// T = float (F32 rows) or uint16_t (F16 rows); instantiated for both in the .cpp only.
template <class T>
void scoreRows(const T* k, int64_t ldk, int64_t m, const float* q, int64_t heads, int64_t firstHead, int64_t group,
               int64_t hd, float* s, int64_t lds);
template <class T>
void sumRows(const float* p, int64_t ldp, const T* v, int64_t ldv, int64_t m, int64_t heads, int64_t firstHead,
             int64_t group, int64_t hd, float* y);

// VecKernels::gemmPanelsQ4_0 and gemmPanelsQ8_0 over the AVX-512 table's panel layouts, defined
// in gemm_panels_avx2.cpp: vpmaddubsw outer products, the same bits as AVX-512's (Q8_0: for
// activation bytes other than -128, which quantizeRowQ8_0 never writes).
void gemmPanelsQ4_0(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_0* x, int64_t ldx,
                    const int32_t* xbias, const float* xscale, int64_t tokens, float* y, int64_t ldy);
void gemmPanelsQ8_0(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_0* x, int64_t ldx,
                    const int32_t* xbias, const float* xscale, int64_t tokens, float* y, int64_t ldy);

} // namespace mb::kernels::avx2
