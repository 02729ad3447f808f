// The LLaMA forward pass on the real stories260K model: greedy goldens, logits, batching, threads.
#include "engine/forward.h"
#include "engine/generator.h"
#include "engine/llama_model.h"
#include "engine/model_panels.h"
#include "kernels/cpu/vec.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <numeric>
#include <thread>

using namespace mb::engine;
using mb::kernels::ThreadPool;

namespace {

nlohmann::json golden() {
    std::ifstream in(mb::test::dataDir() / "golden/stories260K.json");
    return nlohmann::json::parse(in);
}

std::vector<int32_t> greedy(const LlamaModel& m, int threads, int maxTokens, const std::vector<int32_t>& prompt) {
    ThreadPool pool(threads);
    GenerateOptions opts;
    opts.maxTokens = maxTokens;
    opts.sampling.temperature = 0.0f;
    return generate(m, pool, prompt, opts).tokens;
}

// Whether the chosen kernel table multiplies panels of some matrix of m (so a Forward makes them).
bool tableHasPanelsFor(const LlamaModel& m) {
    bool any = panelBytesOf(m.output()) > 0;
    for (const LayerWeights& l : m.layers())
        for (auto proj : kProjections) any = any || panelBytesOf(l.*proj) > 0;
    return any;
}

std::vector<float> logitsAfter(const LlamaModel& m, const std::vector<int32_t>& tokens, int threads = 1,
                               bool panels = true) {
    ThreadPool pool(threads);
    ForwardOptions options;
    options.panels = panels;
    Forward fwd(m, pool, options);
    EXPECT_EQ(fwd.panelBytes() > 0, panels && tableHasPanelsFor(m));
    const int64_t bs = 16;
    KvCache cache(m.config(), blocksFor(static_cast<int64_t>(tokens.size()), bs), bs);
    std::vector<int32_t> table(static_cast<size_t>(cache.blocks()));
    std::iota(table.begin(), table.end(), 0);
    std::vector<float> logits(static_cast<size_t>(m.config().vocabSize));
    fwd.runSequence(tokens, 0, cache, table, logits.data());
    return logits;
}

} // namespace

TEST(LlamaModel, LoadsStories260KShapes) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    const ModelConfig& c = m->config();
    EXPECT_EQ(c.dim, 64);
    EXPECT_EQ(c.layers, 5);
    EXPECT_EQ(c.heads, 8);
    EXPECT_EQ(c.kvHeads, 4);
    EXPECT_EQ(c.ffnDim, 172);
    EXPECT_EQ(c.vocabSize, 512); // from the token list: the file has no llama.vocab_size
    EXPECT_EQ(c.contextLength, 512);
    EXPECT_FALSE(m->tiedOutput());
}

class GreedyGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(GreedyGolden, ReproducesTokenIds) {
    MB_REQUIRE_DATA(path, "models/" + GetParam());
    MB_REQUIRE_DATA(goldenPath, "golden/stories260K.json");
    const auto m = LlamaModel::load(path.string());
    const auto all = golden(); // keep the document alive across the loop
    for (const auto& g : all["generation"]) {
        const auto prompt = g["prompt_tokens"].get<std::vector<int32_t>>();
        ASSERT_EQ(m->tokenizer().encode(g["prompt"].get<std::string>(), true), prompt);
        const auto expected = g["generated_tokens"].get<std::vector<int32_t>>();
        EXPECT_EQ(greedy(*m, 1, static_cast<int>(expected.size()), prompt), expected)
            << GetParam() << " with " << expected.size() << " tokens";
    }
}

INSTANTIATE_TEST_SUITE_P(Stories260K, GreedyGolden, ::testing::Values("stories260K.gguf", "stories260K-f16.gguf"));

TEST(LlamaModel, GoldenTextDecodes) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    MB_REQUIRE_DATA(goldenPath, "golden/stories260K.json");
    const auto m = LlamaModel::load(path.string());
    const auto all = golden();
    const auto& g = all["generation"][1];
    ThreadPool pool(1);
    GenerateOptions opts;
    opts.maxTokens = 100;
    opts.sampling.temperature = 0.0f;
    const auto prompt = g["prompt_tokens"].get<std::vector<int32_t>>();
    const GenerateResult r = generate(*m, pool, prompt, opts);
    // The golden text includes the prompt; ours is the generated text only.
    EXPECT_EQ(g["prompt"].get<std::string>() + r.text, g["text"].get<std::string>());
}

