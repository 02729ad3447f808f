// Hyper-parameters of a model, read and validated from GGUF metadata under its architecture's prefix.
#pragma once

#include "engine/model_arch.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mb::engine {

class GgufFile;

// A model file that parses as GGUF but cannot be run (wrong architecture, missing or
// mis-shaped tensors, inconsistent hyper-parameters). what() is one line.
class ModelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Everything the forward passes need to know about a model besides its weights. Keys are
// read as ARCH.<key> (ARCH = general.architecture); defaults are llama.cpp's.
struct ModelConfig {
    ModelArch arch = ModelArch::Llama;
    int64_t dim = 0;           // embedding width (ARCH.embedding_length)
    int64_t layers = 0;
    int64_t heads = 0;         // query heads
    int64_t kvHeads = 0;       // key/value heads (grouped-query attention when < heads)
    int64_t headDim = 0;       // ARCH.attention.key_length, else dim / heads
    int64_t ffnDim = 0;        // hidden width of the gated FFN
    int64_t vocabSize = 0;     // rows of the output matrix
    int64_t contextLength = 0; // the model's own limit in tokens
    int64_t ropeDim = 0;       // rotated dimensions per head (ARCH.rope.dimension_count, else headDim)
    float ropeBase = 10000.0f;
    float normEps = 1e-5f;     // RMSNorm epsilon
    RopeKind ropeKind = RopeKind::Norm;
    // RoPE angle of pair i at position p: p * ropePosScale * base^(-2i/ropeDim) / factor_i.
    float ropePosScale = 1.0f;           // 1 / ARCH.rope.scaling.factor for linear scaling
    std::vector<float> ropeFreqFactors;  // rope_freqs.weight (Llama 3.1+), ropeDim/2 values; empty = all 1
    FfnActivation activation = FfnActivation::Silu;
    float embedScale = 1.0f;   // embedding rows x this (gemma2: sqrt(dim))
    float queryScale = 0.0f;   // attention scores x this when > 0 (gemma2 27B); 0 = 1/sqrt(headDim)
    float attnSoftcap = 0.0f;  // scores -> c tanh(s / c) before the mask when > 0
    float finalSoftcap = 0.0f; // logits -> c tanh(l / c) when > 0
    int64_t slidingWindow = 0; // a sliding layer's query at p sees keys j with p - j < window; 0 = none
    SlidingLayers slidingLayers = SlidingLayers::None;

    int64_t qDim() const { return heads * headDim; }
    int64_t kvDim() const { return kvHeads * headDim; }
    const ArchTraits& traits() const { return archTraits(arch); }
    float attentionScale() const { return queryScale > 0 ? queryScale : 1.0f / std::sqrt(static_cast<float>(headDim)); }
    // The window layer `l` attends within (0 = all earlier positions).
    int64_t windowOf(int64_t l) const {
        if (slidingWindow <= 0 || slidingLayers == SlidingLayers::None) return 0;
        return slidingLayers == SlidingLayers::All || l % 2 == 0 ? slidingWindow : 0;
    }

    // Reads general.architecture and its ARCH.* keys (and rope_freqs.weight when present).
    // vocabSize comes from ARCH.vocab_size when present, else from the token list. Throws
    // ModelError naming the key: missing, of the wrong type, or out of range; an unknown
    // architecture names the supported ones.
    static ModelConfig fromGguf(const GgufFile& file);
};

// What is particular to the model's architecture, as (label, text) lines for `info` and the
// Models page: "rope" -> "NEOX, base 1000000, ...", "attention", "ffn", "layer" (the extra
// tensors the architecture's table requires), "output".
std::vector<std::pair<std::string, std::string>> describeArchitecture(const ModelConfig& c);

} // namespace mb::engine
