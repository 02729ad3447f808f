// Store, runs and tokenizer for the selection commands.
#include "cli/selection_inputs.h"

#include "cli/command_util.h"
#include "engine/gguf.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"

#include <filesystem>

namespace mb::cli {

db::RunStore openExistingStore(const std::string& dbOption) {
    // An explicit --db that does not exist is a typo, not a request for a new store.
    try {
        return db::RunStore::open(databasePath(dbOption), {.create = dbOption.empty()});
    } catch (const db::DbError& e) {
        throw UsageError(e.what());
    }
}

std::vector<lab::StoredRun> loadRuns(const db::RunStore& store, const std::vector<int64_t>& ids) {
    std::vector<lab::StoredRun> runs;
    for (const int64_t id : ids) {
        try {
            runs.push_back(store.getRun(id, db::RunDetail::Full));
        } catch (const db::DbError& e) {
            throw UsageError(e.what());
        }
    }
    return runs;
}

std::shared_ptr<const engine::Tokenizer> promptTokenizer(const std::vector<lab::StoredRun>& runs,
                                                         const std::string& modelPath,
                                                         lab::SelectionOptions& options) {
    std::string path = modelPath;
    if (path.empty() && !runs.empty() && !runs.front().candidates.empty())
        path = runs.front().candidates.front().info.modelPath;
    std::error_code ec;
    if (path.empty() || !std::filesystem::is_regular_file(path, ec)) return nullptr;
    std::shared_ptr<const engine::Tokenizer> tokenizer =
        engine::Tokenizer::create(engine::Vocab::fromGguf(engine::GgufFile::open(path)));
    // Lengths as the engine counts them: BOS included when the vocabulary adds one.
    options.tokenize = [tokenizer](const std::string& text) {
        return tokenizer->encode(text, tokenizer->vocab().addBos);
    };
    return tokenizer;
}

} // namespace mb::cli
