// Shared by `select` and `report`: opening the store and loading runs (lab::promptTokenizer for prompt files).
#pragma once

#include "db/run_store.h"
#include "lab/prompt_tokenizer.h"
#include "lab/selection.h"

#include <memory>
#include <string>
#include <vector>

namespace mb::cli {

// The store at --db (which must exist when given), or the default store.
db::RunStore openExistingStore(const std::string& dbOption);
// Each run with its requests; UsageError "no run ID in PATH" for a missing one.
std::vector<lab::StoredRun> loadRuns(const db::RunStore& store, const std::vector<int64_t>& ids);

} // namespace mb::cli
