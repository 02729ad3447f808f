// Shared by `select` and `report`: opening the store, loading runs, and the prompt-file tokenizer.
#pragma once

#include "db/run_store.h"
#include "lab/selection.h"

#include <memory>
#include <string>
#include <vector>

namespace mb::engine {
class Tokenizer;
}

namespace mb::cli {

// The store at --db (which must exist when given), or the default store.
db::RunStore openExistingStore(const std::string& dbOption);
// Each run with its requests; UsageError "no run ID in PATH" for a missing one.
std::vector<lab::StoredRun> loadRuns(const db::RunStore& store, const std::vector<int64_t>& ids);

// A tokenizer for requirements.inputs.prompt_file: `modelPath` when given, else the model
// of the first run's first candidate. Null when that file is not readable. Keep it alive
// while `options.tokenize` is used.
std::shared_ptr<const engine::Tokenizer> promptTokenizer(const std::vector<lab::StoredRun>& runs,
                                                         const std::string& modelPath,
                                                         lab::SelectionOptions& options);

} // namespace mb::cli
