// The CUDA layer's per-element math (kernels/cuda/layer_math.h), host instantiation, against the CPU engine's own
// functions: RoPE pairs and angles with factors and scaling, gate activations, soft-caps, windows and attention splits.
// These run in every CI build; the device instantiation is checked by tests/gpu on a GPU.
#include "kernels/cuda/layer_math.h"

#include "kernels/cpu/ops.h"
#include "kernels/cpu/vec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

using namespace mb::kernels;
namespace cu = mb::kernels::cuda;

namespace {

std::vector<float> randomFloats(size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, scale);
    std::vector<float> x(n);
    for (auto& v : x) v = d(rng);
    return x;
}

struct RopeCase {
    cu::RopeForm form;
    int32_t headDim, ropeDim;
    float base, posScale;
    bool factors;
};

// What ropeKernel does for one token, on the host: every pair of every head of q then k.
void ropeTokenAsTheKernel(const RopeCase& rc, float* q, int32_t heads, float* k, int32_t kvHeads, int64_t pos,
                          const float* factors) {
    const int32_t half = rc.ropeDim / 2;
    for (int32_t p = 0; p < (heads + kvHeads) * half; ++p) {
        const int32_t head = p / half, i = p % half;
        float c, s;
        cu::ropeCosSin(pos, i, rc.ropeDim, rc.base, rc.posScale, factors, &c, &s);
        float* v = head < heads ? q + head * rc.headDim : k + (head - heads) * rc.headDim;
        cu::ropeRotate(v, cu::ropePair(rc.form, i, rc.ropeDim), c, s);
    }
}

} // namespace

// NORM and NEOX, full and partial rotation, Llama 3.1 factors and linear scaling: the same bits as
// kernels::ropeAngles + ropeApply / ropeApplyNeox.
TEST(CudaLayerMath, RopeEqualsTheCpuBitForBit) {
    const RopeCase cases[] = {
        {cu::RopeForm::Norm, 64, 64, 500000.0f, 1.0f, true},  {cu::RopeForm::Neox, 64, 64, 1e6f, 1.0f, false},
        {cu::RopeForm::Neox, 40, 24, 10000.0f, 0.25f, true},  {cu::RopeForm::Norm, 40, 24, 10000.0f, 0.5f, false},
        {cu::RopeForm::Neox, 128, 128, 10000.0f, 1.0f, true},
    };
    const int32_t heads = 3, kvHeads = 1;
    for (const RopeCase& rc : cases) {
        const auto factors = randomFloats(static_cast<size_t>(rc.ropeDim / 2), 7);
        std::vector<float> f(factors.size());
        for (size_t i = 0; i < f.size(); ++i) f[i] = 1.0f + 7.0f * std::fabs(factors[i]); // > 0, like rope_freqs
        const float* fp = rc.factors ? f.data() : nullptr;
        for (int64_t pos : {int64_t{0}, int64_t{1}, int64_t{37}, int64_t{4095}, int64_t{131071}}) {
            auto q = randomFloats(static_cast<size_t>(heads * rc.headDim), 11 + static_cast<uint32_t>(pos));
            auto k = randomFloats(static_cast<size_t>(kvHeads * rc.headDim), 13 + static_cast<uint32_t>(pos));
            auto wantQ = q, wantK = k;
            std::vector<float> cs(static_cast<size_t>(rc.ropeDim / 2)), sn(cs.size());
            ropeAngles(pos, rc.ropeDim, rc.base, cs.data(), sn.data(), rc.posScale, fp);
            const auto apply = rc.form == cu::RopeForm::Neox ? ropeApplyNeox : ropeApply;
            apply(wantQ.data(), heads, rc.headDim, rc.ropeDim, cs.data(), sn.data());
            apply(wantK.data(), kvHeads, rc.headDim, rc.ropeDim, cs.data(), sn.data());
            ropeTokenAsTheKernel(rc, q.data(), heads, k.data(), kvHeads, pos, fp);
            EXPECT_EQ(q, wantQ) << "form " << int(rc.form) << " ropeDim " << rc.ropeDim << " pos " << pos;
            EXPECT_EQ(k, wantK) << "form " << int(rc.form) << " ropeDim " << rc.ropeDim << " pos " << pos;
        }
    }
}

// The pairs themselves: NEOX rotates (i, i + ropeDim/2), NORM (2i, 2i + 1); every element below
// ropeDim is in exactly one pair and none above it.
TEST(CudaLayerMath, RopePairsCoverTheRotatedDimensionsOnce) {
    for (cu::RopeForm form : {cu::RopeForm::Norm, cu::RopeForm::Neox}) {
        const int32_t ropeDim = 24;
        std::vector<int> seen(40, 0);
        for (int32_t i = 0; i < ropeDim / 2; ++i) {
            const cu::RopePair p = cu::ropePair(form, i, ropeDim);
            ++seen[static_cast<size_t>(p.first)];
            ++seen[static_cast<size_t>(p.second)];
        }
        for (size_t d = 0; d < seen.size(); ++d) EXPECT_EQ(seen[d], d < 24 ? 1 : 0) << "element " << d;
    }
    EXPECT_EQ(cu::ropePair(cu::RopeForm::Neox, 3, 64).second, 35);
    EXPECT_EQ(cu::ropePair(cu::RopeForm::Norm, 3, 64).second, 7);
}

