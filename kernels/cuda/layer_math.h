// Per-element math of the CUDA layer (RoPE pairs and angles, gate activations, soft-caps, attention windows and
// splits) as inline functions that compile for the device and as plain C++, so CPU tests check the code the kernels run.
//
// Every function here is written to give, in its host instantiation, the same bits as the CPU
// engine's own function named beside it (kernels/cpu/ops.h, vec_portable.cpp); on the device
// the libm calls are CUDA's (tanhf, expf, pow, sincos: within a few ulp of the host's).
// tests/kernels/layer_math_test.cpp holds them to that. No CUDA header is needed to include this.
#pragma once

#include <math.h>

#include <cstdint>

#if defined(__CUDACC__)
#define MB_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define MB_HOST_DEVICE inline
#endif

namespace mb::kernels::cuda {

// Which pairs of a head's first ropeDim values RoPE rotates (engine::RopeKind, which the
// kernels cannot include): Norm (2i, 2i+1) for llama, Neox (i, i + ropeDim/2) for the others.
enum class RopeForm : uint8_t { Norm, Neox };

// How raw attention scores become softmax logits (kernels::ScoreRule on the CPU): q.k x scale,
// then softcap x tanh(s / softcap) when softcap > 0; a query at position p sees keys j with
// p - j < window when window > 0 (a sliding-window layer), else every j <= p.
struct AttentionRule {
    float scale = 1.0f;
    float softcap = 0.0f;
    int32_t window = 0;
};

// Element indices of pair i (i < ropeDim/2) within one head vector.
struct RopePair {
    int32_t first, second;
};
MB_HOST_DEVICE RopePair ropePair(RopeForm form, int32_t i, int32_t ropeDim) {
    return form == RopeForm::Neox ? RopePair{i, i + ropeDim / 2} : RopePair{2 * i, 2 * i + 1};
}

// cos and sin of pair i's angle at `pos`: pos * posScale * base^(-2i/ropeDim) / factor (factor:
// rope_freqs.weight's entry i, or 1), in double and then rounded, as kernels::ropeAngles.
MB_HOST_DEVICE void ropeCosSin(int64_t pos, int32_t i, int32_t ropeDim, float base, float posScale,
                               const float* factors, float* c, float* s) {
    const double freq = pow(static_cast<double>(base), -2.0 * static_cast<double>(i) / static_cast<double>(ropeDim));
    double angle = static_cast<double>(pos) * freq;
    if (posScale != 1.0f) angle *= static_cast<double>(posScale);
    if (factors) angle /= static_cast<double>(factors[i]);
    *c = static_cast<float>(cos(angle));
    *s = static_cast<float>(sin(angle));
}

// Rotates pair `p` of the head vector v by the angle whose cos and sin are c and s
// (kernels::ropeApply / ropeApplyNeox, one pair).
MB_HOST_DEVICE void ropeRotate(float* v, RopePair p, float c, float s) {
    const float a = v[p.first], b = v[p.second];
    v[p.first] = a * c - b * s;
    v[p.second] = a * s + b * c;
}

// silu(g) * u with e^-|g| (never overflows), as the CPU's siluMul (vec_portable.cpp).
MB_HOST_DEVICE float siluGate(float g, float u) {
    const float e = expf(-fabsf(g));
    return (g < 0.0f ? g * e : g) / (1.0f + e) * u;
}

// gelu(g) * u with the tanh form of GELU, as kernels::geluTanhMul.
MB_HOST_DEVICE float geluTanhGate(float g, float u) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    return 0.5f * g * (1.0f + tanhf(kSqrt2OverPi * (g + 0.044715f * g * g * g))) * u;
}

// cap * tanh(x / cap): Gemma 2's final logit soft-cap (kernels::softcap, one element).
MB_HOST_DEVICE float softcapped(float x, float cap) { return cap * tanhf(x / cap); }

// A score already multiplied by the rule's scale, soft-capped when the rule says so
// (kernels::attentionWeights computes cap * tanh(s * scale / cap)).
MB_HOST_DEVICE float ruleScore(float scaled, const AttentionRule& rule) {
    return rule.softcap > 0.0f ? softcapped(scaled, rule.softcap) : scaled;
}

// The first key a query at `pos` sees: pos + 1 - window on a sliding layer whose window is
// shorter than the prefix, else 0 (kernels::attentionWeights' `first` for len = pos + 1).
MB_HOST_DEVICE int64_t firstVisibleKey(int64_t pos, int32_t window) {
    return window > 0 && pos + 1 > window ? pos + 1 - window : 0;
}

MB_HOST_DEVICE bool keyVisible(int64_t pos, int64_t key, int32_t window) {
    return key <= pos && key >= firstVisibleKey(pos, window);
}

// Keys [*begin, *end) of split `split` out of `splits` for a query at `pos`: the visible keys
// in equal contiguous ranges (the last ones possibly empty), so the splits cover them once.
MB_HOST_DEVICE void splitKeys(int64_t pos, int32_t window, int32_t split, int32_t splits, int64_t* begin,
                              int64_t* end) {
    const int64_t first = firstVisibleKey(pos, window), len = pos + 1;
    const int64_t chunk = (len - first + splits - 1) / splits;
    const int64_t b = first + split * chunk;
    *begin = b < len ? b : len;
    *end = b + chunk < len ? b + chunk : len;
}

} // namespace mb::kernels::cuda
