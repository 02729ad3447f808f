// Rewriting a GGUF model with its weights in another precision (f16, q8_0, q4_0, mixed).
#pragma once

#include "engine/synthetic_model.h"

#include <string>

namespace mb::engine {

enum class QuantizeTarget { F16, Q8_0, Q4_0, Mixed };

// "f16", "q8_0", "q4_0", "mixed"; nullopt otherwise.
std::optional<QuantizeTarget> quantizeTargetFromName(const std::string& name);

// Copies every metadata key of `inPath` (general.file_type updated) and every tensor,
// converting 2-D weights: f16/q8_0/q4_0 -> that type; mixed -> Q8_0 for the projections
// and the output matrix, F16 for the token embedding. 1-D tensors (norms) keep their
// type. A matrix whose rows are not a multiple of the block size is written F16.
// Streams row by row (no second copy of the model in memory) to a temporary file renamed
// into place at the end. Throws GgufError/ModelError/std::runtime_error; `progress`
// returning false cancels (no output file is left).
void quantizeModel(const std::string& inPath, const std::string& outPath, QuantizeTarget target,
                   const ProgressFn& progress = {});

} // namespace mb::engine
