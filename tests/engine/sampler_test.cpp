// Sampler: greedy ties, seeded determinism, and what each filter keeps.
#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <vector>

using namespace mb::engine;

namespace {
std::vector<float> ramp(size_t n) {
    std::vector<float> l(n);
    for (size_t i = 0; i < n; ++i) l[i] = static_cast<float>(i % 17) * 0.3f - static_cast<float>(i % 5);
    return l;
}
std::vector<int32_t> draw(SamplerParams p, int n) {
    Sampler s(p);
    const auto logits = ramp(100);
    std::vector<int32_t> out;
    for (int i = 0; i < n; ++i) out.push_back(s.sample(logits, out));
    return out;
}
} // namespace

TEST(Sampler, GreedyTakesFirstIndexOnTies) {
    const std::vector<float> l = {0.5f, 2.0f, -1.0f, 2.0f};
    EXPECT_EQ(argmax(l), 1);
    SamplerParams p;
    p.temperature = 0.0f;
    Sampler s(p);
    EXPECT_EQ(s.sample(l, {}), 1);
}

TEST(Sampler, ArgmaxAgreesWithAScanOnEveryLengthAndPosition) {
    // Lengths around the 16-lane steps, the maximum (twice: the first must win) at every
    // place, NaNs that must never win, and all -inf.
    for (size_t n = 1; n <= 40; ++n)
        for (size_t at = 0; at < n; ++at) {
            std::vector<float> l = ramp(n);
            for (float& v : l) v -= 10.0f;
            l[at] = 5.0f;
            if (at + 3 < n) l[at + 3] = 5.0f;
            if (at > 0) l[at - 1] = std::nanf("");
            ASSERT_EQ(argmax(l), static_cast<int32_t>(at)) << "n=" << n << " at=" << at;
        }
    const std::vector<float> none(20, -INFINITY);
    EXPECT_EQ(argmax(none), 0);
}

TEST(Sampler, SameSeedSameTokens) {
    SamplerParams p;
    p.temperature = 1.0f;
    p.topK = 0;
    p.topP = 1.0f;
    p.minP = 0.0f;
    p.seed = 1234;
    EXPECT_EQ(draw(p, 200), draw(p, 200));
    SamplerParams q = p;
    q.seed = 99;
    EXPECT_NE(draw(p, 200), draw(q, 200));
}

TEST(Sampler, TopKOneIsGreedy) {
    SamplerParams p;
    p.temperature = 1.5f;
    p.topK = 1;
    const auto logits = ramp(100);
    Sampler s(p);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(s.sample(logits, {}), argmax(logits));
}

TEST(Sampler, TopKKeepsOnlyTheKBest) {
    SamplerParams p;
    p.temperature = 5.0f; // flat: all kept tokens get drawn
    p.topK = 3;
    p.topP = 1.0f;
    p.minP = 0.0f;
    const std::vector<float> l = {1.0f, 5.0f, 4.0f, 3.0f, 0.0f};
    Sampler s(p);
    std::set<int32_t> seen;
    for (int i = 0; i < 500; ++i) seen.insert(s.sample(l, {}));
    EXPECT_EQ(seen, (std::set<int32_t>{1, 2, 3}));
}

TEST(Sampler, TopPKeepsSmallestPrefixReachingMass) {
    SamplerParams p;
    p.temperature = 1.0f;
    p.topK = 0;
    p.topP = 0.5f;
    p.minP = 0.0f;
    // Probabilities 0.4, 0.3, 0.2, 0.1: the prefix reaching 0.5 is {0, 1}.
    const std::vector<float> l = {std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)};
    Sampler s(p);
    std::set<int32_t> seen;
    for (int i = 0; i < 500; ++i) seen.insert(s.sample(l, {}));
    EXPECT_EQ(seen, (std::set<int32_t>{0, 1}));
}

TEST(Sampler, MinPDropsUnlikelyTokens) {
    SamplerParams p;
    p.temperature = 1.0f;
    p.topK = 0;
    p.topP = 1.0f;
    p.minP = 0.6f; // keep p >= 0.6 * 0.4 = 0.24: tokens 0 and 1
    const std::vector<float> l = {std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)};
    Sampler s(p);
    std::set<int32_t> seen;
    for (int i = 0; i < 500; ++i) seen.insert(s.sample(l, {}));
    EXPECT_EQ(seen, (std::set<int32_t>{0, 1}));
}

TEST(Sampler, FrequenciesFollowTheDistribution) {
    SamplerParams p;
    p.temperature = 1.0f;
    p.topK = 0;
    p.topP = 1.0f;
    p.minP = 0.0f;
    p.seed = 5;
    const std::vector<float> l = {std::log(0.7f), std::log(0.2f), std::log(0.1f)};
    Sampler s(p);
    std::map<int32_t, int> counts;
    const int n = 20000;
    for (int i = 0; i < n; ++i) ++counts[s.sample(l, {})];
    EXPECT_NEAR(counts[0] / double(n), 0.7, 0.02);
    EXPECT_NEAR(counts[1] / double(n), 0.2, 0.02);
    EXPECT_NEAR(counts[2] / double(n), 0.1, 0.02);
}

TEST(Sampler, RepetitionPenaltyChangesGreedyChoice) {
    SamplerParams p;
    p.temperature = 0.0f;
    p.repeatPenalty = 2.0f;
    const std::vector<float> l = {3.0f, 2.0f, -1.0f};
    Sampler s(p);
    EXPECT_EQ(s.sample(l, {}), 0);
    const std::vector<int32_t> recent = {0};
    EXPECT_EQ(s.sample(l, recent), 1); // 3 / 2 = 1.5 < 2
}

TEST(Sampler, ValidateNamesTheBadParameter) {
    SamplerParams p;
    EXPECT_EQ(p.validate(), "");
    p.temperature = -1.0f;
    EXPECT_NE(p.validate().find("temperature"), std::string::npos);
    p = {};
    p.topP = 0.0f;
    EXPECT_NE(p.validate().find("top-p"), std::string::npos);
    p = {};
    p.minP = 2.0f;
    EXPECT_NE(p.validate().find("min-p"), std::string::npos);
    p = {};
    p.topK = -3;
    EXPECT_NE(p.validate().find("top-k"), std::string::npos);
}
