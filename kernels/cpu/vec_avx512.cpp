// The AVX-512 (+VNNI) vector table: the AVX2 table with its matrix products replaced (this file
// and gemm_avx512.cpp alone are built with the AVX-512 flags).
#include "kernels/cpu/gemm_avx512.h"
#include "kernels/cpu/vec.h"

namespace mb::kernels {

const VecKernels* avx2VecKernelsUnchecked(); // defined in vec_avx2.cpp

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)

namespace {

// The single dots are 1 x 1 tiles of the gemm kernels, so a dot and any tile agree bit for bit.
float dotF32(const float* w, const float* x, int64_t n) {
    float y;
    avx512::gemmF32(w, 0, x, 0, n, 1, 1, &y, 1);
    return y;
}
float dotF16(const uint16_t* w, const float* x, int64_t n) {
    float y;
    avx512::gemmF16(w, 0, x, 0, n, 1, 1, &y, 1);
    return y;
}
float dotQ8_0(const BlockQ8_0* w, const BlockQ8_0* x, int64_t nb) {
    float y;
    avx512::gemmQ8_0(w, 0, x, 0, nb, 1, 1, &y, 1);
    return y;
}
float dotQ4_0(const BlockQ4_0* w, const BlockQ8_0* x, int64_t nb) {
    float y;
    avx512::gemmQ4_0(w, 0, x, 0, nb, 1, 1, &y, 1);
    return y;
}

// BF16 dots, activation quantisation, axpy and axpyRows stay AVX2's (memory- or
// latency-bound, or rare), so attention's V sum is the same in both tables.
VecKernels makeTable() {
    const VecKernels* base = avx2VecKernelsUnchecked();
    if (!base) return {};
    VecKernels k = *base;
    k.name = "avx512";
    k.dotF32 = dotF32;
    k.dotF16 = dotF16;
    k.dotQ8_0 = dotQ8_0;
    k.dotQ4_0 = dotQ4_0;
    k.gemmF32 = avx512::gemmF32;
    k.gemmF16 = avx512::gemmF16;
    k.gemmQ8_0 = avx512::gemmQ8_0;
    k.gemmQ4_0 = avx512::gemmQ4_0;
    return k;
}

} // namespace

const VecKernels* avx512VecKernelsUnchecked() {
    static const VecKernels table = makeTable();
    return table.name ? &table : nullptr;
}

#else // compiler without the flags: no AVX-512 table

const VecKernels* avx512VecKernelsUnchecked() { return nullptr; }

#endif

} // namespace mb::kernels
