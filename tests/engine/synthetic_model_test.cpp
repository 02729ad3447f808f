// Synthetic models: real shapes, deterministic bytes, fallbacks, and a runnable result.
#include "engine/generator.h"
#include "engine/gguf.h"
#include "engine/llama_model.h"
#include "engine/synthetic_model.h"
#include "engine/synthetic_vocab.h"
#include "engine/tokenizer.h"

#include "test_data.h"

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

// Published shapes of the architecture presets (parameter counts as their model cards give).
TEST(SyntheticModel, ArchitecturePresetsHaveRealShapes) {
    struct Expect {
        const char* name;
        ModelArch arch;
        uint64_t parameters;
    };
    for (const Expect& e : {Expect{"llama-3.2-1b", ModelArch::Llama, 1235814432u},
                            Expect{"qwen2.5-0.5b", ModelArch::Qwen2, 494032768u},
                            Expect{"qwen3-0.6b", ModelArch::Qwen3, 596049920u},
                            Expect{"gemma-2-2b", ModelArch::Gemma2, 2614341888u},
                            Expect{"phi-3-mini", ModelArch::Phi3, 3821079552u}}) {
        const auto p = findSyntheticPreset(e.name);
        ASSERT_TRUE(p) << e.name;
        EXPECT_EQ(p->config.arch, e.arch) << e.name;
        EXPECT_EQ(syntheticParameterCount(*p), e.parameters) << e.name;
    }
    EXPECT_EQ(findSyntheticPreset("qwen3-0.6b")->config.headDim, 128); // 16 heads x 128 != 1024
    EXPECT_EQ(findSyntheticPreset("gemma-2-2b")->config.headDim, 256);
}

// The Llama 3.1 factors as the converter computes them, against tiny-llama31's rope_freqs.weight
// (README: [1 x15, 1.553415, 2.69453, 5.257327, 8 x14]).
TEST(SyntheticModel, Llama3RopeFactorsMatchTheConverters) {
    const std::vector<float> f = llama3RopeFactors(64, 500000.0f, 8.0f, 1.0f, 4.0f, 8192.0f);
    ASSERT_EQ(f.size(), 32u);
    for (int i = 0; i < 15; ++i) EXPECT_FLOAT_EQ(f[i], 1.0f);
    EXPECT_NEAR(f[15], 1.553415f, 1e-5);
    EXPECT_NEAR(f[16], 2.69453f, 1e-5);
    EXPECT_NEAR(f[17], 5.257327f, 1e-5);
    for (int i = 18; i < 32; ++i) EXPECT_FLOAT_EQ(f[i], 8.0f);
}

// Every architecture's synthetic file loads with its own keys, and a llama 3.2 preset carries its
// RoPE factors into the loaded config.
TEST(SyntheticModel, EveryArchitectureRoundTrips) {
    for (const char* name : {"tiny-qwen2", "tiny-qwen3", "tiny-gemma2", "tiny-phi3"}) {
        const auto preset = *findSyntheticPreset(name);
        const std::string p = tempPath(std::string(name) + ".gguf");
        writeSyntheticModel(preset, TensorType::Q8_0, 3, p);
        const auto m = LlamaModel::load(p);
        const ModelConfig& c = m->config();
        EXPECT_EQ(c.arch, preset.config.arch) << name;
        EXPECT_EQ(c.headDim, preset.config.headDim) << name;
        EXPECT_EQ(c.slidingWindow, preset.config.slidingWindow) << name;
        EXPECT_EQ(c.attnSoftcap, preset.config.attnSoftcap) << name;
        EXPECT_EQ(m->tiedOutput(), preset.tiedOutput) << name;
        std::filesystem::remove(p);
    }
}

// make-model --vocab: the model takes a real vocabulary's tokenizer and tokenizes as it does.
TEST(SyntheticModel, TakesARealVocabulary) {
    MB_REQUIRE_DATA(vocabPath, "vocab/ggml-vocab-llama3.gguf");
    const GgufFile vocab = GgufFile::open(vocabPath.string());
    const SyntheticPreset preset = withVocabulary(*findSyntheticPreset("tiny"), vocab);
    EXPECT_EQ(preset.config.vocabSize, 128256);
    const std::string p = tempPath("vocab.gguf");
    writeSyntheticModel(preset, SyntheticWeights{TensorType::Q8_0, std::nullopt}, 3, p, {}, &vocab);
    const auto m = LlamaModel::load(p);
    const auto reference = Tokenizer::create(Vocab::fromGguf(vocab));
    const std::string text = "Hello world! 3.14 tokens, don't they?";
    EXPECT_EQ(m->tokenizer().encode(text, true), reference->encode(text, true));
    EXPECT_EQ(m->config().vocabSize, 128256);
    std::filesystem::remove(p);
    {
        GgufWriter w(p);
        w.set("general.architecture", GgufValue::string("llama"));
        w.finish();
    }
    EXPECT_THROW(withVocabulary(preset, GgufFile::open(p)), ModelError) << "a file without tokens";
    std::filesystem::remove(p);
}

// Which precisions keep a file's bytes mapped: the native one always; a quantising mix
// (fast mode's `mixed`) never widens what the file already quantised, so a Q8_0 file stays
// mapped whole under `mixed` (its F16 embedding rule does not apply); the f16 precision still
// gets F16 weights, a copy.
TEST(SyntheticModel, QuantisedFilesStayMappedUnderAQuantisingMix) {
    const std::string p = tempPath("mapped_q8.gguf");
    writeSyntheticModel(*findSyntheticPreset("tiny"), TensorType::Q8_0, 3, p);
    const auto mapped = [](const LlamaModel& m, const std::string& tensor, const mb::kernels::WeightMatrix& w) {
        return w.data == m.file().findTensor(tensor)->data;
    };
    for (const Precision precision : {Precision::Native, Precision::Mixed, Precision::Int8}) {
        const auto m = LlamaModel::load(p, {precision, false});
        EXPECT_EQ(m->tokenEmbedding().type, TensorType::Q8_0) << precisionName(precision);
        EXPECT_TRUE(mapped(*m, "token_embd.weight", m->tokenEmbedding())) << precisionName(precision);
        EXPECT_TRUE(mapped(*m, "blk.0.attn_q.weight", m->layers()[0].wq)) << precisionName(precision);
    }
    const auto f16 = LlamaModel::load(p, {Precision::F16, false});
    EXPECT_EQ(f16->tokenEmbedding().type, TensorType::F16);
    EXPECT_FALSE(mapped(*f16, "token_embd.weight", f16->tokenEmbedding()));
    // From an F16 file, mixed quantises the matrices (a copy) and keeps the embedding F16, mapped.
    const std::string h = tempPath("mapped_f16.gguf");
    writeSyntheticModel(*findSyntheticPreset("tiny"), TensorType::F16, 3, h);
    const auto mixed = LlamaModel::load(h, {Precision::Mixed, false});
    EXPECT_EQ(mixed->layers()[0].wq.type, TensorType::Q8_0);
    EXPECT_TRUE(mapped(*mixed, "token_embd.weight", mixed->tokenEmbedding()));
    std::filesystem::remove(p);
    std::filesystem::remove(h);
}
