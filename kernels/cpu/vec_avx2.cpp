// AVX2 + FMA + F16C versions of the vector kernels (this file alone is built with -mavx2 -mfma -mf16c).
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/vec.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#include <immintrin.h>

#include <utility>

namespace mb::kernels {

namespace {

inline float h2f(uint16_t h) { return _cvtsh_ss(h); }

inline float hsum(__m256 v) {
    __m128 lo = _mm256_castps256_ps128(v);
    __m128 hi = _mm256_extractf128_ps(v, 1);
    lo = _mm_add_ps(lo, hi);
    lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
    lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
    return _mm_cvtss_f32(lo);
}

float dotF32(const float* w, const float* x, int64_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), a0);
        a1 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i + 8), _mm256_loadu_ps(x + i + 8), a1);
    }
    for (; i + 8 <= n; i += 8)
        a0 = _mm256_fmadd_ps(_mm256_loadu_ps(w + i), _mm256_loadu_ps(x + i), a0);
    float s = hsum(_mm256_add_ps(a0, a1));
    for (; i < n; ++i) s += w[i] * x[i];
    return s;
}

inline __m256 loadF16(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

float dotF16(const uint16_t* w, const float* x, int64_t n) {
    __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        a0 = _mm256_fmadd_ps(loadF16(w + i), _mm256_loadu_ps(x + i), a0);
        a1 = _mm256_fmadd_ps(loadF16(w + i + 8), _mm256_loadu_ps(x + i + 8), a1);
    }
    for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(loadF16(w + i), _mm256_loadu_ps(x + i), a0);
    float s = hsum(_mm256_add_ps(a0, a1));
    for (; i < n; ++i) s += fp16ToFloat(w[i]) * x[i];
    return s;
}

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

// Sum of products of 32 signed bytes, as 8 int32 lanes converted to float. maddubs needs
// an unsigned first operand, so take |a| and move a's sign onto b.
inline __m256 dotI8x32(__m256i a, __m256i b) {
    const __m256i absA = _mm256_sign_epi8(a, a);
    const __m256i signedB = _mm256_sign_epi8(b, a);
    const __m256i pairs = _mm256_maddubs_epi16(absA, signedB);
    const __m256i quads = _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));
    return _mm256_cvtepi32_ps(quads);
}

float dotQ8_0(const BlockQ8_0* w, const BlockQ8_0* x, int64_t nb) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const __m256 d = _mm256_set1_ps(h2f(w[b].d) * h2f(x[b].d));
        const __m256i wq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs));
        const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
        acc = _mm256_fmadd_ps(d, dotI8x32(wq, xq), acc);
    }
    return hsum(acc);
}

float dotQ4_0(const BlockQ4_0* w, const BlockQ8_0* x, int64_t nb) {
    __m256 acc = _mm256_setzero_ps();
    const __m256i lowMask = _mm256_set1_epi8(0x0f);
    const __m256i eight = _mm256_set1_epi8(8);
    for (int64_t b = 0; b < nb; ++b) {
        const __m256 d = _mm256_set1_ps(h2f(w[b].d) * h2f(x[b].d));
        const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].qs));
        // Elements 0..15 are the low nibbles, 16..31 the high nibbles.
        const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
        const __m256i wq = _mm256_sub_epi8(_mm256_and_si256(both, lowMask), eight);
        const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x[b].qs));
        acc = _mm256_fmadd_ps(d, dotI8x32(wq, xq), acc);
    }
    return hsum(acc);
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
    for (; i < n; ++i) y[i] += a * x[i];
}

