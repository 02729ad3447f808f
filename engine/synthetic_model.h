// Synthetic models: seeded random weights with the exact shapes of real LLaMA models, written as GGUF.
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

struct SyntheticPreset {
    std::string name;
    ModelConfig config;
    bool tiedOutput = false; // no output.weight: the embedding doubles as the output matrix
};

// stories15m, stories42m, stories110m, tinyllama-1.1b, llama-3.2-1b, llama-2-7b,
// llama-3-8b, and "tiny" (a few hundred kilobytes, for tests).
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

// Writes a GGUF v3 file: metadata of the preset, the synthetic vocabulary, and weights
// drawn from a seeded generator (per tensor, uniform with standard deviation
// 1/sqrt(fan_in); norm weights 1). 2-D weights use `type`; a matrix whose rows are not a
// multiple of the block size falls back to F16 for quantised types; norms are F32.
// Tensors are produced row by row while writing, so memory stays small for any preset.
// Same preset, type and seed -> byte-identical file. Throws on I/O errors.
void writeSyntheticModel(const SyntheticPreset& preset, const SyntheticWeights& weights, uint64_t seed,
                         const std::string& path, const ProgressFn& progress = {});
inline void writeSyntheticModel(const SyntheticPreset& preset, kernels::TensorType type, uint64_t seed,
                                const std::string& path, const ProgressFn& progress = {}) {
    writeSyntheticModel(preset, SyntheticWeights{type, std::nullopt}, seed, path, progress);
}

} // namespace mb::engine
