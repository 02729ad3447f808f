// Writing seeded random models of any supported architecture with real shapes.
#include "engine/synthetic_model.h"

#include "engine/gguf.h"
#include "engine/seeded_random.h"
#include "engine/synthetic_vocab.h"
#include "kernels/cpu/quant.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string_view>

namespace mb::engine {

using kernels::TensorType;

namespace {

// How a tensor's values are drawn: a matrix uniform with std 1/sqrt(fan_in), a norm all ones,
// a bias uniform with std 0.02, RoPE factors the preset's.
enum class Fill { Matrix, Norm, Bias, RopeFactors };

struct TensorPlan {
    std::string name;
    int64_t rows;
    int64_t cols;
    Fill fill;
    bool isVector() const { return fill != Fill::Matrix; }
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

std::optional<SyntheticPreset> findSyntheticPreset(const std::string& name) {
    for (const auto& p : syntheticPresets())
        if (p.name == name) return p;
    return std::nullopt;
}

namespace {
// The shape of a layer tensor of `role`: (rows, cols) of a matrix, (1, n) of a vector.
TensorPlan layerTensor(const ModelConfig& c, const ArchTensor& t, int64_t l) {
    const std::string name = "blk." + std::to_string(l) + "." + t.suffix;
    const int64_t q = c.qDim(), kv = c.kvDim();
    switch (t.role) {
    case LayerRole::AttnNorm: case LayerRole::FfnNorm: case LayerRole::PostAttnNorm: case LayerRole::PostFfnNorm:
        return {name, 1, c.dim, Fill::Norm};
    case LayerRole::QNorm: case LayerRole::KNorm: return {name, 1, c.headDim, Fill::Norm};
    case LayerRole::QBias: return {name, 1, q, Fill::Bias};
    case LayerRole::KBias: case LayerRole::VBias: return {name, 1, kv, Fill::Bias};
    case LayerRole::Q: return {name, q, c.dim, Fill::Matrix};
    case LayerRole::K: case LayerRole::V: return {name, kv, c.dim, Fill::Matrix};
    case LayerRole::Qkv: return {name, q + 2 * kv, c.dim, Fill::Matrix};
    case LayerRole::O: return {name, c.dim, q, Fill::Matrix};
    case LayerRole::Gate: case LayerRole::Up: return {name, c.ffnDim, c.dim, Fill::Matrix};
    case LayerRole::GateUp: return {name, 2 * c.ffnDim, c.dim, Fill::Matrix};
    case LayerRole::Down: return {name, c.dim, c.ffnDim, Fill::Matrix};
    }
    return {name, 0, 0, Fill::Norm};
}

// Every tensor of the preset in file order: the architecture table's required layer tensors.
std::vector<TensorPlan> planTensors(const SyntheticPreset& p) {
    const ModelConfig& c = p.config;
    std::vector<TensorPlan> plan;
    plan.push_back({"token_embd.weight", c.vocabSize, c.dim, Fill::Matrix});
    if (!c.ropeFreqFactors.empty())
        plan.push_back({"rope_freqs.weight", 1, static_cast<int64_t>(c.ropeFreqFactors.size()), Fill::RopeFactors});
    for (int64_t l = 0; l < c.layers; ++l)
        for (const ArchTensor& t : c.traits().layerTensors)
            if (t.required) plan.push_back(layerTensor(c, t, l));
    plan.push_back({"output_norm.weight", 1, c.dim, Fill::Norm});
    if (!p.tiedOutput) plan.push_back({"output.weight", c.vocabSize, c.dim, Fill::Matrix});
    return plan;
}

// The architecture's keys, as llama.cpp's converter writes them for such a model.
void writeArchKeys(GgufWriter& w, const ModelConfig& c) {
    const std::string a = c.traits().name;
    auto u32 = [&](const std::string& k, int64_t v) { w.set(a + "." + k, GgufValue::u32(static_cast<uint32_t>(v))); };
    u32("context_length", c.contextLength);
    u32("embedding_length", c.dim);
    u32("block_count", c.layers);
    u32("feed_forward_length", c.ffnDim);
    u32("attention.head_count", c.heads);
    u32("attention.head_count_kv", c.kvHeads);
    if (c.headDim * c.heads != c.dim || c.arch == ModelArch::Gemma2 || c.arch == ModelArch::Qwen3) {
        u32("attention.key_length", c.headDim);
        u32("attention.value_length", c.headDim);
    }
    u32("rope.dimension_count", c.ropeDim);
    w.set(a + ".rope.freq_base", GgufValue::f32(c.ropeBase));
    w.set(a + ".attention.layer_norm_rms_epsilon", GgufValue::f32(c.normEps));
    if (c.attnSoftcap > 0) w.set(a + ".attn_logit_softcapping", GgufValue::f32(c.attnSoftcap));
    if (c.finalSoftcap > 0) w.set(a + ".final_logit_softcapping", GgufValue::f32(c.finalSoftcap));
    if (c.slidingWindow > 0) u32("attention.sliding_window", c.slidingWindow);
    u32("vocab_size", c.vocabSize);
}

// The synthetic SentencePiece vocabulary of the preset's size.
void writeSyntheticVocab(GgufWriter& w, int64_t size) {
    const Vocab vocab = makeSyntheticVocab(size);
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
}
} // namespace

uint64_t syntheticParameterCount(const SyntheticPreset& preset) {
    uint64_t n = 0;
    for (const auto& t : planTensors(preset)) n += static_cast<uint64_t>(t.rows * t.cols);
    return n;
}

void writeSyntheticModel(const SyntheticPreset& p, const SyntheticWeights& weights, uint64_t seed,
                         const std::string& path, const ProgressFn& progress, const GgufFile* vocab) {
    const ModelConfig& c = p.config;
    GgufWriter w(path);
    w.set("general.architecture", GgufValue::string(c.traits().name));
    w.set("general.name", GgufValue::string("synthetic-" + p.name));
    w.set("general.description",
          GgufValue::string("ModeBench synthetic model: seeded random weights with the shapes of " + p.name +
                            "; timing is real, output text is meaningless"));
    w.set("general.file_type", GgufValue::u32(weights.mix ? targetInfo(*weights.mix).fileType
                                                     : static_cast<uint32_t>(std::max(0, kernels::traits(weights.type).fileType))));
    w.set("modebench.synthetic.preset", GgufValue::string(p.name));
    w.set("modebench.synthetic.seed", GgufValue::u64(seed));
    writeArchKeys(w, c);
    if (vocab) {
        for (const auto& [key, value] : vocab->metadata())
            if (key.rfind("tokenizer.", 0) == 0) w.set(key, value);
    } else {
        writeSyntheticVocab(w, c.vocabSize);
    }

    const std::vector<TensorPlan> plan = planTensors(p);
    const MixModel mix{c.layers, c.heads, c.kvHeads, !p.tiedOutput};
    const double total = static_cast<double>(syntheticParameterCount(p));
    double done = 0;
    for (const TensorPlan& t : plan) {
        TensorType tt = t.isVector() ? TensorType::F32 : weights.type;
        if (!t.isVector() && weights.mix)
            tt = chooseTensorType(*weights.mix, mix, t.name, t.cols, 2, TensorType::F32);
        if (t.cols % kernels::blockSize(tt) != 0) tt = TensorType::F16;
        const std::vector<uint64_t> shape =
            t.isVector() ? std::vector<uint64_t>{static_cast<uint64_t>(t.cols)}
                     : std::vector<uint64_t>{static_cast<uint64_t>(t.cols), static_cast<uint64_t>(t.rows)};
        const uint64_t tensorSeed = seed ^ fnv1a(t.name);
        w.addTensor(t.name, tt, shape, [&, t, tt, tensorSeed](const GgufWriter::Sink& sink) {
            std::vector<float> row(static_cast<size_t>(t.cols));
            std::vector<uint8_t> packed(kernels::rowBytes(tt, t.cols));
            uint64_t state = tensorSeed;
            // Uniform on [-a, a] has standard deviation a / sqrt(3).
            const double a = t.fill == Fill::Bias ? std::sqrt(3.0) * 0.02 : std::sqrt(3.0 / static_cast<double>(t.cols));
            for (int64_t r = 0; r < t.rows; ++r) {
                for (size_t i = 0; i < row.size(); ++i) {
                    if (t.fill == Fill::Norm) {
                        row[i] = 1.0f;
                    } else if (t.fill == Fill::RopeFactors) {
                        row[i] = c.ropeFreqFactors[i];
                    } else {
                        row[i] = uniformIn(state, a);
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
