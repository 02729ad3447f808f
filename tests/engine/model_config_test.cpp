// ModelConfig::fromGguf for every architecture: defaults, and one clear error per missing, mistyped or
// out-of-range key.
#include "engine/gguf.h"
#include "engine/model_config.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <unistd.h>

using namespace mb::engine;

namespace {

using Keys = std::vector<std::pair<std::string, GgufValue>>;

// The keys a converter writes for `arch` (no tensors: the config needs none).
Keys baseKeys(const std::string& arch) {
    return {{"general.architecture", GgufValue::string(arch)},
            {arch + ".context_length", GgufValue::u32(1024)},
            {arch + ".embedding_length", GgufValue::u32(64)},
            {arch + ".block_count", GgufValue::u32(4)},
            {arch + ".feed_forward_length", GgufValue::u32(256)},
            {arch + ".attention.head_count", GgufValue::u32(4)},
            {arch + ".attention.head_count_kv", GgufValue::u32(2)},
            {arch + ".attention.layer_norm_rms_epsilon", GgufValue::f32(1e-6f)},
            {arch + ".vocab_size", GgufValue::u32(512)}};
}

// Writes `keys` (after `edit`) to a temporary file and reads its config.
ModelConfig configOf(Keys keys, const std::function<void(Keys&)>& edit = {}) {
    if (edit) edit(keys);
    const auto path = std::filesystem::temp_directory_path() / ("mb_cfg_" + std::to_string(::getpid()) + ".gguf");
    {
        GgufWriter w(path.string());
        for (auto& [k, v] : keys) w.set(k, v);
        w.finish();
    }
    const GgufFile f = GgufFile::open(path.string());
    std::filesystem::remove(path);
    return ModelConfig::fromGguf(f);
}

void set(Keys& keys, const std::string& key, GgufValue v) {
    for (auto& [k, old] : keys)
        if (k == key) {
            old = std::move(v);
            return;
        }
    keys.emplace_back(key, std::move(v));
}

void drop(Keys& keys, const std::string& key) {
    std::erase_if(keys, [&](const auto& kv) { return kv.first == key; });
}

// The config error for `keys` after `edit`, or "" when it loads.
std::string errorOf(Keys keys, const std::function<void(Keys&)>& edit) {
    try {
        configOf(std::move(keys), edit);
    } catch (const ModelError& e) {
        return e.what();
    }
    return "";
}

} // namespace

TEST(ModelConfig, ArchitecturesTakeTheirDefaults) {
    const ModelConfig g = configOf(baseKeys("gemma2"), [](Keys& k) {
        set(k, "gemma2.attention.key_length", GgufValue::u32(32));
        set(k, "gemma2.attention.value_length", GgufValue::u32(32));
        set(k, "gemma2.attention.sliding_window", GgufValue::u32(16));
    });
    EXPECT_EQ(g.arch, ModelArch::Gemma2);
    EXPECT_EQ(g.headDim, 32); // key_length, not 64 / 4
    EXPECT_EQ(g.qDim(), 128);
    EXPECT_EQ(g.ropeKind, RopeKind::Neox);
    EXPECT_EQ(g.activation, FfnActivation::GeluTanh);
    EXPECT_FLOAT_EQ(g.embedScale, 8.0f);
    EXPECT_FLOAT_EQ(g.attnSoftcap, 50.0f); // llama.cpp's defaults when the keys are absent
    EXPECT_FLOAT_EQ(g.finalSoftcap, 30.0f);
    EXPECT_EQ(g.windowOf(0), 16); // even layers slide
    EXPECT_EQ(g.windowOf(1), 0);
    EXPECT_FLOAT_EQ(g.attentionScale(), 1.0f / std::sqrt(32.0f));

    const ModelConfig p = configOf(baseKeys("phi3"), [](Keys& k) {
        set(k, "phi3.attention.sliding_window", GgufValue::u32(48));
    });
    EXPECT_EQ(p.windowOf(0), 48);
    EXPECT_EQ(p.windowOf(3), 48); // every layer

    const ModelConfig l = configOf(baseKeys("llama"), [](Keys& k) {
        set(k, "llama.attention.sliding_window", GgufValue::u32(16)); // Mistral files: ignored, as llama.cpp does
    });
    EXPECT_EQ(l.ropeKind, RopeKind::Norm);
    EXPECT_EQ(l.windowOf(0), 0);
    EXPECT_EQ(l.attnSoftcap, 0.0f);
    EXPECT_EQ(l.embedScale, 1.0f);

    const ModelConfig q = configOf(baseKeys("qwen3"));
    EXPECT_EQ(q.arch, ModelArch::Qwen3);
    EXPECT_EQ(q.ropeKind, RopeKind::Neox);

    const ModelConfig linear = configOf(baseKeys("llama"), [](Keys& k) {
        set(k, "llama.rope.scaling.type", GgufValue::string("linear"));
        set(k, "llama.rope.scaling.factor", GgufValue::f32(4.0f));
    });
    EXPECT_FLOAT_EQ(linear.ropePosScale, 0.25f);
}

