// Portable scalar versions of the vector kernels: the reference every SIMD path is tested against.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/gemm_panel.h"
#include "kernels/cpu/kquant_dot.h"
#include "kernels/cpu/quant_legacy.h"
#include "kernels/cpu/vec.h"

#include <cmath>

namespace mb::kernels {

namespace {

float dotF32(const float* w, const float* x, int64_t n) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s += w[i] * x[i];
    return s;
}

float dotF16(const uint16_t* w, const float* x, int64_t n) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s += fp16ToFloat(w[i]) * x[i];
    return s;
}

float dotBF16(const uint16_t* w, const float* x, int64_t n) {
    float s = 0.0f;
    for (int64_t i = 0; i < n; ++i) s += bf16ToFloat(w[i]) * x[i];
    return s;
}

float dotQ8_0(const BlockQ8_0* w, const BlockQ8_0* x, int64_t nb) {
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t acc = 0;
        for (int j = 0; j < kQ8_0BlockSize; ++j) acc += w[b].qs[j] * x[b].qs[j];
        s += fp16ToFloat(w[b].d) * fp16ToFloat(x[b].d) * static_cast<float>(acc);
    }
    return s;
}

float dotQ4_0(const BlockQ4_0* w, const BlockQ8_0* x, int64_t nb) {
    constexpr int kHalf = kQ4_0BlockSize / 2;
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t acc = 0;
        for (int j = 0; j < kHalf; ++j) {
            acc += ((w[b].qs[j] & 0x0f) - 8) * x[b].qs[j];
            acc += ((w[b].qs[j] >> 4) - 8) * x[b].qs[j + kHalf];
        }
        s += fp16ToFloat(w[b].d) * fp16ToFloat(x[b].d) * static_cast<float>(acc);
    }
    return s;
}

void axpy(float a, const float* x, float* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}

// The portable matrix products are single dots in a loop: the reference the tiles are tested against.
template <class W, class X, class Dot>
void gemm(Dot dot, const W* w, int64_t ldw, const X* x, int64_t ldx, int64_t k, int64_t rows,
          int64_t tokens, float* y, int64_t ldy) {
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t r = 0; r < rows; ++r) y[t * ldy + r] = dot(w + r * ldw, x + t * ldx, k);
}
void gemmF32(const float* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows,
             int64_t tokens, float* y, int64_t ldy) {
    gemm(dotF32, w, ldw, x, ldx, k, rows, tokens, y, ldy);
}
void gemmF16(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows,
             int64_t tokens, float* y, int64_t ldy) {
    gemm(dotF16, w, ldw, x, ldx, k, rows, tokens, y, ldy);
}
void gemmQ8_0(const BlockQ8_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(dotQ8_0, w, ldw, x, ldx, nb, rows, tokens, y, ldy);
}
void gemmQ4_0(const BlockQ4_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(dotQ4_0, w, ldw, x, ldx, nb, rows, tokens, y, ldy);
}
void axpyRows(const float* a, const float* x, int64_t ldx, int64_t m, float* y, int64_t n) {
    for (int64_t j = 0; j < m; ++j) axpy(a[j], x + j * ldx, y, n);
}
void axpyRowsF16(const float* a, const uint16_t* x, int64_t ldx, int64_t m, float* y, int64_t n) {
    for (int64_t j = 0; j < m; ++j)
        for (int64_t i = 0; i < n; ++i) y[i] += a[j] * fp16ToFloat(x[j * ldx + i]); // as axpy
}
void toF16(const float* x, uint16_t* y, int64_t n) {
    quantizeRow(TensorType::F16, x, y, n);
}
// One kernel for both K/V types: Dot is the gemm's dot (dotF16 is dotF32 on the converted
// row: the same loop, an exact conversion, so the F16 gemm is already gemmF16AsF32) and
// Axpy the axpyRows of that type.
template <class T, float (*Dot)(const T*, const float*, int64_t)>
void scoreRowsOf(const T* k, int64_t ldk, int64_t m, const float* q, int64_t heads, int64_t firstHead, int64_t group,
                 int64_t hd, float* s, int64_t lds) {
    for (int64_t j = 0; j < m; ++j)
        for (int64_t h = 0; h < heads; ++h) s[h * lds + j] = Dot(k + j * ldk + (firstHead + h) / group * hd, q + h * hd, hd);
}
template <class T, void (*Axpy)(const float*, const T*, int64_t, int64_t, float*, int64_t)>
void sumRowsOf(const float* p, int64_t ldp, const T* v, int64_t ldv, int64_t m, int64_t heads, int64_t firstHead,
               int64_t group, int64_t hd, float* y) {
    for (int64_t j = 0; j < m; ++j)
        for (int64_t h = 0; h < heads; ++h) Axpy(p + h * ldp + j, v + j * ldv + (firstHead + h) / group * hd, 0, 1, y + h * hd, hd);
}
float expShiftSum(float* x, int64_t n, float shift) {
    float sum = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        x[i] = std::exp(x[i] - shift);
        sum += x[i];
    }
    return sum;
}

float scaleMax(float* x, int64_t n, float scale) {
    float m = x[0] *= scale;
    for (int64_t i = 1; i < n; ++i) {
        x[i] *= scale;
        m = m < x[i] ? x[i] : m;
    }
    return m;
}

void siluMul(float* gate, const float* up, int64_t n) {
    for (int64_t i = 0; i < n; ++i) { // as the AVX2 kernel: e^-|g|, which never overflows
        const float g = gate[i], e = std::exp(-std::fabs(g));
        gate[i] = (g < 0.0f ? g * e : g) / (1.0f + e) * up[i];
    }
}

void quantizeQ8_K(const float* x, BlockQ8_K* y, int64_t n) { quantizeRowQ8_K(x, y, n); }

const VecKernels kPortable{"portable", dotF32,   dotF16,   dotBF16,  dotQ8_0,  dotQ4_0,
                           quantizeRowQ8_0, axpy,    gemmF32,  gemmF16,  gemmQ8_0,
                           gemmQ4_0,   axpyRows, expShiftSum, scaleMax, siluMul, toF16, gemmF16,
                           axpyRowsF16, axpyRowsEach<axpyRows, float>, axpyRowsEach<axpyRowsF16, uint16_t>,
                           scoreRowsOf<float, dotF32>, sumRowsOf<float, axpyRows>,
                           scoreRowsOf<uint16_t, dotF16>, sumRowsOf<uint16_t, axpyRowsF16>,
                           nullptr,  // gemmPanelsF32: F32 products read the rows
                           nullptr, // gemmPanelsF16: likewise
                           nullptr,  // gemmPanelsQ8_0: likewise
                           nullptr, // gemmPanelsQ4_0: Q4_0 products read the rows
                           nullptr, // gemmPanelsQ4_K: likewise
                           nullptr, // gemmPanelsQ6_K: likewise
                           quantizeQ8_K, portable::dotQ2_K, portable::dotQ3_K, portable::dotQ4_K,
                           portable::dotQ5_K, portable::dotQ6_K, portable::dotIq4Xs,
                           nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, // tileQ*_K, tileIq4Xs:
                                                                                 // matmul loops over the dots
                           portable::dotQ4_1, portable::dotQ5_0, portable::dotQ5_1, portable::dotIq4Nl,
                           portable::gemmQ4_1, portable::gemmQ5_0, portable::gemmQ5_1, portable::gemmIq4Nl};

} // namespace

const VecKernels& portableVecKernels() { return kPortable; }

} // namespace mb::kernels
