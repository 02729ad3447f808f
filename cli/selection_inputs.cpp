// Store, runs and tokenizer for the selection commands.
#include "cli/selection_inputs.h"

#include "cli/command_util.h"

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

} // namespace mb::cli