TEST(ModelConfig, UnknownArchitectureNamesTheSupportedOnes) {
    const std::string e = errorOf(baseKeys("mamba"), {});
    EXPECT_NE(e.find("unsupported architecture 'mamba'"), std::string::npos) << e;
    EXPECT_NE(e.find("supported: llama, qwen2, qwen3, gemma2, phi3"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos);
}

TEST(ModelConfig, EachBadKeyIsAClearError) {
    struct Case {
        const char* arch;
        std::function<void(Keys&)> edit;
        const char* expect;
    };
    const Case cases[] = {
        {"qwen2", [](Keys& k) { drop(k, "qwen2.embedding_length"); }, "missing metadata key 'qwen2.embedding_length'"},
        {"qwen2", [](Keys& k) { set(k, "qwen2.block_count", GgufValue::string("4")); }, "'qwen2.block_count' is not an integer"},
        {"qwen2", [](Keys& k) { set(k, "qwen2.attention.head_count", GgufValue::u32(0)); }, "'qwen2.attention.head_count' = 0 is out of range"},
        {"qwen2", [](Keys& k) { set(k, "qwen2.attention.head_count_kv", GgufValue::u32(3)); }, "is not a multiple of head_count_kv 3"},
        {"gemma2", [](Keys& k) { set(k, "gemma2.attn_logit_softcapping", GgufValue::string("50")); }, "'gemma2.attn_logit_softcapping' is not a number"},
        {"gemma2", [](Keys& k) { set(k, "gemma2.final_logit_softcapping", GgufValue::f32(-1)); }, "'gemma2.final_logit_softcapping' = -1"},
        {"gemma2", [](Keys& k) { set(k, "gemma2.attention.sliding_window", GgufValue::i32(-5)); }, "'gemma2.attention.sliding_window' = -5 is out of range"},
        {"gemma2", [](Keys& k) { set(k, "gemma2.attention.sliding_window", GgufValue::f32(32)); }, "'gemma2.attention.sliding_window' is not an integer"},
        {"gemma2", [](Keys& k) { set(k, "gemma2.attention.key_length", GgufValue::u32(0)); }, "'gemma2.attention.key_length' = 0 is out of range"},
        {"gemma2", [](Keys& k) { set(k, "gemma2.attention.key_length", GgufValue::u32(32)); set(k, "gemma2.attention.value_length", GgufValue::u32(16)); }, "differs from the key length 32"},
        {"phi3", [](Keys& k) { set(k, "phi3.embedding_length", GgufValue::u32(66)); }, "no phi3.attention.key_length"},
        {"phi3", [](Keys& k) { set(k, "phi3.rope.dimension_count", GgufValue::u32(17)); }, "'phi3.rope.dimension_count' = 17 is out of range"},
        {"phi3", [](Keys& k) { set(k, "phi3.rope.dimension_count", GgufValue::u32(15)); }, "phi3.rope.dimension_count must be even"},
        {"llama", [](Keys& k) { set(k, "llama.rope.freq_base", GgufValue::f32(0)); }, "'llama.rope.freq_base' = 0"},
        {"llama", [](Keys& k) { set(k, "llama.rope.scaling.type", GgufValue::string("yarn")); }, "RoPE scaling 'yarn' is not supported"},
        {"llama", [](Keys& k) { set(k, "llama.rope.scaling.type", GgufValue::string("linear")); }, "must be > 0 for linear scaling"},
        {"llama", [](Keys& k) { set(k, "llama.attention.layer_norm_rms_epsilon", GgufValue::f32(2)); }, "layer_norm_rms_epsilon' = 2"},
        {"qwen3", [](Keys& k) { drop(k, "qwen3.vocab_size"); }, "cannot tell the vocabulary size"},
        {"qwen3", [](Keys& k) { set(k, "general.architecture", GgufValue::u32(1)); }, "'general.architecture' is not a string"},
    };
    for (const Case& c : cases) {
        const std::string e = errorOf(baseKeys(c.arch), c.edit);
        EXPECT_NE(e.find(c.expect), std::string::npos) << "expected '" << c.expect << "', got '" << e << "'";
        EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    }
}
