// Rewriting a GGUF model with its weights in another precision (a QuantizeTarget: f16, mixed, or one
// of llama.cpp's file types such as q8_0, q4_0, q4_k_m).
#pragma once

#include "engine/quant_mix.h"
#include "engine/synthetic_model.h"

#include <string>

namespace mb::engine {

// Copies every metadata key of `inPath` (general.file_type updated) and every tensor,
// converting 2-D weights to the types chooseTensorType gives (engine/quant_mix.h). 1-D tensors
// (norms) keep their type.
// Streams row by row (no second copy of the model in memory) to a temporary file renamed
// into place at the end. Throws GgufError/ModelError/std::runtime_error; `progress`
// returning false cancels (no output file is left).
void quantizeModel(const std::string& inPath, const std::string& outPath, QuantizeTarget target,
                   const ProgressFn& progress = {});

} // namespace mb::engine
