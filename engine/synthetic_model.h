// Synthetic models: seeded random weights with the exact shapes of real LLaMA models, written as GGUF.
#pragma once

#include "engine/model_config.h"
#include "kernels/tensor_type.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mb::engine {

struct SyntheticPreset {
    std::string name;
    LlamaConfig config;
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

// The weight types writeSyntheticModel writes: f32, f16, q8_0, q4_0 (those the engine can
// quantise to, less BF16 and the Q8_K activation blocks).
bool isSyntheticWeightType(kernels::TensorType type);
// Their names for messages: "f32, f16, q8_0 or q4_0".
std::string syntheticWeightTypeNames();

// Writes a GGUF v3 file: metadata of the preset, the synthetic vocabulary, and weights
// drawn from a seeded generator (per tensor, uniform with standard deviation
// 1/sqrt(fan_in); norm weights 1). 2-D weights use `type`; a matrix whose rows are not a
// multiple of the block size falls back to F16 for quantised types; norms are F32.
// Tensors are produced row by row while writing, so memory stays small for any preset.
// Same preset, type and seed -> byte-identical file. Throws on I/O errors.
void writeSyntheticModel(const SyntheticPreset& preset, kernels::TensorType type, uint64_t seed,
                         const std::string& path, const ProgressFn& progress = {});

} // namespace mb::engine
