// Portable scalar versions of the vector kernels: the reference every SIMD path is tested against.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/vec.h"

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

// The portable four-row versions are four single dots: same order, same bits.
void dotF32x4(const float* w, const float* x, int64_t ldx, int64_t n, float* out) {
    for (int t = 0; t < 4; ++t) out[t] = dotF32(w, x + t * ldx, n);
}
void dotF16x4(const uint16_t* w, const float* x, int64_t ldx, int64_t n, float* out) {
    for (int t = 0; t < 4; ++t) out[t] = dotF16(w, x + t * ldx, n);
}
void dotQ8_0x4(const BlockQ8_0* w, const BlockQ8_0* x, int64_t ldx, int64_t nb, float* out) {
    for (int t = 0; t < 4; ++t) out[t] = dotQ8_0(w, x + t * ldx, nb);
}
void dotQ4_0x4(const BlockQ4_0* w, const BlockQ8_0* x, int64_t ldx, int64_t nb, float* out) {
    for (int t = 0; t < 4; ++t) out[t] = dotQ4_0(w, x + t * ldx, nb);
}

const VecKernels kPortable{"portable", dotF32,   dotF16,   dotBF16,   dotQ8_0,  dotQ4_0, quantizeRowQ8_0,
                           axpy,       dotF32x4, dotF16x4, dotQ8_0x4, dotQ4_0x4};

} // namespace

const VecKernels& portableVecKernels() { return kPortable; }

} // namespace mb::kernels
