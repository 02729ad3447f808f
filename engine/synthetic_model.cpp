// Writing seeded random LLaMA models with real shapes.
#include "engine/synthetic_model.h"

#include "engine/gguf.h"
#include "engine/synthetic_vocab.h"
#include "kernels/cpu/quant.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>

namespace mb::engine {

using kernels::TensorType;

namespace {

SyntheticPreset preset(const char* name, int64_t dim, int64_t layers, int64_t heads, int64_t kvHeads,
                       int64_t ffn, int64_t vocab, int64_t ctx, float ropeBase, bool tied) {
    SyntheticPreset p;
    p.name = name;
    ModelConfig& c = p.config;
    c.dim = dim;
    c.layers = layers;
    c.heads = heads;
    c.kvHeads = kvHeads;
    c.headDim = dim / heads;
    c.ffnDim = ffn;
    c.vocabSize = vocab;
    c.contextLength = ctx;
    c.ropeDim = c.headDim;
    c.ropeBase = ropeBase;
    c.normEps = 1e-5f;
    p.tiedOutput = tied;
    return p;
}

uint64_t splitmix(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string& s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ull;
    return h;
}

struct TensorPlan {
    std::string name;
    int64_t rows;
    int64_t cols;
    bool isNorm;
};

} // namespace

bool isSyntheticWeightType(TensorType type) {
    return kernels::traits(type).fromFloat != nullptr && type != TensorType::BF16 && type != TensorType::Q8_K;
}

std::optional<SyntheticWeights> syntheticWeightsFromName(std::string_view name) {
    if (const auto t = kernels::tensorTypeFromName(name); t && isSyntheticWeightType(*t))
        return SyntheticWeights{*t, std::nullopt};
    if (const auto mix = quantizeTargetFromName(name)) return SyntheticWeights{targetInfo(*mix).base, *mix};
    return std::nullopt;
}

std::vector<std::string> syntheticWeightNames() {
    std::vector<std::string> names;
    for (const auto& row : kernels::tensorTypeTable())
        if (isSyntheticWeightType(row.type)) names.emplace_back(row.name);
    for (const auto& t : quantizeTargets())
        if (!kernels::tensorTypeFromName(t.name)) names.emplace_back(t.name);
    return names;
}

std::string syntheticWeightTypeNames() {
    const std::vector<std::string> names = syntheticWeightNames();
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    return out;
}

const std::vector<SyntheticPreset>& syntheticPresets() {
    static const std::vector<SyntheticPreset> presets = {
        preset("tiny", 64, 2, 4, 2, 80, 512, 128, 10000.0f, false),
        preset("stories15m", 288, 6, 6, 6, 768, 32000, 256, 10000.0f, false),
        preset("stories42m", 512, 8, 8, 8, 1376, 32000, 1024, 10000.0f, false),
        preset("stories110m", 768, 12, 12, 12, 2048, 32000, 1024, 10000.0f, false),
        preset("tinyllama-1.1b", 2048, 22, 32, 4, 5632, 32000, 2048, 10000.0f, false),
        preset("llama-3.2-1b", 2048, 16, 32, 8, 8192, 128256, 131072, 500000.0f, true),
        preset("llama-2-7b", 4096, 32, 32, 32, 11008, 32000, 4096, 10000.0f, false),
        preset("llama-3-8b", 4096, 32, 32, 8, 14336, 128256, 8192, 500000.0f, false),
    };
    return presets;
}

std::optional<SyntheticPreset> findSyntheticPreset(const std::string& name) {
    for (const auto& p : syntheticPresets())
        if (p.name == name) return p;
    return std::nullopt;
}

namespace {
std::vector<TensorPlan> planTensors(const SyntheticPreset& p) {
    const ModelConfig& c = p.config;
    std::vector<TensorPlan> plan;
    plan.push_back({"token_embd.weight", c.vocabSize, c.dim, false});
    for (int64_t l = 0; l < c.layers; ++l) {
        const std::string b = "blk." + std::to_string(l) + ".";
        plan.push_back({b + "attn_norm.weight", 1, c.dim, true});
        plan.push_back({b + "attn_q.weight", c.qDim(), c.dim, false});
        plan.push_back({b + "attn_k.weight", c.kvDim(), c.dim, false});
        plan.push_back({b + "attn_v.weight", c.kvDim(), c.dim, false});
        plan.push_back({b + "attn_output.weight", c.dim, c.qDim(), false});
        plan.push_back({b + "ffn_norm.weight", 1, c.dim, true});
        plan.push_back({b + "ffn_gate.weight", c.ffnDim, c.dim, false});
        plan.push_back({b + "ffn_down.weight", c.dim, c.ffnDim, false});
        plan.push_back({b + "ffn_up.weight", c.ffnDim, c.dim, false});
    }
    plan.push_back({"output_norm.weight", 1, c.dim, true});
    if (!p.tiedOutput) plan.push_back({"output.weight", c.vocabSize, c.dim, false});
    return plan;
}
} // namespace

uint64_t syntheticParameterCount(const SyntheticPreset& preset) {
    uint64_t n = 0;
    for (const auto& t : planTensors(preset)) n += static_cast<uint64_t>(t.rows * t.cols);
    return n;
}

void writeSyntheticModel(const SyntheticPreset& p, const SyntheticWeights& weights, uint64_t seed,
                         const std::string& path, const ProgressFn& progress) {
    const ModelConfig& c = p.config;
    GgufWriter w(path);
    w.set("general.architecture", GgufValue::string("llama"));
    w.set("general.name", GgufValue::string("synthetic-" + p.name));
    w.set("general.description",
          GgufValue::string("ModeBench synthetic model: seeded random weights with the shapes of " + p.name +
                            "; timing is real, output text is meaningless"));
    w.set("general.file_type", GgufValue::u32(weights.mix ? targetInfo(*weights.mix).fileType
                                                     : static_cast<uint32_t>(std::max(0, kernels::traits(weights.type).fileType))));
    w.set("modebench.synthetic.preset", GgufValue::string(p.name));
    w.set("modebench.synthetic.seed", GgufValue::u64(seed));
    w.set("llama.context_length", GgufValue::u32(static_cast<uint32_t>(c.contextLength)));
    w.set("llama.embedding_length", GgufValue::u32(static_cast<uint32_t>(c.dim)));
    w.set("llama.block_count", GgufValue::u32(static_cast<uint32_t>(c.layers)));
    w.set("llama.feed_forward_length", GgufValue::u32(static_cast<uint32_t>(c.ffnDim)));
    w.set("llama.attention.head_count", GgufValue::u32(static_cast<uint32_t>(c.heads)));
    w.set("llama.attention.head_count_kv", GgufValue::u32(static_cast<uint32_t>(c.kvHeads)));
    w.set("llama.rope.dimension_count", GgufValue::u32(static_cast<uint32_t>(c.ropeDim)));
    w.set("llama.rope.freq_base", GgufValue::f32(c.ropeBase));
    w.set("llama.attention.layer_norm_rms_epsilon", GgufValue::f32(c.normEps));
    w.set("llama.vocab_size", GgufValue::u32(static_cast<uint32_t>(c.vocabSize)));

    const Vocab vocab = makeSyntheticVocab(c.vocabSize);
    std::vector<int32_t> kinds;
    kinds.reserve(vocab.kinds.size());
    for (TokenKind k : vocab.kinds) kinds.push_back(static_cast<int32_t>(k));
    w.set("tokenizer.ggml.model", GgufValue::string("llama"));
    w.set("tokenizer.ggml.tokens", GgufValue::stringArray(vocab.tokens));
    w.set("tokenizer.ggml.scores", GgufValue::f32Array(vocab.scores));
    w.set("tokenizer.ggml.token_type", GgufValue::i32Array(kinds));
    w.set("tokenizer.ggml.bos_token_id", GgufValue::u32(static_cast<uint32_t>(vocab.bos)));
    w.set("tokenizer.ggml.eos_token_id", GgufValue::u32(static_cast<uint32_t>(vocab.eos)));
    w.set("tokenizer.ggml.unknown_token_id", GgufValue::u32(static_cast<uint32_t>(vocab.unk)));
    w.set("tokenizer.ggml.add_bos_token", GgufValue::boolean(true));
    w.set("tokenizer.ggml.add_space_prefix", GgufValue::boolean(true));

    const std::vector<TensorPlan> plan = planTensors(p);
    const MixModel mix{c.layers, c.heads, c.kvHeads, !p.tiedOutput};
    const double total = static_cast<double>(syntheticParameterCount(p));
    double done = 0;
    for (const TensorPlan& t : plan) {
        TensorType tt = t.isNorm ? TensorType::F32 : weights.type;
        if (!t.isNorm && weights.mix)
            tt = chooseTensorType(*weights.mix, mix, t.name, t.cols, 2, TensorType::F32);
        if (t.cols % kernels::blockSize(tt) != 0) tt = TensorType::F16;
        const std::vector<uint64_t> shape =
            t.isNorm ? std::vector<uint64_t>{static_cast<uint64_t>(t.cols)}
                     : std::vector<uint64_t>{static_cast<uint64_t>(t.cols), static_cast<uint64_t>(t.rows)};
        const uint64_t tensorSeed = seed ^ fnv1a(t.name);
        w.addTensor(t.name, tt, shape, [&, t, tt, tensorSeed](const GgufWriter::Sink& sink) {
            std::vector<float> row(static_cast<size_t>(t.cols));
            std::vector<uint8_t> packed(kernels::rowBytes(tt, t.cols));
            uint64_t state = tensorSeed;
            // Uniform on [-a, a] has standard deviation a / sqrt(3).
            const double a = std::sqrt(3.0 / static_cast<double>(t.cols));
            for (int64_t r = 0; r < t.rows; ++r) {
                for (auto& x : row) {
                    if (t.isNorm) {
                        x = 1.0f;
                    } else {
                        const double u = static_cast<double>(splitmix(state) >> 11) * 0x1.0p-53;
                        x = static_cast<float>((2.0 * u - 1.0) * a);
                    }
                }
                kernels::quantizeRow(tt, row.data(), packed.data(), t.cols);
                sink(packed.data(), packed.size());
                done += static_cast<double>(t.cols);
                if (progress && (r % 256 == 0 || r + 1 == t.rows) && !progress(done / total))
                    throw std::runtime_error("cancelled");
            }
        });
    }
    w.finish();
}

} // namespace mb::engine
