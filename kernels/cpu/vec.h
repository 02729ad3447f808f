// Inner-loop vector kernels (dot products, activation quantisation) behind a dispatch table.
#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>

namespace mb::kernels {

// One implementation of every inner loop. All pointers may be unaligned; n counts
// elements, nb counts 32-element blocks. Results accumulate in F32.
struct VecKernels {
    const char* name;
    float (*dotF32)(const float* w, const float* x, int64_t n);
    float (*dotF16)(const uint16_t* w, const float* x, int64_t n);
    float (*dotBF16)(const uint16_t* w, const float* x, int64_t n);
    // Weight blocks times activation blocks: integer products, one F32 scale per block.
    float (*dotQ8_0)(const BlockQ8_0* w, const BlockQ8_0* x, int64_t nb);
    float (*dotQ4_0)(const BlockQ4_0* w, const BlockQ8_0* x, int64_t nb);
    // Activations to Q8_0 (n % 32 == 0), as quantizeRowQ8_0 but may round ties differently.
    void (*quantizeQ8_0)(const float* x, BlockQ8_0* y, int64_t n);
    // y[i] += a * x[i]
    void (*axpy)(float a, const float* x, float* y, int64_t n);

    // One weight row against four activation rows (x + t*ldx, t < 4): out[t] equals
    // exactly (bit for bit) what the single dot gives for row t. Decoding the weight row
    // once for four tokens is what makes prefill and batched decode cheaper per token.
    void (*dotF32x4)(const float* w, const float* x, int64_t ldx, int64_t n, float* out);
    void (*dotF16x4)(const uint16_t* w, const float* x, int64_t ldx, int64_t n, float* out);
    void (*dotQ8_0x4)(const BlockQ8_0* w, const BlockQ8_0* x, int64_t ldxBlocks, int64_t nb, float* out);
    void (*dotQ4_0x4)(const BlockQ4_0* w, const BlockQ8_0* x, int64_t ldxBlocks, int64_t nb, float* out);
};

const VecKernels& portableVecKernels();
// nullptr when the CPU lacks AVX2+FMA+F16C (or MODEBENCH_CPU=portable).
const VecKernels* avx2VecKernels();
// The fastest table this CPU supports, chosen once.
const VecKernels& vecKernels();

} // namespace mb::kernels
