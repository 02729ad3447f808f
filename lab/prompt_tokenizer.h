// The tokenizer that measures a requirements prompt file: a given model's, else the runs' model.
#pragma once

#include "lab/selection.h"

#include <memory>
#include <string>
#include <vector>

namespace mb::engine {
class Tokenizer;
}

namespace mb::lab {

// A tokenizer for requirements.inputs.prompt_file: `modelPath` when given, else the model
// of the first run's first candidate; sets `options.tokenize` (BOS included when the
// vocabulary adds one, as the engine counts). Null when that file is not readable. Keep
// the result alive while `options.tokenize` is used. Throws what GgufFile::open throws.
std::shared_ptr<const engine::Tokenizer> promptTokenizer(const std::vector<StoredRun>& runs,
                                                         const std::string& modelPath, SelectionOptions& options);

} // namespace mb::lab