// GELU-tanh and SiLU gating: geluTanhMul's bits; the portable siluMul's bits, and the
// dispatched (SIMD) one within its exp approximation. Soft-cap: kernels::softcap's bits.
TEST(CudaLayerMath, GatesAndSoftcapEqualTheCpu) {
    auto g = randomFloats(1003, 3, 6.0f), u = randomFloats(1003, 4);
    g[0] = 0.0f;
    g[1] = -90.0f; // tails: e^-|g| underflows
    g[2] = 90.0f;
    std::vector<float> gelu = g, silu = g, siluSimd = g;
    geluTanhMul(gelu.data(), u.data(), static_cast<int64_t>(g.size()));
    portableVecKernels().siluMul(silu.data(), u.data(), static_cast<int64_t>(g.size()));
    vecKernels().siluMul(siluSimd.data(), u.data(), static_cast<int64_t>(g.size()));
    for (size_t i = 0; i < g.size(); ++i) {
        EXPECT_EQ(cu::geluTanhGate(g[i], u[i]), gelu[i]) << "gelu " << g[i];
        EXPECT_EQ(cu::siluGate(g[i], u[i]), silu[i]) << "silu " << g[i];
        EXPECT_NEAR(cu::siluGate(g[i], u[i]), siluSimd[i], 1e-6 * (1.0 + std::fabs(siluSimd[i]))) << "silu " << g[i];
    }
    auto x = randomFloats(500, 5, 40.0f);
    std::vector<float> capped = x;
    softcap(capped.data(), static_cast<int64_t>(x.size()), 30.0f);
    for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(cu::softcapped(x[i], 30.0f), capped[i]) << x[i];
}

// keyVisible is the CPU's rule: attentionWeights gives exactly 0 to the keys it hides.
TEST(CudaLayerMath, WindowPredicateMatchesTheCpuMask) {
    for (int32_t window : {0, 1, 5, 32, 48}) {
        for (int64_t len : {int64_t{1}, int64_t{5}, int64_t{32}, int64_t{33}, int64_t{100}}) {
            std::vector<float> w = randomFloats(static_cast<size_t>(len), 9);
            attentionWeights(w.data(), len, ScoreRule(0.125f, 0.0f, window));
            for (int64_t j = 0; j < len; ++j)
                EXPECT_EQ(cu::keyVisible(len - 1, j, window), w[static_cast<size_t>(j)] != 0.0f)
                    << "window " << window << " len " << len << " key " << j;
            EXPECT_FALSE(cu::keyVisible(len - 1, len, window)) << "a later key";
        }
    }
}

namespace {
// Softmax weights of a query at position len - 1 over raw scores q.k, computed as the split
// kernel plans it: each split's keys (splitKeys) reduced to (max, sum) of ruleScore(q.k x scale),
// the splits merged. covered[j] counts the splits that hold key j.
std::vector<double> splitWeights(const std::vector<float>& raw, const cu::AttentionRule& rule, int32_t splits,
                                 std::vector<int>& covered) {
    const auto len = static_cast<int64_t>(raw.size());
    auto score = [&](int64_t j) { return static_cast<double>(cu::ruleScore(raw[size_t(j)] * rule.scale, rule)); };
    covered.assign(raw.size(), 0);
    std::vector<double> m(size_t(splits), -1e300), l(size_t(splits), 0.0), weight(raw.size(), 0.0);
    double mAll = -1e300;
    for (int32_t sp = 0; sp < splits; ++sp) {
        int64_t b, e;
        cu::splitKeys(len - 1, rule.window, sp, splits, &b, &e);
        for (int64_t j = b; j < e; ++j) {
            ++covered[size_t(j)];
            m[size_t(sp)] = std::max(m[size_t(sp)], score(j));
        }
        for (int64_t j = b; j < e; ++j) l[size_t(sp)] += std::exp(score(j) - m[size_t(sp)]);
        if (e > b) mAll = std::max(mAll, m[size_t(sp)]);
    }
    double total = 0;
    for (int32_t sp = 0; sp < splits; ++sp)
        if (l[size_t(sp)] > 0) total += l[size_t(sp)] * std::exp(m[size_t(sp)] - mAll);
    for (int64_t j = 0; j < len; ++j)
        if (covered[size_t(j)]) weight[size_t(j)] = std::exp(score(j) - mAll) / total;
    return weight;
}
} // namespace

// The split kernel's plan on the host: splitKeys' ranges cover the visible keys once, and the
// merged online softmax of ruleScore gives attentionWeights' weights (scale, Gemma 2's
// soft-cap, a sliding window), for splits that leave some ranges empty.
TEST(CudaLayerMath, SplitAttentionPlanGivesTheCpuWeights) {
    const cu::AttentionRule rules[] = {{0.125f, 0.0f, 0}, {0.125f, 50.0f, 0}, {0.0625f, 50.0f, 32}, {0.2f, 0.0f, 7}};
    for (const cu::AttentionRule& rule : rules) {
        for (int64_t len : {int64_t{1}, int64_t{3}, int64_t{31}, int64_t{33}, int64_t{200}}) {
            const auto raw = randomFloats(size_t(len), 17, 30.0f); // q.k, unscaled
            std::vector<float> want = raw;
            attentionWeights(want.data(), len, ScoreRule(rule.scale, rule.softcap, rule.window));
            for (int32_t splits : {1, 5, 32}) {
                std::vector<int> covered;
                const auto got = splitWeights(raw, rule, splits, covered);
                for (int64_t j = 0; j < len; ++j) {
                    EXPECT_EQ(covered[size_t(j)], cu::keyVisible(len - 1, j, rule.window) ? 1 : 0)
                        << "key " << j << " of " << len << ", " << splits << " splits, window " << rule.window;
                    EXPECT_NEAR(got[size_t(j)], want[size_t(j)], 2e-6)
                        << "key " << j << " of " << len << ", cap " << rule.softcap << ", window " << rule.window;
                }
            }
        }
    }
}
