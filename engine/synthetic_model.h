// Synthetic models: seeded random weights with the exact shapes and keys of real models, written as GGUF.
#pragma once

#include "engine/model_config.h"
#include "engine/quant_mix.h"
#include "kernels/tensor_type.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

namespace mb::engine {

class GgufFile;

struct SyntheticPreset {
    std::string name;
    ModelConfig config;      // arch and every key the file gets (ropeFreqFactors -> rope_freqs.weight)
    bool tiedOutput = false; // no output.weight: the embedding doubles as the output matrix
};

// The table (engine/synthetic_presets.cpp): "tiny" (a few hundred kilobytes, for tests),
// stories15m/42m/110m, tinyllama-1.1b, llama-2-7b, llama-3-8b, llama-3.2-1b, llama-3.1-8b,
// qwen2.5-0.5b, qwen2.5-7b, qwen3-0.6b, qwen3-8b, gemma-2-2b, phi-3-mini, and tiny ones of
// each architecture (tiny-qwen2, tiny-qwen3, tiny-gemma2, tiny-phi3).
const std::vector<SyntheticPreset>& syntheticPresets();
std::optional<SyntheticPreset> findSyntheticPreset(const std::string& name);

// Parameters of a preset (weights of every tensor, norms included).
uint64_t syntheticParameterCount(const SyntheticPreset& preset);

// Called with the fraction done (0..1); return false to cancel (the writer then throws
// std::runtime_error("cancelled") and leaves no file behind).
using ProgressFn = std::function<bool(double fraction)>;

// What the 2-D weights are written as: every matrix in `type`, or, when `mix` is set, the types
// llama-quantize would choose for that target (engine/quant_mix.h).
struct SyntheticWeights {
    kernels::TensorType type = kernels::TensorType::F16;
    std::optional<QuantizeTarget> mix;
};

// The weight types writeSyntheticModel writes alone: those the engine can quantise to, less
// BF16 and the Q8_K activation blocks.
bool isSyntheticWeightType(kernels::TensorType type);
// A type name ("f32", "q8_0", "q4_k") is that type for every matrix; otherwise a quantisation
// target's name ("q4_k_m", "q3_k_m", "mixed") is its mix. nullopt for anything else.
std::optional<SyntheticWeights> syntheticWeightsFromName(std::string_view name);
// The accepted names: the types, then the mixes that are not type names.
std::vector<std::string> syntheticWeightNames();
// The same for messages: "f32, f16, ... or iq4_xs".
std::string syntheticWeightTypeNames();

// The Llama 3.1 RoPE factors (rope_freqs.weight) for rope_scaling {rope_type llama3, factor,
// low_freq_factor, high_freq_factor, original_max_position_embeddings}, as the GGUF converter
// computes them: 1 for wavelengths below orig/high, `factor` above orig/low, smooth between.
std::vector<float> llama3RopeFactors(int64_t ropeDim, float base, float factor, float lowFreqFactor,
                                     float highFreqFactor, float originalContext);

// The preset with a real vocabulary's tokenizer: its vocabulary size becomes the file's token
// count. Throws ModelError when `vocab` has no tokenizer.ggml.tokens list.
SyntheticPreset withVocabulary(SyntheticPreset preset, const GgufFile& vocab);

// Writes a GGUF v3 file: metadata of the preset, the synthetic vocabulary (or every
// tokenizer.* key of `vocab`, see withVocabulary), and weights
// drawn from a seeded generator (per tensor, uniform with standard deviation
// 1/sqrt(fan_in); norm weights 1). 2-D weights use `type`; a matrix whose rows are not a
// multiple of the block size falls back to F16 for quantised types; norms are F32.
// Tensors are produced row by row while writing, so memory stays small for any preset.
// Same preset, type and seed -> byte-identical file. Throws on I/O errors.
void writeSyntheticModel(const SyntheticPreset& preset, const SyntheticWeights& weights, uint64_t seed,
                         const std::string& path, const ProgressFn& progress = {}, const GgufFile* vocab = nullptr);
inline void writeSyntheticModel(const SyntheticPreset& preset, kernels::TensorType type, uint64_t seed,
                                const std::string& path, const ProgressFn& progress = {}) {
    writeSyntheticModel(preset, SyntheticWeights{type, std::nullopt}, seed, path, progress);
}

} // namespace mb::engine
