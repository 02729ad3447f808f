// The synthetic presets: real models' published shapes and keys, one row each.
#include "engine/synthetic_model.h"

#include "engine/gguf.h"

#include <cmath>
#include <numbers>

namespace mb::engine {

namespace {

struct Shape {
    int64_t dim, layers, heads, kvHeads, headDim, ffn, vocab, ctx;
};

SyntheticPreset preset(const char* name, ModelArch arch, Shape s, float ropeBase, float eps, bool tied) {
    SyntheticPreset p;
    p.name = name;
    ModelConfig& c = p.config;
    c.arch = arch;
    const ArchTraits& a = archTraits(arch);
    c.ropeKind = a.rope;
    c.activation = a.activation;
    c.slidingLayers = a.sliding;
    c.attnSoftcap = a.attnSoftcapDefault;
    c.finalSoftcap = a.finalSoftcapDefault;
    c.dim = s.dim;
    c.layers = s.layers;
    c.heads = s.heads;
    c.kvHeads = s.kvHeads;
    c.headDim = s.headDim > 0 ? s.headDim : s.dim / s.heads;
    c.ffnDim = s.ffn;
    c.vocabSize = s.vocab;
    c.contextLength = s.ctx;
    c.ropeDim = c.headDim;
    c.ropeBase = ropeBase;
    c.normEps = eps;
    p.tiedOutput = tied;
    return p;
}

SyntheticPreset llama(const char* name, Shape s, float base, bool tied) {
    return preset(name, ModelArch::Llama, s, base, 1e-5f, tied);
}

// Llama 3.1 and 3.2: RoPE scaled by rope_freqs.weight (factor 8 and 32, low 1, high 4, 8192).
SyntheticPreset llama31(const char* name, Shape s, bool tied, float factor) {
    SyntheticPreset p = preset(name, ModelArch::Llama, s, 500000.0f, 1e-5f, tied);
    p.config.ropeFreqFactors = llama3RopeFactors(p.config.ropeDim, 500000.0f, factor, 1.0f, 4.0f, 8192.0f);
    return p;
}

SyntheticPreset windowed(SyntheticPreset p, int64_t window) {
    p.config.slidingWindow = window;
    return p;
}

} // namespace

std::vector<float> llama3RopeFactors(int64_t ropeDim, float base, float factor, float lowFreqFactor,
                                     float highFreqFactor, float originalContext) {
    const double lowWavelen = originalContext / lowFreqFactor, highWavelen = originalContext / highFreqFactor;
    std::vector<float> out(static_cast<size_t>(ropeDim / 2));
    for (size_t i = 0; i < out.size(); ++i) {
        const double freq = std::pow(static_cast<double>(base), -2.0 * static_cast<double>(i) / ropeDim);
        const double wavelen = 2 * std::numbers::pi / freq;
        if (wavelen < highWavelen) {
            out[i] = 1.0f;
        } else if (wavelen > lowWavelen) {
            out[i] = factor;
        } else {
            const double smooth = (originalContext / wavelen - lowFreqFactor) / (highFreqFactor - lowFreqFactor);
            out[i] = static_cast<float>(1.0 / ((1 - smooth) / factor + smooth));
        }
    }
    return out;
}

const std::vector<SyntheticPreset>& syntheticPresets() {
    using A = ModelArch;
    static const std::vector<SyntheticPreset> presets = {
        llama("tiny", {64, 2, 4, 2, 0, 80, 512, 128}, 10000.0f, false),
        llama("stories15m", {288, 6, 6, 6, 0, 768, 32000, 256}, 10000.0f, false),
        llama("stories42m", {512, 8, 8, 8, 0, 1376, 32000, 1024}, 10000.0f, false),
        llama("stories110m", {768, 12, 12, 12, 0, 2048, 32000, 1024}, 10000.0f, false),
        llama("tinyllama-1.1b", {2048, 22, 32, 4, 0, 5632, 32000, 2048}, 10000.0f, false),
        llama("llama-2-7b", {4096, 32, 32, 32, 0, 11008, 32000, 4096}, 10000.0f, false),
        llama("llama-3-8b", {4096, 32, 32, 8, 0, 14336, 128256, 8192}, 500000.0f, false),
        llama31("llama-3.2-1b", {2048, 16, 32, 8, 0, 8192, 128256, 131072}, true, 32.0f),
        llama31("llama-3.1-8b", {4096, 32, 32, 8, 0, 14336, 128256, 131072}, false, 8.0f),
        preset("qwen2.5-0.5b", A::Qwen2, {896, 24, 14, 2, 0, 4864, 151936, 32768}, 1e6f, 1e-6f, true),
        preset("qwen2.5-7b", A::Qwen2, {3584, 28, 28, 4, 0, 18944, 152064, 32768}, 1e6f, 1e-6f, false),
        preset("qwen3-0.6b", A::Qwen3, {1024, 28, 16, 8, 128, 3072, 151936, 40960}, 1e6f, 1e-6f, true),
        preset("qwen3-8b", A::Qwen3, {4096, 36, 32, 8, 128, 12288, 151936, 40960}, 1e6f, 1e-6f, false),
        windowed(preset("gemma-2-2b", A::Gemma2, {2304, 26, 8, 4, 256, 9216, 256000, 8192}, 10000.0f, 1e-6f, true),
                 4096),
        windowed(preset("phi-3-mini", A::Phi3, {3072, 32, 32, 32, 0, 8192, 32064, 4096}, 10000.0f, 1e-5f, false),
                 2047),
        // Tiny ones of each architecture, for tests (head_dim != dim / heads for qwen3 and gemma2).
        preset("tiny-qwen2", A::Qwen2, {64, 2, 4, 2, 0, 128, 512, 128}, 1e6f, 1e-6f, true),
        preset("tiny-qwen3", A::Qwen3, {64, 2, 4, 2, 32, 128, 512, 128}, 1e6f, 1e-6f, true),
        windowed(preset("tiny-gemma2", A::Gemma2, {64, 2, 4, 2, 32, 128, 512, 128}, 10000.0f, 1e-6f, true), 16),
        windowed(preset("tiny-phi3", A::Phi3, {64, 2, 4, 2, 0, 128, 512, 128}, 10000.0f, 1e-5f, false), 24),
    };
    return presets;
}

SyntheticPreset withVocabulary(SyntheticPreset preset, const GgufFile& vocab) {
    const GgufValue* tokens = vocab.find("tokenizer.ggml.tokens");
    if (!tokens || tokens->type != GgufValueType::Array || tokens->asArray().empty())
        throw ModelError(vocab.path() + " has no tokenizer.ggml.tokens list");
    preset.config.vocabSize = static_cast<int64_t>(tokens->asArray().size());
    return preset;
}

} // namespace mb::engine