// Four-token versions: the same per-token accumulation order as the single dots above
// (two accumulators over 16-element steps, then one 8-element step, then the scalar tail),
// with the weight vector loaded and converted once for all four tokens.
template <class LoadW, class Tail>
inline void dotX4(LoadW loadW, Tail tailW, const float* x, int64_t ldx, int64_t n, float* out) {
    __m256 a0[4], a1[4];
    for (int t = 0; t < 4; ++t) a0[t] = a1[t] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 w0 = loadW(i), w1 = loadW(i + 8);
        for (int t = 0; t < 4; ++t) {
            a0[t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + t * ldx + i), a0[t]);
            a1[t] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + t * ldx + i + 8), a1[t]);
        }
    }
    for (; i + 8 <= n; i += 8) {
        const __m256 w0 = loadW(i);
        for (int t = 0; t < 4; ++t) a0[t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + t * ldx + i), a0[t]);
    }
    for (int t = 0; t < 4; ++t) {
        float s = hsum(_mm256_add_ps(a0[t], a1[t]));
        for (int64_t j = i; j < n; ++j) s += tailW(j) * x[t * ldx + j];
        out[t] = s;
    }
}

void dotF32x4(const float* w, const float* x, int64_t ldx, int64_t n, float* out) {
    dotX4([w](int64_t i) { return _mm256_loadu_ps(w + i); }, [w](int64_t j) { return w[j]; }, x, ldx, n, out);
}

void dotF16x4(const uint16_t* w, const float* x, int64_t ldx, int64_t n, float* out) {
    dotX4([w](int64_t i) { return loadF16(w + i); }, [w](int64_t j) { return fp16ToFloat(w[j]); }, x, ldx, n, out);
}

// Four activation blocks per weight block: `decode(b)` yields the block's scale and its 32
// signed weights. Same accumulation order per token as dotQ8_0/dotQ4_0.
template <class Decode>
inline void dotBlocksX4(Decode decode, const BlockQ8_0* x, int64_t ldx, int64_t nb, float* out) {
    __m256 acc[4];
    for (int t = 0; t < 4; ++t) acc[t] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const auto [dw, wq] = decode(b);
        // maddubs needs an unsigned operand: |w| once, w's sign moved onto each x.
        const __m256i absW = _mm256_sign_epi8(wq, wq);
        for (int t = 0; t < 4; ++t) {
            const BlockQ8_0& xb = x[t * ldx + b];
            const __m256 d = _mm256_set1_ps(dw * h2f(xb.d));
            const __m256i xq = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb.qs));
            const __m256i pairs = _mm256_maddubs_epi16(absW, _mm256_sign_epi8(xq, wq));
            const __m256 sum = _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
            acc[t] = _mm256_fmadd_ps(d, sum, acc[t]);
        }
    }
    for (int t = 0; t < 4; ++t) out[t] = hsum(acc[t]);
}

void dotQ8_0x4(const BlockQ8_0* w, const BlockQ8_0* x, int64_t ldx, int64_t nb, float* out) {
    dotBlocksX4(
        [w](int64_t b) {
            return std::pair(h2f(w[b].d), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w[b].qs)));
        },
        x, ldx, nb, out);
}

void dotQ4_0x4(const BlockQ4_0* w, const BlockQ8_0* x, int64_t ldx, int64_t nb, float* out) {
    const __m256i lowMask = _mm256_set1_epi8(0x0f);
    const __m256i eight = _mm256_set1_epi8(8);
    dotBlocksX4(
        [&](int64_t b) {
            const __m128i packed = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w[b].qs));
            const __m256i both = _mm256_set_m128i(_mm_srli_epi16(packed, 4), packed);
            return std::pair(h2f(w[b].d), _mm256_sub_epi8(_mm256_and_si256(both, lowMask), eight));
        },
        x, ldx, nb, out);
}

const VecKernels kAvx2{"avx2", dotF32,   dotF16,   dotBF16,   dotQ8_0,  dotQ4_0, quantizeQ8_0,
                       axpy,   dotF32x4, dotF16x4, dotQ8_0x4, dotQ4_0x4};

} // namespace

const VecKernels* avx2VecKernelsUnchecked() { return &kAvx2; }

} // namespace mb::kernels

#else // compiler without the flags: no AVX2 table

namespace mb::kernels {
const VecKernels* avx2VecKernelsUnchecked() { return nullptr; }
} // namespace mb::kernels

#endif
