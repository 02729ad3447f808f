// The AVX-512 (+VNNI) vector table: the AVX2 table with its matrix products replaced (this file
// and gemm_avx512.cpp alone are built with the AVX-512 flags).
#include "kernels/cpu/gemm_avx512.h"
#include "kernels/cpu/gemm_panel.h"
#include "kernels/cpu/kquant_dot.h"
#include "kernels/cpu/quant_legacy.h"
#include "kernels/cpu/quant_legacy_panel.h"
#include "kernels/cpu/vec.h"

namespace mb::kernels {

const VecKernels* avx2VecKernelsUnchecked(); // defined in vec_avx2.cpp

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VL__) && defined(__AVX512VNNI__)

namespace {

// BF16 dots, activation quantisation, axpy and exp stay AVX2's (memory- or latency-bound, or
// rare). axpyRows is 16 lanes wide here; each element is the same FMA chain as in AVX2's, so
// attention's V sum is the same in both tables.
VecKernels makeTable() {
    const VecKernels* base = avx2VecKernelsUnchecked();
    if (!base) return {};
    VecKernels k = *base;
    k.name = "avx512";
    // The single dots are 1 x 1 tiles of the gemm kernels, so a dot and any tile agree bit for bit.
    k.dotF32 = dotOfGemm<avx512::gemmF32, float, float>;
    k.dotF16 = dotOfGemm<avx512::gemmF16, uint16_t, float>;
    k.dotQ8_0 = dotOfGemm<avx512::gemmQ8_0, BlockQ8_0, BlockQ8_0>;
    k.dotQ4_0 = dotOfGemm<avx512::gemmQ4_0, BlockQ4_0, BlockQ8_0>;
    k.gemmF32 = avx512::gemmF32;
    k.gemmF16 = avx512::gemmF16;
    k.gemmQ8_0 = avx512::gemmQ8_0;
    k.gemmQ4_0 = avx512::gemmQ4_0;
    k.axpyRows = avx512::axpyRows;
    k.gemmF16AsF32 = avx512::gemmF16AsF32;
    k.axpyRowsF16 = avx512::axpyRowsF16;
    k.axpyRowsQ = avx512::axpyRowsQ;
    k.axpyRowsQF16 = avx512::axpyRowsQF16;
    k.scoreRowsF32 = avx512::scoreRows<float>;
    k.sumRowsF32 = avx512::sumRows<float>;
    k.scoreRowsF16 = avx512::scoreRows<uint16_t>;
    k.sumRowsF16 = avx512::sumRows<uint16_t>;
    k.gemmPanelsF32 = avx512::gemmPanelsF32;
    k.gemmPanelsF16 = avx512::gemmPanelsF16;
    k.gemmPanelsQ8_0 = avx512::gemmPanelsQ8_0;
    k.gemmPanelsQ4_0 = avx512::gemmPanelsQ4_0;
    k.gemmPanelsQ4_K = avx512::gemmPanelsQ4_K;
    k.gemmPanelsQ6_K = avx512::gemmPanelsQ6_K;
    k.dotQ4_K = avx512::dotQ4_K;
    k.dotQ5_K = avx512::dotQ5_K;
    k.dotQ6_K = avx512::dotQ6_K;
    k.tileQ4_K = avx512::tileQ4_K;
    k.tileQ5_K = avx512::tileQ5_K;
    k.tileQ6_K = avx512::tileQ6_K;
    k.dotQ2_K = avx512::dotQ2_K;
    k.dotQ3_K = avx512::dotQ3_K;
    k.dotIq4Xs = avx512::dotIq4Xs;
    k.tileQ2_K = avx512::tileQ2_K;
    k.tileQ3_K = avx512::tileQ3_K;
    k.tileIq4Xs = avx512::tileIq4Xs;
    k.dotQ4_1 = legacyDotOfGemm<avx512::gemmQ4_1, BlockQ4_1>;
    k.dotQ5_0 = legacyDotOfGemm<avx512::gemmQ5_0, BlockQ5_0>;
    k.dotQ5_1 = legacyDotOfGemm<avx512::gemmQ5_1, BlockQ5_1>;
    k.dotIq4Nl = legacyDotOfGemm<avx512::gemmIq4Nl, BlockIq4Nl>;
    k.gemmQ4_1 = avx512::gemmQ4_1;
    k.gemmQ5_0 = avx512::gemmQ5_0;
    k.gemmQ5_1 = avx512::gemmQ5_1;
    k.gemmIq4Nl = avx512::gemmIq4Nl;
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
