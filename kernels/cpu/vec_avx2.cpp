// AVX2 + FMA + F16C versions of the vector kernels (this file alone is built with -mavx2 -mfma -mf16c).
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/gemm_avx2.h"
#include "kernels/cpu/gemm_panel.h"
#include "kernels/cpu/kquant_dot.h"
#include "kernels/cpu/quant_legacy.h"
#include "kernels/cpu/quant_legacy_panel.h"
#include "kernels/cpu/vec.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>
#include <limits>

#include <cmath>

namespace mb::kernels {

namespace {

inline __m256 loadBF16(const uint16_t* p) {
    const __m256i wide = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}

float dotBF16(const uint16_t* w, const float* x, int64_t n) {
    __m256 acc = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(loadBF16(w + i), _mm256_loadu_ps(x + i), acc);
    float s = hsum(acc);
    for (; i < n; ++i) s += bf16ToFloat(w[i]) * x[i];
    return s;
}

void quantizeQ8_0(const float* x, BlockQ8_0* y, int64_t n) {
    const __m256 signBit = _mm256_set1_ps(-0.0f);
    const int64_t nb = n / kQ8_0BlockSize;
    for (int64_t b = 0; b < nb; ++b) {
        const float* xb = x + b * kQ8_0BlockSize;
        __m256 v[4];
        __m256 amax = _mm256_setzero_ps();
        for (int k = 0; k < 4; ++k) {
            v[k] = _mm256_loadu_ps(xb + 8 * k);
            amax = _mm256_max_ps(amax, _mm256_andnot_ps(signBit, v[k]));
        }
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_movehdup_ps(m));
        const float maxAbs = _mm_cvtss_f32(m);
        const float d = maxAbs / 127.0f;
        y[b].d = floatToFp16(d);
        const __m256 id = _mm256_set1_ps(d != 0.0f ? 1.0f / d : 0.0f);
        __m256i q[4];
        for (int k = 0; k < 4; ++k)
            q[k] = _mm256_cvtps_epi32(
                _mm256_round_ps(_mm256_mul_ps(v[k], id), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        // Pack 32 int32 -> 32 int8; the packs interleave 128-bit lanes, so permute back.
        const __m256i s01 = _mm256_packs_epi32(q[0], q[1]);
        const __m256i s23 = _mm256_packs_epi32(q[2], q[3]);
        __m256i bytes = _mm256_packs_epi16(s01, s23);
        bytes = _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(y[b].qs), bytes);
    }
}

void axpy(float a, const float* x, float* y, int64_t n) {
    const __m256 va = _mm256_set1_ps(a);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
    for (; i < n; ++i) y[i] = std::fma(a, x[i], y[i]); // an FMA, as in the vector part and axpyRows
}

// e^x lane by lane: e^x = 2^n e^r with n = round(x / ln 2) and r = x - n ln 2 (ln 2 in two
// parts, so r is exact to F32) in [-ln2/2, ln2/2], where e^r's Taylor polynomial of degree 6
// is within 1.2e-7 relative. Below -87.33 (where 2^n leaves the normal range) the result is 0;
// above 88.37 it saturates at the largest power the exponent field holds.
inline __m256 exp8(__m256 x) {
    const __m256 underflow = _mm256_cmp_ps(x, _mm256_set1_ps(-87.33654f), _CMP_LT_OQ);
    x = _mm256_min_ps(_mm256_max_ps(x, _mm256_set1_ps(-87.33654f)), _mm256_set1_ps(88.37626f));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.0f / 720.0f);
    for (const float c : {1.0f / 120.0f, 1.0f / 24.0f, 1.0f / 6.0f, 0.5f, 1.0f, 1.0f})
        p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(c));
    const __m256i twoN = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_andnot_ps(underflow, _mm256_mul_ps(p, _mm256_castsi256_ps(twoN)));
}

float expShiftSum(float* x, int64_t n, float shift) {
    const __m256 s = _mm256_set1_ps(shift);
    __m256 sum = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), s));
        _mm256_storeu_ps(x + i, e);
        sum = _mm256_add_ps(sum, e);
    }
    if (i < n) { // the tail as one masked vector: lanes past n are neither read, written nor summed
        const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)), lane);
        const __m256 e = _mm256_and_ps(exp8(_mm256_sub_ps(_mm256_maskload_ps(x + i, mask), s)),
                                       _mm256_castsi256_ps(mask));
        _mm256_maskstore_ps(x + i, mask, e);
        sum = _mm256_add_ps(sum, e);
    }
    return hsum(sum);
}

