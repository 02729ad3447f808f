// Precision A/B on stories260K: self-comparison, F32 vs F16 agreement/KL, perplexity by hand.
#include "engine/forward.h"
#include "engine/llama_model.h"
#include "engine/precision_eval.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <numeric>

using namespace mb::engine;
using mb::kernels::ThreadPool;

namespace {

// Prompt + greedy continuation of the golden "Once upon a time" generation (105 tokens).
std::vector<int32_t> goldenSequence() {
    std::ifstream in(mb::test::dataDir() / "golden/stories260K.json");
    const auto g = nlohmann::json::parse(in)["generation"][1];
    auto seq = g["prompt_tokens"].get<std::vector<int32_t>>();
    const auto gen = g["generated_tokens"].get<std::vector<int32_t>>();
    seq.insert(seq.end(), gen.begin(), gen.end());
    return seq;
}

std::vector<std::vector<int32_t>> prompts(const LlamaModel& m) {
    return {m.tokenizer().encode("Once upon a time", true), m.tokenizer().encode("Lily and Tom went", true),
            m.tokenizer().encode("The cat", true)};
}

} // namespace

TEST(PrecisionEval, ModelAgainstItselfAgreesFully) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    ThreadPool pool(2);
    const PrecisionComparison r = comparePrecision(*m, *m, pool, prompts(*m), 16);
    EXPECT_EQ(r.positions, 48);
    EXPECT_DOUBLE_EQ(r.agreement, 1.0);
    EXPECT_NEAR(r.meanKl, 0.0, 1e-9);
    EXPECT_DOUBLE_EQ(r.refPerplexity, r.candPerplexity);
    EXPECT_GT(r.refPerplexity, 1.0);
}

TEST(PrecisionEval, F16FollowsF32Closely) {
    MB_REQUIRE_DATA(f32Path, "models/stories260K.gguf");
    MB_REQUIRE_DATA(f16Path, "models/stories260K-f16.gguf");
    const auto f32 = LlamaModel::load(f32Path.string());
    const auto f16 = LlamaModel::load(f16Path.string());
    ThreadPool pool(2);
    const PrecisionComparison r = comparePrecision(*f32, *f16, pool, prompts(*f32), 32);
    EXPECT_EQ(r.positions, 96);
    EXPECT_GE(r.agreement, 0.95);
    EXPECT_GT(r.meanKl, 0.0);
    EXPECT_LT(r.meanKl, 0.01);
    EXPECT_NEAR(r.candPerplexity / r.refPerplexity, 1.0, 0.05);
}

TEST(PrecisionEval, PerplexityOfOwnGreedyTextIsLow) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    MB_REQUIRE_DATA(goldenPath, "golden/stories260K.json");
    const auto m = LlamaModel::load(path.string());
    ThreadPool pool(2);
    const std::vector<int32_t> seq = goldenSequence();
    const PerplexityResult r = perplexityDetail(*m, pool, seq, std::min<int64_t>(512, m->config().contextLength));
    EXPECT_TRUE(std::isfinite(r.perplexity));
    EXPECT_GT(r.perplexity, 1.0);
    EXPECT_LT(r.perplexity, 10.0);
    EXPECT_EQ(r.windows, 1);
    EXPECT_EQ(r.predicted, static_cast<int64_t>(seq.size()) - 1);
    // Windows of 32 (BOS + 31 tokens): every token after BOS still predicted once.
    const PerplexityResult w = perplexityDetail(*m, pool, seq, 32);
    EXPECT_EQ(w.windows, 4); // 104 tokens after BOS in windows of 31
    EXPECT_EQ(w.predicted, static_cast<int64_t>(seq.size()) - 1);
    EXPECT_TRUE(std::isfinite(w.perplexity));
    EXPECT_DOUBLE_EQ(perplexity(*m, pool, seq, 32), w.perplexity);
}

TEST(PrecisionEval, PerplexityMatchesHandComputedNll) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    MB_REQUIRE_DATA(goldenPath, "golden/stories260K.json");
    const auto m = LlamaModel::load(path.string());
    ThreadPool pool(1);
    const std::vector<int32_t> full = goldenSequence();
    const std::vector<int32_t> seq(full.begin(), full.begin() + 3);
    ASSERT_EQ(seq[0], m->tokenizer().bos());
    // One direct batched pass with logits for both predicting positions.
    KvCache cache(m->config(), 1, 16);
    const std::vector<int32_t> table = {0};
    const std::vector<int64_t> pos = {0, 1, 2};
    const std::vector<int32_t> seqIds = {0, 0, 0};
    const std::vector<uint8_t> want = {1, 1, 0};
    KvCache* const caches[1] = {&cache};
    const std::span<const int32_t> tables[1] = {table};
    const auto vocab = static_cast<size_t>(m->config().vocabSize);
    std::vector<float> logits(2 * vocab);
    Forward(*m, pool).run({seq, pos, seqIds, caches, tables, want}, logits.data());
    double nll = 0;
    for (size_t i = 0; i < 2; ++i) {
        double mx = -INFINITY, sum = 0;
        for (size_t t = 0; t < vocab; ++t) mx = std::max<double>(mx, logits[i * vocab + t]);
        for (size_t t = 0; t < vocab; ++t) sum += std::exp(logits[i * vocab + t] - mx);
        nll -= logits[i * vocab + static_cast<size_t>(seq[i + 1])] - mx - std::log(sum);
    }
    EXPECT_NEAR(perplexity(*m, pool, seq, 16), std::exp(nll / 2), 1e-9);
}

TEST(PrecisionEval, RejectsBadInput) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    ThreadPool pool(1);
    const std::vector<int32_t> one = {m->tokenizer().bos()};
    EXPECT_THROW(perplexity(*m, pool, one, 16), std::invalid_argument);
    const std::vector<int32_t> two = {m->tokenizer().bos(), 300};
    EXPECT_THROW(perplexity(*m, pool, two, m->config().contextLength + 1), std::invalid_argument);
    EXPECT_THROW(comparePrecision(*m, *m, pool, {two}, m->config().contextLength), std::invalid_argument);
}
