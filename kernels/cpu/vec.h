// Inner-loop vector kernels (dot products, activation quantisation) behind a dispatch table.
#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>
#include <vector>

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


    // Matrix products, register-tiled in the SIMD table (several weight rows times several
    // tokens per tile; kernels/cpu/gemm_avx2.cpp): y[t * ldy + r] = dot(w row r, x row t)
    // for r < rows, t < tokens. Weight rows lie ldw elements (gemmQ*: blocks) apart,
    // activation rows ldx floats (blocks) apart; k counts elements, nb blocks per row.
    // Every output equals bit for bit this table's single dot of that row and token,
    // whatever tile computes it, so results do not depend on how rows are split across
    // threads nor on how tokens are grouped into batches.
    void (*gemmF32)(const float* w, int64_t ldw, const float* x, int64_t ldx, int64_t k,
                    int64_t rows, int64_t tokens, float* y, int64_t ldy);
    void (*gemmF16)(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, int64_t k,
                    int64_t rows, int64_t tokens, float* y, int64_t ldy);
    void (*gemmQ8_0)(const BlockQ8_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx,
                     int64_t nb, int64_t rows, int64_t tokens, float* y, int64_t ldy);
    void (*gemmQ4_0)(const BlockQ4_0* w, int64_t ldw, const BlockQ8_0* x, int64_t ldx,
                     int64_t nb, int64_t rows, int64_t tokens, float* y, int64_t ldy);
    // y[i] += sum_j a[j] * x[j * ldx + i] for i < n, j < m (attention's weighted sum of V
    // rows); bit for bit m calls of axpy in order j, with y kept in registers meanwhile.
    void (*axpyRows)(const float* a, const float* x, int64_t ldx, int64_t m, float* y, int64_t n);
    // x[i] = exp(x[i] - shift) for i < n; returns the sum of the new x (softmax's numerator and
    // denominator in one pass). SIMD tables: a polynomial within 2 ulp of exp, 0 below e^-87.
    float (*expShiftSum)(float* x, int64_t n, float shift);
    // x[i] *= scale for i < n (n >= 1); returns the largest new x[i]: softmax's first pass
    // over attention scores. Exact in every table (the products and the max are).
    float (*scaleMax)(float* x, int64_t n, float scale);
    // gate[i] = silu(gate[i]) * up[i] = gate[i] / (1 + e^-gate[i]) * up[i] for i < n (the
    // FFN's gate), as g * e / (1 + e) with e = e^g for negative g (no overflow). SIMD tables:
    // e^x as in expShiftSum. Within 4e-7 relative, or 2e-36 * |up[i]| where silu(g) is that
    // small (g below about -80; 0 below -87.3).
    void (*siluMul)(float* gate, const float* up, int64_t n);
    // y[i] = x[i] rounded to F16 (an F16 KV cache's writes): floatToFp16's bits for every
    // non-NaN input (NaN stays NaN).
    void (*toF16)(const float* x, uint16_t* y, int64_t n);
    // gemmF32 on F16 rows (an F16 KV cache's keys) converted exactly to F32: the same bits as
    // this table's gemmF32 on the converted rows, so an F16 cache's scores are F32 attention's
    // on the rounded keys, with the F32 tiles.
    void (*gemmF16AsF32)(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, int64_t k, int64_t rows,
                         int64_t tokens, float* y, int64_t ldy);
    // axpyRows over F16 rows (an F16 KV cache's V): bit for bit this table's axpyRows on the
    // rows converted to F32 (the conversion is exact).
    void (*axpyRowsF16)(const float* a, const uint16_t* x, int64_t ldx, int64_t m, float* y, int64_t n);
    // axpyRows (axpyRowsF16) for `queries` outputs over the same m rows: y + q * ldy with
    // weights a + q * lda, for q < queries; each output bit for bit that call alone (a prefill
    // run's V sum over a block every query of the run sees in full).
    void (*axpyRowsQ)(const float* a, int64_t lda, int64_t queries, const float* x, int64_t ldx, int64_t m, float* y,
                      int64_t ldy, int64_t n);
    void (*axpyRowsQF16)(const float* a, int64_t lda, int64_t queries, const uint16_t* x, int64_t ldx, int64_t m,
                         float* y, int64_t ldy, int64_t n);
    // One query's attention over m key (value) rows for `heads` query heads at once, reading
    // each row front to back (a decode step's access pattern: whole rows, not one head's
    // slice of every row). Query head h (0-based here, firstHead + h in the model) reads the
    // kv head (firstHead + h) / group, at element offset that * hd of a row.
    // scoreRowsF32: s[h * lds + j] = dot(k + j * ldk + kv offset, q + h * hd), each the same
    // bits as gemmF32's single dot.
    void (*scoreRowsF32)(const float* k, int64_t ldk, int64_t m, const float* q, int64_t heads, int64_t firstHead,
                         int64_t group, int64_t hd, float* s, int64_t lds);
    // sumRowsF32: y[h * hd + i] += sum_j p[h * ldp + j] * v(row j, kv offset + i), rows in
    // order; each element the same chain as this table's axpyRows on that head alone.
    void (*sumRowsF32)(const float* p, int64_t ldp, const float* v, int64_t ldv, int64_t m, int64_t heads,
                       int64_t firstHead, int64_t group, int64_t hd, float* y);
    // The same over F16 rows (an F16 cache): the bits of gemmF16AsF32's single dot and of
    // axpyRowsF16.
    void (*scoreRowsF16)(const uint16_t* k, int64_t ldk, int64_t m, const float* q, int64_t heads,
                         int64_t firstHead, int64_t group, int64_t hd, float* s, int64_t lds);
    void (*sumRowsF16)(const float* p, int64_t ldp, const uint16_t* v, int64_t ldv, int64_t m, int64_t heads,
                       int64_t firstHead, int64_t group, int64_t hd, float* y);
    // An F32 matrix product from 16-row panels (packPanelsF32, kernels/cpu/panels.h; k columns):
    // y[t * ldy + r] = sum_c w(r, c) * x[t * ldx + c] for rows r0 <= r < r1 and t < tokens;
    // nothing else of y is written. Each output is one FMA chain over c in order from 0,
    // bit for bit acc = std::fma(w(r, c), x(t, c), acc) from acc = 0, in every tile, so the
    // results do not depend on the row range nor on how tokens are grouped. Different bits
    // from gemmF32 (another summation order). nullptr in tables without it (portable, avx2):
    // their F32 products read the rows.
    void (*gemmPanelsF32)(const float* panels, int64_t k, int64_t r0, int64_t r1, const float* x, int64_t ldx,
                          int64_t tokens, float* y, int64_t ldy);
    // gemmPanelsF32 over F16 panels (packPanelsF16), each weight converted exactly: the bits of
    // gemmPanelsF32 on the converted matrix. nullptr where absent.
    void (*gemmPanelsF16)(const uint16_t* panels, int64_t k, int64_t r0, int64_t r1, const float* x, int64_t ldx,
                          int64_t tokens, float* y, int64_t ldy);
    // The same for a Q8_0 matrix as panels (packPanelsQ8_0; nb blocks per row) and Q8_0
    // activations (x rows ldx blocks apart; xbias and xscale from prepareQ8Panels, nb per
    // token): per output and block the exact integer sum s_b of the block's products, and
    // acc = std::fma(float(s_b), dw_b * dx_b, acc) over the blocks in order from acc = 0
    // (dw_b * dx_b an F32 product), in every tile; a NaN scale gives NaN, maybe with
    // another payload. The AVX2 table's needs activation bytes other than -128 (quantizeRowQ8_0
    // writes -127..127). nullptr where absent (portable): Q8_0 products read the rows.
    void (*gemmPanelsQ8_0)(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_0* x,
                           int64_t ldx, const int32_t* xbias, const float* xscale, int64_t tokens, float* y,
                           int64_t ldy);
    // The same for a Q4_0 matrix as panels (packPanelsQ4_0; nb blocks per row), with the same
    // activations, xbias and xscale (its - 8 offset is xbias / 16): per output and block the
    // exact integer sum of (q - 8) * x, chained as gemmPanelsQ8_0's. nullptr where absent.
    void (*gemmPanelsQ4_0)(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_0* x,
                           int64_t ldx, const int32_t* xbias, const float* xscale, int64_t tokens, float* y,
                           int64_t ldy);
    // The same for Q4_K and Q6_K matrices as panels (packPanelsQ4_K, packPanelsQ6_K,
    // kernels/cpu/panels_k.h; nb super-blocks per row) and Q8_K activations (x rows ldx blocks
    // apart): per output and super-block the exact integer sums S (and for Q4_K the mins' M),
    // chained as acc = fma(float(S), d * xd, acc) (Q4_K then acc = fma(-float(M), dmin * xd,
    // acc)) over the super-blocks in order from acc = 0, in every tile
    // (kernels/cpu/gemm_panels_k_avx512.cpp). Other bits than the dots. nullptr where absent.
    void (*gemmPanelsQ4_K)(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_K* x,
                           int64_t ldx, int64_t tokens, float* y, int64_t ldy);
    void (*gemmPanelsQ6_K)(const uint8_t* panels, int64_t nb, int64_t r0, int64_t r1, const BlockQ8_K* x,
                           int64_t ldx, int64_t tokens, float* y, int64_t ldy);
    // Activations to Q8_K (n % 256 == 0; the bits of quantizeRowQ8_K) for the k-quant dots, and
    // those dots: one weight row of nb 256-element blocks times one Q8_K row
    // (kernels/cpu/kquant_dot.h). Never nullptr.
    void (*quantizeQ8_K)(const float* x, BlockQ8_K* y, int64_t n);
    float (*dotQ2_K)(const BlockQ2_K* w, const BlockQ8_K* x, int64_t nb);
    float (*dotQ3_K)(const BlockQ3_K* w, const BlockQ8_K* x, int64_t nb);
    float (*dotQ4_K)(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb);
    float (*dotQ5_K)(const BlockQ5_K* w, const BlockQ8_K* x, int64_t nb);
    float (*dotQ6_K)(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb);
    float (*dotIq4Xs)(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t nb);
    // The same dots for kKTileTokens tokens (x + t * ldx -> y[t * ldy]), each the bits of the
    // single dot; nullptr where a table has none (portable): matmul then loops over the dots.
    void (*tileQ4_K)(const BlockQ4_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
    void (*tileQ5_K)(const BlockQ5_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
    void (*tileQ6_K)(const BlockQ6_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
    void (*tileQ2_K)(const BlockQ2_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
    void (*tileQ3_K)(const BlockQ3_K* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
    void (*tileIq4Xs)(const BlockIq4Xs* w, const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y, int64_t ldy);
    // The other 32-element formats against Q8_0 activations (kernels/cpu/quant_legacy.h): dots and
    // register-tiled products as dotQ4_0 and gemmQ4_0, with one more input, xs: per activation
    // block its scale as F32 and that times the sum of its values (activationSums; Q4_1 and
    // Q5_1's mins read the sums), ldx apart as the blocks. Every gemm output is the bits of this
    // table's dot of that row and token. Never nullptr.
    float (*dotQ4_1)(const BlockQ4_1* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb);
    float (*dotQ5_0)(const BlockQ5_0* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb);
    float (*dotQ5_1)(const BlockQ5_1* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb);
    float (*dotIq4Nl)(const BlockIq4Nl* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb);
    void (*gemmQ4_1)(const BlockQ4_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
                     int64_t rows, int64_t tokens, float* y, int64_t ldy);
    void (*gemmQ5_0)(const BlockQ5_0* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
                     int64_t rows, int64_t tokens, float* y, int64_t ldy);
    void (*gemmQ5_1)(const BlockQ5_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
                     int64_t rows, int64_t tokens, float* y, int64_t ldy);
    void (*gemmIq4Nl)(const BlockIq4Nl* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
                      int64_t rows, int64_t tokens, float* y, int64_t ldy);
};

const VecKernels& portableVecKernels();
// nullptr when the CPU lacks AVX2+FMA+F16C (or MODEBENCH_CPU=portable).
const VecKernels* avx2VecKernels();
// nullptr when the CPU lacks AVX-512 F/BW/VL/VNNI or the AVX2 set (or MODEBENCH_CPU=avx2 or
// portable). The AVX2 table with 16-wide float tiles and vpdpbusd quantised tiles.
const VecKernels* avx512VecKernels();
// Every table this CPU can run, slowest first: portable, then avx2 and avx512 where present.
std::vector<const VecKernels*> availableVecKernels();
// The fastest table this CPU supports, chosen once.
const VecKernels& vecKernels();

} // namespace mb::kernels