// Four running maxima hide maxps's latency. The max is exact, so their order does not
// matter, but for the sign of a zero maximum (-0 or +0, which exp(x - m) does not tell apart).
float scaleMax(float* x, int64_t n, float scale) {
    const __m256 a = _mm256_set1_ps(scale);
    __m256 m[4];
    for (auto& v : m) v = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
    int64_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int v = 0; v < 4; ++v) {
            const __m256 y = _mm256_mul_ps(_mm256_loadu_ps(x + i + 8 * v), a);
            _mm256_storeu_ps(x + i + 8 * v, y);
            m[v] = _mm256_max_ps(y, m[v]);
        }
    for (; i + 8 <= n; i += 8) {
        const __m256 y = _mm256_mul_ps(_mm256_loadu_ps(x + i), a);
        _mm256_storeu_ps(x + i, y);
        m[0] = _mm256_max_ps(y, m[0]);
    }
    const __m256 all = _mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3]));
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, all);
    float best = lanes[0];
    for (int l = 1; l < 8; ++l) best = best < lanes[l] ? lanes[l] : best;
    for (; i < n; ++i) {
        x[i] *= scale;
        best = best < x[i] ? x[i] : best;
    }
    return best;
}

// silu(g) = g / (1 + e^-g), taken as g * e / (1 + e) with e = e^g for g < 0, so e^-|g| never
// overflows (exp8 saturates above 88.4): below -87.3 e is 0 and so is the result.
void siluMul(float* gate, const float* up, int64_t n) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 signBit = _mm256_set1_ps(-0.0f);
    auto silu8 = [&](__m256 g, __m256 u) {
        const __m256 e = exp8(_mm256_or_ps(g, signBit)); // e^-|g|
        const __m256 negative = _mm256_cmp_ps(g, _mm256_setzero_ps(), _CMP_LT_OQ);
        const __m256 numerator = _mm256_blendv_ps(g, _mm256_mul_ps(g, e), negative);
        return _mm256_mul_ps(_mm256_div_ps(numerator, _mm256_add_ps(one, e)), u);
    };
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(gate + i, silu8(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
    if (i < n) { // the tail as one masked vector
        const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)),
                                                _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
        _mm256_maskstore_ps(gate + i, mask, silu8(_mm256_maskload_ps(gate + i, mask), _mm256_maskload_ps(up + i, mask)));
    }
}

// F16C's conversion rounds to nearest even, gives infinity on overflow and keeps subnormals:
// floatToFp16's bits.
void toF16(const float* x, uint16_t* y, int64_t n) {
    constexpr int kRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), kRound));
    for (; i < n; ++i) y[i] = _cvtss_sh(x[i], kRound);
}

// The single dots are 1 x 1 tiles of the gemm kernels, so a dot and any tile agree bit for bit.
const VecKernels kAvx2{"avx2",
                       dotOfGemm<avx2::gemmF32, float, float>,
                       dotOfGemm<avx2::gemmF16, uint16_t, float>,
                       dotBF16,
                       dotOfGemm<avx2::gemmQ8_0, BlockQ8_0, BlockQ8_0>,
                       dotOfGemm<avx2::gemmQ4_0, BlockQ4_0, BlockQ8_0>,
                       quantizeQ8_0,
                       axpy,
                       avx2::gemmF32,
                       avx2::gemmF16,
                       avx2::gemmQ8_0,
                       avx2::gemmQ4_0,
                       avx2::axpyRows,
                       expShiftSum,
                       scaleMax,
                       siluMul,
                       toF16,
                       avx2::gemmF16, // its F16 tiles are the F32 tiles with converting loads
                       avx2::axpyRowsF16,
                       axpyRowsEach<avx2::axpyRows, float>,
                       axpyRowsEach<avx2::axpyRowsF16, uint16_t>,
                       avx2::scoreRows<float>,
                       avx2::sumRows<float>,
                       avx2::scoreRows<uint16_t>,
                       avx2::sumRows<uint16_t>,
                       nullptr, // gemmPanelsF32: F32 products read the rows
                       nullptr, // gemmPanelsF16: likewise
                       avx2::gemmPanelsQ8_0,
                       avx2::gemmPanelsQ4_0,
                       nullptr, // gemmPanelsQ4_K: Q4_K products read the rows
                       nullptr, // gemmPanelsQ6_K: likewise
                       avx2::quantizeQ8_K,
                       avx2::dotQ2_K,
                       avx2::dotQ3_K,
                       avx2::dotQ4_K,
                       avx2::dotQ5_K,
                       avx2::dotQ6_K,
                       avx2::dotIq4Xs,
                       avx2::tileQ4_K,
                       avx2::tileQ5_K,
                       avx2::tileQ6_K,
                       avx2::tileQ2_K,
                       avx2::tileQ3_K,
                       avx2::tileIq4Xs,
                       legacyDotOfGemm<avx2::gemmQ4_1, BlockQ4_1>,
                       legacyDotOfGemm<avx2::gemmQ5_0, BlockQ5_0>,
                       legacyDotOfGemm<avx2::gemmQ5_1, BlockQ5_1>,
                       legacyDotOfGemm<avx2::gemmIq4Nl, BlockIq4Nl>,
                       avx2::gemmQ4_1,
                       avx2::gemmQ5_0,
                       avx2::gemmQ5_1,
                       avx2::gemmIq4Nl};

} // namespace

const VecKernels* avx2VecKernelsUnchecked() { return &kAvx2; }

} // namespace mb::kernels

#else // compiler without the flags: no AVX2 table

namespace mb::kernels {
const VecKernels* avx2VecKernelsUnchecked() { return nullptr; }
} // namespace mb::kernels

#endif
