// Synthetic models: real shapes, deterministic bytes, fallbacks, and a runnable result.
#include "engine/generator.h"
#include "engine/gguf.h"
#include "engine/llama_model.h"
#include "engine/synthetic_model.h"
#include "engine/synthetic_vocab.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace mb::engine;
using mb::kernels::TensorType;

namespace {
std::string tempPath(const std::string& name) {
    return (std::filesystem::temp_directory_path() / ("mb_synth_" + std::to_string(::getpid()) + "_" + name)).string();
}
std::string slurp(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}
} // namespace

TEST(SyntheticModel, PresetsHaveRealShapes) {
    const auto s110 = findSyntheticPreset("stories110m");
    ASSERT_TRUE(s110);
    EXPECT_EQ(syntheticParameterCount(*s110), 134105856u); // 134 M with an untied output matrix
    const auto s15 = findSyntheticPreset("stories15m");
    ASSERT_TRUE(s15);
    EXPECT_EQ(s15->config.dim, 288);
    EXPECT_EQ(s15->config.ffnDim, 768);
    const auto l3 = findSyntheticPreset("llama-3-8b");
    ASSERT_TRUE(l3);
    EXPECT_EQ(l3->config.kvHeads, 8);
    EXPECT_EQ(l3->config.vocabSize, 128256);
    EXPECT_NEAR(static_cast<double>(syntheticParameterCount(*l3)), 8.03e9, 0.01e9);
    EXPECT_FALSE(findSyntheticPreset("nope"));
}

TEST(SyntheticModel, SameSeedSameBytesAndRunnable) {
    const auto tiny = *findSyntheticPreset("tiny");
    const std::string a = tempPath("a.gguf"), b = tempPath("b.gguf"), c = tempPath("c.gguf");
    writeSyntheticModel(tiny, TensorType::Q8_0, 7, a);
    writeSyntheticModel(tiny, TensorType::Q8_0, 7, b);
    writeSyntheticModel(tiny, TensorType::Q8_0, 8, c);
    EXPECT_EQ(slurp(a), slurp(b));
    EXPECT_NE(slurp(a), slurp(c));

    const auto m = LlamaModel::load(a);
    // ffn_down has 80 columns, not a multiple of 32: it must fall back to F16.
    EXPECT_EQ(m->file().findTensor("blk.0.ffn_down.weight")->type, TensorType::F16);
    EXPECT_EQ(m->file().findTensor("blk.0.ffn_up.weight")->type, TensorType::Q8_0);
    EXPECT_EQ(m->file().findTensor("blk.0.attn_norm.weight")->type, TensorType::F32);
    mb::kernels::ThreadPool pool(2);
    GenerateOptions opts;
    opts.maxTokens = 10;
    opts.stopAtEos = false;
    const auto prompt = m->tokenizer().encode("hello world", true);
    const GenerateResult r = generate(*m, pool, prompt, opts);
    EXPECT_EQ(r.tokens.size(), 10u);
    for (const auto& p : {a, b, c}) std::filesystem::remove(p);
}

TEST(SyntheticModel, EveryDtypeLoads) {
    const auto tiny = *findSyntheticPreset("tiny");
    for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::Q8_0, TensorType::Q4_0}) {
        const std::string p = tempPath("t.gguf");
        writeSyntheticModel(tiny, t, 1, p);
        const auto m = LlamaModel::load(p);
        EXPECT_EQ(m->file().findTensor("blk.1.attn_q.weight")->type, t);
        EXPECT_EQ(m->parameterCount(), syntheticParameterCount(tiny));
        std::filesystem::remove(p);
    }
}

TEST(SyntheticModel, CancelLeavesNoFile) {
    const auto tiny = *findSyntheticPreset("tiny");
    const std::string p = tempPath("cancel.gguf");
    EXPECT_THROW(writeSyntheticModel(tiny, TensorType::F16, 1, p, [](double f) { return f < 0.5; }),
                 std::runtime_error);
    EXPECT_FALSE(std::filesystem::exists(p));
}

TEST(SyntheticVocab, EveryTextTokenizesAndRoundTrips) {
    const auto tok = Tokenizer::create(makeSyntheticVocab(32000));
    EXPECT_EQ(tok->size(), 32000u);
    for (const std::string text : {"Once upon a time", "the fast mode, the regular mode!", "naïve café 日本 🙂", "a\nb\tc"}) {
        const auto ids = tok->encode(text, true);
        ASSERT_FALSE(ids.empty());
        EXPECT_EQ(ids.front(), 1);
        EXPECT_EQ(tok->decode(ids), text);
    }
    // Common words are single tokens.
    EXPECT_EQ(tok->encode("the", false).size(), 1u);
}