TEST(LlamaModel, LogitsAfterPromptMatchReference) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    MB_REQUIRE_DATA(refPath, "golden/stories260K_logits_once_upon_a_time_pos4.f32");
    const auto m = LlamaModel::load(path.string());
    std::vector<float> ref(512);
    std::ifstream in(refPath, std::ios::binary);
    in.read(reinterpret_cast<char*>(ref.data()), 512 * sizeof(float));
    ASSERT_TRUE(in.good());
    // With the F32 panels (outer products, another summation order; made where the kernel
    // table has them) and from the rows (dot tiles): both within the reference's tolerance.
    std::vector<float> byLayout[2];
    for (bool panels : {true, false}) {
        const auto logits = logitsAfter(*m, {1, 403, 407, 261, 378}, 2, panels);
        float maxDiff = 0;
        for (size_t i = 0; i < 512; ++i) maxDiff = std::max(maxDiff, std::fabs(logits[i] - ref[i]));
        EXPECT_LT(maxDiff, 1e-4f) << (panels ? "panels" : "rows");
        byLayout[panels ? 1 : 0] = logits;
    }
    // Where panels are made, the products really come from them: other bits than the rows'.
    if (mb::kernels::vecKernels().gemmPanelsF32) {
        EXPECT_NE(byLayout[0], byLayout[1]);
    }
}

TEST(LlamaModel, Int8LogitsFromPanelsAndFromRowsAgree) {
    // stories260K requantised to Q8_0 (its 172-wide ffn_down stays F16): the Q8_0 panels
    // (another order of the F32 additions over the same integer block sums) and the rows
    // give nearly the same logits and the same argmax, with other bits where panels exist.
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string(), {.precision = Precision::Int8});
    const auto panels = logitsAfter(*m, {1, 403, 407, 261, 378}, 2, true);
    const auto rows = logitsAfter(*m, {1, 403, 407, 261, 378}, 2, false);
    float maxDiff = 0;
    for (size_t i = 0; i < rows.size(); ++i) maxDiff = std::max(maxDiff, std::fabs(panels[i] - rows[i]));
    EXPECT_LT(maxDiff, 1e-4f);
    EXPECT_EQ(argmax(panels), argmax(rows));
    if (mb::kernels::vecKernels().gemmPanelsQ8_0) {
        EXPECT_NE(panels, rows);
    }
}

TEST(LlamaModel, F32PanelsAreMadeOnceAndSharedByEveryForward) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    EXPECT_EQ(m->panelBytes(), 0u); // nothing made until a Forward (or a caller) asks
    std::vector<const ModelPanels*> seen(4);
    std::vector<std::thread> threads;
    for (size_t i = 0; i < seen.size(); ++i) threads.emplace_back([&, i] { seen[i] = m->cpuPanels(); });
    for (auto& t : threads) t.join();
    for (const ModelPanels* p : seen) EXPECT_EQ(p, seen[0]);
    if (!mb::kernels::vecKernels().gemmPanelsF32) {
        EXPECT_EQ(seen[0], nullptr);
        return;
    }
    ASSERT_NE(seen[0], nullptr);
    EXPECT_EQ(m->panelBytes(), seen[0]->bytes);
    EXPECT_GT(seen[0]->bytes, 0u);
    ThreadPool pool(1);
    Forward a(*m, pool), b(*m, pool);
    EXPECT_EQ(a.panelBytes(), seen[0]->bytes);
    EXPECT_EQ(b.panelBytes(), seen[0]->bytes);
    EXPECT_EQ(m->cpuPanels(), seen[0]);
}

TEST(LlamaModel, LogitsAtBosMatchGolden) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    MB_REQUIRE_DATA(goldenPath, "golden/stories260K.json");
    const auto m = LlamaModel::load(path.string());
    const auto g = golden()["logits_bos_pos0"];
    const auto logits = logitsAfter(*m, {1});
    EXPECT_EQ(argmax(logits), g["argmax"].get<int32_t>());
    const auto first8 = g["first8"].get<std::vector<float>>();
    for (size_t i = 0; i < first8.size(); ++i) EXPECT_NEAR(logits[i], first8[i], 1e-4f) << i;
}

TEST(LlamaModel, GreedyIdenticalWithOneAndTwoThreads) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    const std::vector<int32_t> prompt = {1, 403, 407, 261, 378};
    EXPECT_EQ(greedy(*m, 1, 100, prompt), greedy(*m, 2, 100, prompt));
    EXPECT_EQ(logitsAfter(*m, prompt, 1), logitsAfter(*m, prompt, 2));
}

