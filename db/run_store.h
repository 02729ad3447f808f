// The run store: list, load, rename, tag, delete, export, import and diff the runs of one database
// file.
#pragma once

#include "db/run_rows.h"
#include "db/schema.h"
#include "db/sqlite.h"
#include "lab/request_record.h"
#include "lab/run_sink.h"
#include "lab/stored_run.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mb::db {

struct CandidateListing {
    int64_t id = 0;
    std::string label;
    std::string profileName; // "name" of the stored profile JSON ("" when absent)
    std::string targetKind;
    std::string modelPath;
};

// One row of listRuns: what a run list shows, without requests or summaries.
struct RunListing {
    int64_t id = 0;
    std::string createdAt; // ISO-8601 UTC
    std::string name;
    std::vector<std::string> tags;
    lab::RunStatus status = lab::RunStatus::Running;
    std::vector<CandidateListing> candidates; // in the order they were added
};

// Every field narrows the list; empty fields do not.
struct RunFilter {
    std::optional<lab::RunStatus> status;
    std::string tag;           // runs carrying this exact tag
    std::string nameContains;  // substring of the name (case-sensitive)
    std::string createdFrom;   // created_at >= (ISO-8601 text compare, e.g. "2024-05")
    std::string createdBefore; // created_at <
    int64_t limit = -1;        // newest first; -1 = all
};

// The stored-run values live in lab (the selection and report models read them).
using StoredCandidate = lab::StoredCandidate;
using StoredRun = lab::StoredRun;

// A saved selection (selections table): what was asked, the result and the migration
// walk-through, as JSON texts (lab::toJson of Requirements, PriceSheet, SelectionResult,
// MigrationState). pricesJson and migrationJson may be empty.
struct StoredSelection {
    int64_t id = 0;
    std::string createdAt;
    std::vector<int64_t> runIds; // the first is the run the selection belongs to
    std::string requirementsJson;
    std::string pricesJson;
    std::string resultJson;
    std::string migrationJson;
};

enum class RunDetail {
    Summaries, // run and candidate rows with their summaries; no requests, no series
    Full,      // plus every request with its token times, and the series
};

// Key metrics of every candidate of two runs, side by side (runs diff).
struct RunDiff {
    struct Metric {
        std::string key;   // "ttft_ms.p50"
        std::string title; // "TTFT p50 (ms)"
        int precision = 1; // decimals when printed
    };
    struct Column {
        int64_t runId = 0;
        std::string runName;
        std::string label;
        std::string profile;
        std::vector<std::optional<double>>
            values; // one per metric; empty when the summary lacks it
    };
    std::vector<Metric> metrics;
    std::vector<Column> columns; // run 1's candidates, then run 2's

    // {"metrics": [...keys], "runs": [{id, name}], "columns": [{run_id, label, profile, values:
    // {key: v}}]}
    nlohmann::ordered_json toJson() const;
};

// What deleteRun does with the saved selections that pooled the run.
enum class SelectionsOfRun {
    Delete, // delete them with the run (and their migration walk-through)
    Refuse, // throw RunHasSelectionsError and delete nothing
};

// deleteRun(id, SelectionsOfRun::Refuse) on a run that saved selections cite: which ones.
class RunHasSelectionsError : public DbError {
public:
    RunHasSelectionsError(const std::string& what, std::vector<StoredSelection> s)
        : DbError(what), selections(std::move(s)) {}
    std::vector<StoredSelection> selections; // newest first
};

// One connection to one store file. Not thread-safe: use a RunStore from one thread at a
// time (the GUI's store thread). Readers never block the sink's writer (WAL), and each
// call reads inside one transaction, so it sees one consistent snapshot.
class RunStore {
public:
    // openDatabase(path, options): checks, migrations, recovery of interrupted runs.
    static RunStore open(const std::string& path, const OpenOptions& options = {});

    const std::string& path() const { return m_connection.path(); }
    Connection& connection() { return m_connection; }

    std::vector<RunListing> listRuns(const RunFilter& filter = {}) const;
    // Throws DbError "no run ID in PATH" when absent.
    StoredRun getRun(int64_t id, RunDetail detail = RunDetail::Full) const;
    bool hasRun(int64_t id) const;

    // Refuses (DbError) to delete a run whose writer is still alive. Saved selections that
    // pooled the run go with it (Delete) or stop the deletion (Refuse: RunHasSelectionsError,
    // nothing deleted). Returns the selections deleted, newest first; one transaction.
    std::vector<StoredSelection> deleteRun(int64_t id, SelectionsOfRun selections = SelectionsOfRun::Delete);
    void renameRun(int64_t id, const std::string& name);
    void setTags(int64_t id, const std::vector<std::string>& tags);

    // The self-describing export document (run_document.h).
    nlohmann::ordered_json exportRun(int64_t id) const;
    // Validates `document` and inserts it as a new run: new run and candidate ids,
    // everything else as in the document (a `running` run arrives `interrupted`).
    // Throws DbError "import: <json path>: <why>" on a bad document; inserts nothing then.
    int64_t importRun(const nlohmann::ordered_json& document);

    // The key metrics of every candidate of the given runs, in that order.
    RunDiff metricsTable(const std::vector<int64_t>& runIds) const;
    RunDiff diffRuns(int64_t id1, int64_t id2) const { return metricsTable({id1, id2}); }

    // Selections (selection_store.cpp). saveSelection assigns id and created_at and throws
    // DbError "no run ID in PATH" when a run is missing; a selection is deleted with any
    // of its runs.
    int64_t saveSelection(const StoredSelection& selection);
    // Throws DbError "no selection ID in PATH" when absent.
    StoredSelection getSelection(int64_t id) const;
    // Newest first; with runId, only the selections citing that run.
    std::vector<StoredSelection> listSelections(std::optional<int64_t> runId = std::nullopt) const;
    // Replaces the migration walk-through state of a saved selection.
    void setSelectionMigration(int64_t id, const std::string& migrationJson);
    void deleteSelection(int64_t id);

private:
    explicit RunStore(Connection c) : m_connection(std::move(c)) {}
    int64_t insert(const StoredRun& run);
    // Reads take transactions too, so const members need the connection mutable.
    mutable Connection m_connection;
};

} // namespace mb::db
