// Reading and validating ARCH.* hyper-parameters for every architecture of engine/model_arch.h.
#include "engine/model_config.h"
#include "engine/quote.h"

#include "engine/gguf.h"

#include "kernels/cpu/quant.h"

#include <cmath>

namespace mb::engine {

namespace {

// Reads ARCH.<key> with one-line errors that name the full key.
class Keys {
public:
    Keys(const GgufFile& f, std::string prefix) : m_f(f), m_prefix(std::move(prefix)) {}

    std::string key(const std::string& k) const { return m_prefix + "." + k; }
    bool has(const std::string& k) const { return m_f.find(key(k)) != nullptr; }

    int64_t positiveInt(const std::string& k, int64_t limit) const {
        const std::string full = key(k);
        const GgufValue* v = m_f.find(full);
        if (!v) throw ModelError("missing metadata key " + quoteName(full));
        if (!v->isInteger() || v->type == GgufValueType::Bool)
            throw ModelError("metadata key " + quoteName(full) + " is not an integer");
        const int64_t x = v->asInt();
        if (x <= 0 || x > limit)
            throw ModelError("metadata key " + quoteName(full) + " = " + std::to_string(x) + " is out of range (1.." +
                             std::to_string(limit) + ")");
        return x;
    }
    int64_t positiveInt(const std::string& k, int64_t limit, int64_t fallback) const {
        return has(k) ? positiveInt(k, limit) : fallback;
    }
    // A non-negative integer (0 allowed: "off").
    int64_t count(const std::string& k, int64_t limit) const {
        if (!has(k)) return 0;
        const GgufValue* v = m_f.find(key(k));
        if (!v->isInteger() || v->type == GgufValueType::Bool)
            throw ModelError("metadata key " + quoteName(key(k)) + " is not an integer");
        const int64_t x = v->asInt();
        if (x < 0 || x > limit)
            throw ModelError("metadata key " + quoteName(key(k)) + " = " + std::to_string(x) + " is out of range");
        return x;
    }
    // A number in [lo, hi] (open at lo when `openLo`), or `fallback` when absent.
    float number(const std::string& k, float fallback, double lo, double hi, bool openLo = false) const {
        const GgufValue* v = m_f.find(key(k));
        if (!v) return fallback;
        if (!v->isFloat() && !(v->isInteger() && v->type != GgufValueType::Bool))
            throw ModelError("metadata key " + quoteName(key(k)) + " is not a number");
        const double x = v->asFloat();
        if (!std::isfinite(x) || x < lo || x > hi || (openLo && x == lo))
            throw ModelError("metadata key " + quoteName(key(k)) + " = " + std::to_string(x) + " is out of range");
        return static_cast<float>(x);
    }
    std::string text(const std::string& k) const {
        const GgufValue* v = m_f.find(key(k));
        if (!v) return {};
        if (v->type != GgufValueType::String) throw ModelError("metadata key " + quoteName(key(k)) + " is not a string");
        return v->asString();
    }

private:
    const GgufFile& m_f;
    std::string m_prefix;
};

const ArchTraits& architectureOf(const GgufFile& f) {
    const GgufValue* arch = f.find("general.architecture");
    if (!arch) throw ModelError("missing metadata key 'general.architecture'");
    if (arch->type != GgufValueType::String) throw ModelError("metadata key 'general.architecture' is not a string");
    const ArchTraits* t = findArch(arch->asString());
    if (!t)
        throw ModelError("unsupported architecture " + quoteName(arch->asString()) + " (supported: " +
                         supportedArchNames() + ")");
    return *t;
}

void readShape(const Keys& k, ModelConfig& c) {
    c.dim = k.positiveInt("embedding_length", 1 << 16);
    c.layers = k.positiveInt("block_count", 1024);
    c.heads = k.positiveInt("attention.head_count", 1024);
    c.kvHeads = k.positiveInt("attention.head_count_kv", 1024, c.heads);
    c.ffnDim = k.positiveInt("feed_forward_length", 1 << 20);
    c.contextLength = k.positiveInt("context_length", int64_t{1} << 24);
    if (c.heads % c.kvHeads != 0)
        throw ModelError("head_count " + std::to_string(c.heads) + " is not a multiple of head_count_kv " +
                         std::to_string(c.kvHeads));
    if (k.has("attention.key_length")) {
        c.headDim = k.positiveInt("attention.key_length", 1024);
    } else {
        if (c.dim % c.heads != 0)
            throw ModelError("embedding_length " + std::to_string(c.dim) + " is not a multiple of head_count " +
                             std::to_string(c.heads) + " (and there is no " + k.key("attention.key_length") + ")");
        c.headDim = c.dim / c.heads;
    }
    if (k.has("attention.value_length") && k.positiveInt("attention.value_length", 1024) != c.headDim)
        throw ModelError(k.key("attention.value_length") + " differs from the key length " +
                         std::to_string(c.headDim) + " (not supported)");
    c.ropeDim = k.positiveInt("rope.dimension_count", c.headDim, c.headDim);
    if (c.ropeDim % 2 != 0) throw ModelError(k.key("rope.dimension_count") + " must be even");
}

void readRope(const GgufFile& f, const Keys& k, ModelConfig& c) {
    c.ropeBase = k.number("rope.freq_base", 10000.0f, 1.0, 1e12, /*openLo=*/true);
    std::string scaling = k.text("rope.scaling.type");
    float factor = k.number("rope.scaling.factor", 0.0f, 0.0, 1e6);
    if (scaling.empty() && k.has("rope.scale_linear")) { // the older key
        scaling = "linear";
        factor = k.number("rope.scale_linear", 1.0f, 0.0, 1e6, true);
    }
    if (scaling == "linear") {
        if (!(factor > 0)) throw ModelError(k.key("rope.scaling.factor") + " must be > 0 for linear scaling");
        c.ropePosScale = 1.0f / factor;
    } else if (!scaling.empty() && scaling != "none") {
        throw ModelError("RoPE scaling " + quoteName(scaling) +
                         " is not supported (supported: none, linear, and rope_freqs.weight factors)");
    }
    if (f.findTensor("rope_factors_long.weight") || f.findTensor("rope_factors_short.weight"))
        throw ModelError("LongRoPE factors (rope_factors_long/short.weight) are not supported");
    if (const GgufTensorInfo* t = f.findTensor("rope_freqs.weight")) {
        const auto half = static_cast<uint64_t>(c.ropeDim / 2);
        if (t->elements() != half || t->rowLength() != half)
            throw ModelError("tensor 'rope_freqs.weight' should have " + std::to_string(half) + " elements");
        c.ropeFreqFactors.resize(half);
        kernels::dequantizeRow(t->type, t->data, c.ropeFreqFactors.data(), static_cast<int64_t>(half));
        for (float v : c.ropeFreqFactors)
            if (!(v > 0) || !std::isfinite(v)) throw ModelError("tensor 'rope_freqs.weight' holds a factor <= 0");
    }
}

void readAttention(const Keys& k, const ArchTraits& a, ModelConfig& c) {
    c.normEps = k.number("attention.layer_norm_rms_epsilon", 1e-5f, 0.0, 1.0, true);
    if (!(c.normEps < 1.0f)) throw ModelError(k.key("attention.layer_norm_rms_epsilon") + " is out of range");
    if (a.arch == ModelArch::Gemma2 && c.layers == 46) // llama.cpp: Gemma 2 27B scales by dim / heads
        c.queryScale = 1.0f / std::sqrt(static_cast<float>(c.dim / c.heads));
    c.attnSoftcap = k.number("attn_logit_softcapping", a.attnSoftcapDefault, 0.0, 1e6);
    c.finalSoftcap = k.number("final_logit_softcapping", a.finalSoftcapDefault, 0.0, 1e6);
    c.slidingLayers = a.sliding;
    if (a.sliding != SlidingLayers::None) c.slidingWindow = k.count("attention.sliding_window", int64_t{1} << 24);
    c.embedScale = a.embedScaleSqrtDim ? std::sqrt(static_cast<float>(c.dim)) : 1.0f;
}

} // namespace

ModelConfig ModelConfig::fromGguf(const GgufFile& f) {
    const ArchTraits& a = architectureOf(f);
    const Keys k(f, a.name);
    ModelConfig c;
    c.arch = a.arch;
    c.ropeKind = a.rope;
    c.activation = a.activation;
    readShape(k, c);
    readRope(f, k, c);
    readAttention(k, a, c);
    if (k.has("vocab_size")) {
        c.vocabSize = k.positiveInt("vocab_size", 1 << 22);
    } else if (const GgufValue* toks = f.find("tokenizer.ggml.tokens"); toks && toks->type == GgufValueType::Array) {
        c.vocabSize = static_cast<int64_t>(toks->asArray().size());
    }
    if (c.vocabSize <= 0)
        throw ModelError("cannot tell the vocabulary size (no " + k.key("vocab_size") + ", no token list)");
    return c;
}

std::vector<std::pair<std::string, std::string>> describeArchitecture(const ModelConfig& c) {
    auto num = [](double v) {
        std::string s = std::to_string(v);
        s.erase(s.find_last_not_of('0') + 1);
        if (!s.empty() && s.back() == '.') s.pop_back();
        return s;
    };
    std::string rope = std::string(c.ropeKind == RopeKind::Neox ? "NEOX" : "NORM") + ", base " + num(c.ropeBase) +
                       ", " + std::to_string(c.ropeDim) + " of " + std::to_string(c.headDim) + " dims";
    if (!c.ropeFreqFactors.empty())
        rope += ", rope_freqs factors " + num(c.ropeFreqFactors.front()) + ".." + num(c.ropeFreqFactors.back());
    if (c.ropePosScale != 1.0f) rope += ", linear scaling x" + num(1.0 / c.ropePosScale);
    std::string att = std::to_string(c.heads) + " query / " + std::to_string(c.kvHeads) + " kv heads of " +
                      std::to_string(c.headDim) + ", scale " + num(c.attentionScale());
    if (c.attnSoftcap > 0) att += ", soft-cap " + num(c.attnSoftcap);
    if (c.slidingWindow > 0 && c.slidingLayers != SlidingLayers::None)
        att += ", sliding window " + std::to_string(c.slidingWindow) +
               (c.slidingLayers == SlidingLayers::Even ? " on even layers" : " on every layer");
    std::string layer;
    for (const ArchTensor& t : c.traits().layerTensors)
        if (t.required && t.role != LayerRole::AttnNorm && t.role != LayerRole::FfnNorm && t.role != LayerRole::Q &&
            t.role != LayerRole::K && t.role != LayerRole::V && t.role != LayerRole::O && t.role != LayerRole::Gate &&
            t.role != LayerRole::Up && t.role != LayerRole::Down)
            layer += (layer.empty() ? "" : ", ") + std::string(t.suffix) +
                     (t.role == LayerRole::Qkv || t.role == LayerRole::GateUp ? " (fused)" : "");
    std::string out = c.embedScale != 1.0f ? "embedding x " + num(c.embedScale) : "embedding x 1";
    if (c.finalSoftcap > 0) out += ", final soft-cap " + num(c.finalSoftcap);
    return {{"architecture", c.traits().name},
            {"rope", rope},
            {"attention", att},
            {"ffn", std::string(c.activation == FfnActivation::GeluTanh ? "GELU-tanh" : "SiLU") + " gated, " +
                        std::to_string(c.ffnDim) + " wide"},
            {"layer extras", layer.empty() ? "none" : layer},
            {"output", out},
            {"norm", "RMSNorm, eps " + num(c.normEps)}};
}

} // namespace mb::engine