TEST(LlamaModel, BatchedPrefillEqualsTokenByToken) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    const std::vector<int32_t> tokens = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317,
                                         426, 338, 401, 396, 267};
    ThreadPool pool(2);
    const int64_t bs = 16;
    auto fresh = [&] { return KvCache(m->config(), 2, bs); };
    const std::vector<int32_t> table = {1, 0}; // blocks deliberately out of order
    std::vector<float> batched(512), stepwise(512);

    KvCache a = fresh();
    Forward chunked(*m, pool, {.maxChunk = 8}); // 20 tokens take three passes of at most 8
    chunked.runSequence(tokens, 0, a, table, batched.data());

    KvCache b = fresh();
    Forward single(*m, pool, {.maxChunk = 1});
    for (size_t i = 0; i < tokens.size(); ++i)
        single.runSequence(std::span(tokens).subspan(i, 1), static_cast<int64_t>(i), b, table, stepwise.data());
    for (size_t i = 0; i < 512; ++i) ASSERT_NEAR(batched[i], stepwise[i], 1e-5f) << i;
}

TEST(LlamaModel, TwoSequencesInOneBatchMatchSeparateRuns) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    const std::vector<int32_t> p1 = {1, 403, 407, 261, 378}, p2 = {1, 346, 306, 414};
    const auto l1 = logitsAfter(*m, p1);
    const auto l2 = logitsAfter(*m, p2);
    ThreadPool pool(2);
    Forward fwd(*m, pool);
    KvCache cache(m->config(), 2, 16);
    const std::vector<int32_t> t1 = {0}, t2 = {1};
    const std::span<const int32_t> tables[2] = {t1, t2};
    std::vector<int32_t> tokens(p1);
    tokens.insert(tokens.end(), p2.begin(), p2.end());
    const std::vector<int64_t> pos = {0, 1, 2, 3, 4, 0, 1, 2, 3};
    const std::vector<int32_t> seq = {0, 0, 0, 0, 0, 1, 1, 1, 1};
    const std::vector<uint8_t> want = {0, 0, 0, 0, 1, 0, 0, 0, 1};
    std::vector<float> logits(2 * 512);
    KvCache* const caches[2] = {&cache, &cache};
    fwd.run({tokens, pos, seq, caches, tables, want}, logits.data());
    for (size_t i = 0; i < 512; ++i) {
        ASSERT_NEAR(logits[i], l1[i], 1e-5f);
        ASSERT_NEAR(logits[512 + i], l2[i], 1e-5f);
    }
}

TEST(LlamaModel, RejectsBadTokensAndPositions) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    ThreadPool pool(1);
    Forward fwd(*m, pool);
    KvCache cache(m->config(), 1, 16);
    const std::vector<int32_t> table = {0};
    std::vector<float> logits(512);
    const std::vector<int32_t> bad = {512};
    EXPECT_THROW(fwd.runSequence(bad, 0, cache, table, logits.data()), ModelError);
    const std::vector<int32_t> ok = {1};
    EXPECT_THROW(fwd.runSequence(ok, 16, cache, table, logits.data()), ModelError); // beyond the block table
}

TEST(Generate, RejectsPromptLongerThanContext) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    ThreadPool pool(1);
    const std::vector<int32_t> prompt(512, 261);
    EXPECT_THROW(generate(*m, pool, prompt, {}), std::invalid_argument);
    EXPECT_THROW(generate(*m, pool, {}, {}), std::invalid_argument);
}

TEST(Generate, StopsAtContextEnd) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    ThreadPool pool(1);
    std::vector<int32_t> prompt(500, 261);
    prompt[0] = 1;
    GenerateOptions opts;
    opts.maxTokens = 100;
    opts.sampling.temperature = 0.0f;
    opts.stopAtEos = false;
    const GenerateResult r = generate(*m, pool, prompt, opts);
    EXPECT_EQ(r.stop, StopReason::Context);
    // One token from the prompt's logits, then one per input at positions 500..511.
    EXPECT_EQ(r.tokens.size(), 13u);
}

TEST(Generate, CallbackCanCancel) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    const auto m = LlamaModel::load(path.string());
    ThreadPool pool(1);
    GenerateOptions opts;
    opts.maxTokens = 50;
    opts.sampling.temperature = 0.0f;
    int seen = 0;
    const GenerateResult r = generate(*m, pool, std::vector<int32_t>{1, 403}, opts, [&](int32_t, std::string_view) {
        return ++seen < 3;
    });
    EXPECT_EQ(r.stop, StopReason::Cancelled);
    EXPECT_EQ(r.tokens.size(), 3u);
}
