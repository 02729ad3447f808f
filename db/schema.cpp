// Schema migrations, the read-only checks before a store file is touched, and recovery of dead
// runs.
#include "db/schema.h"

#include "db/run_lock.h"

#include <sqlite3.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sys/stat.h>

namespace mb::db {

namespace {

// Version 1: the initial schema. Times are ms since the run's start (REAL; NULL when the
// event never happened); created_at is ISO-8601 UTC text; *_json columns hold JSON text.
constexpr std::string_view kSchemaV1 = R"sql(
PRAGMA application_id = 1296196706;

CREATE TABLE runs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: reports cite run ids
    created_at       TEXT NOT NULL,
    name             TEXT NOT NULL DEFAULT '',
    tags             TEXT NOT NULL DEFAULT '[]',          -- JSON array of strings
    status           TEXT NOT NULL CHECK (status IN ('running', 'complete', 'interrupted', 'failed')),
    workload_json    TEXT,
    config_json      TEXT,
    environment_json TEXT,
    summary_json     TEXT
);
CREATE INDEX runs_by_created_at ON runs(created_at);
CREATE INDEX runs_running ON runs(status) WHERE status = 'running';

CREATE TABLE candidates (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    label        TEXT NOT NULL,
    target_kind  TEXT NOT NULL,
    model_path   TEXT NOT NULL DEFAULT '',
    model_bytes  INTEGER NOT NULL DEFAULT 0,
    model_sha256 TEXT NOT NULL DEFAULT '',
    shape_json   TEXT,
    profile_json TEXT,
    summary_json TEXT
);
CREATE INDEX candidates_by_run ON candidates(run_id);

CREATE TABLE requests (
    id               INTEGER PRIMARY KEY,
    candidate_id     INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
    idx              INTEGER NOT NULL,                    -- index in the workload
    status           TEXT NOT NULL CHECK (status IN ('ok', 'error', 'cancelled', 'rejected')),
    error            TEXT NOT NULL DEFAULT '',
    prompt_tokens    INTEGER NOT NULL DEFAULT 0,
    cached_tokens    INTEGER NOT NULL DEFAULT 0,
    truncated_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens    INTEGER NOT NULL DEFAULT 0,
    submitted_ms     REAL,
    scheduled_ms     REAL,
    first_token_ms   REAL,
    finished_ms      REAL,
    queue_ms         REAL,                                -- derived, kept for SQL queries
    ttft_ms          REAL,
    e2e_ms           REAL,
    tpot_ms          REAL,
    kv_bytes_peak    INTEGER NOT NULL DEFAULT 0,
    tokens           BLOB,                                -- generated ids, int32 little-endian
    output_text      TEXT NOT NULL DEFAULT ''
);
CREATE INDEX requests_by_candidate ON requests(candidate_id, idx);

CREATE TABLE token_events (
    request_id  INTEGER NOT NULL REFERENCES requests(id) ON DELETE CASCADE,
    token_index INTEGER NOT NULL,
    time_ms     REAL NOT NULL,
    PRIMARY KEY (request_id, token_index)
) WITHOUT ROWID;

CREATE TABLE series (
    candidate_id INTEGER NOT NULL REFERENCES candidates(id) ON DELETE CASCADE,
    metric       TEXT NOT NULL,
    second       REAL NOT NULL,
    value        REAL NOT NULL,
    PRIMARY KEY (candidate_id, metric, second)
) WITHOUT ROWID;

CREATE TABLE selections (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id            INTEGER REFERENCES runs(id) ON DELETE CASCADE,
    created_at        TEXT NOT NULL,
    requirements_json TEXT,
    result_json       TEXT,
    migration_json    TEXT
);
CREATE INDEX selections_by_run ON selections(run_id);

CREATE TABLE reports (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id       INTEGER REFERENCES runs(id) ON DELETE CASCADE,
    selection_id INTEGER REFERENCES selections(id) ON DELETE SET NULL,
    created_at   TEXT NOT NULL,
    format       TEXT NOT NULL,
    path         TEXT NOT NULL
);
CREATE INDEX reports_by_run ON reports(run_id);
CREATE INDEX reports_by_selection ON reports(selection_id);
)sql";

// Version 2: a selection names every run it pooled (repeats) and keeps its price sheet.
// run_id stays the first run (its ON DELETE CASCADE); the trigger removes a selection when
// any other of its runs is deleted, so a stored selection never cites a missing run.
constexpr std::string_view kSchemaV2 = R"sql(
ALTER TABLE selections ADD COLUMN run_ids TEXT NOT NULL DEFAULT '[]';  -- JSON array of run ids
ALTER TABLE selections ADD COLUMN prices_json TEXT;
UPDATE selections SET run_ids = json_array(run_id) WHERE run_id IS NOT NULL;
CREATE TRIGGER selections_follow_runs AFTER DELETE ON runs BEGIN
    DELETE FROM selections
    WHERE EXISTS (SELECT 1 FROM json_each(selections.run_ids) WHERE json_each.value = OLD.id);
END;
)sql";

// Version 3: output plugins (PRODUCT.md §11). A request keeps what the chain showed beside
// the raw output_text, with the chain's time; scripts are approved by hash.
constexpr std::string_view kSchemaV3 = R"sql(
ALTER TABLE requests ADD COLUMN postprocessed INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN postprocessed_text TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN postprocess_status TEXT NOT NULL DEFAULT '';
ALTER TABLE requests ADD COLUMN postprocess_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN postprocess_start_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN postprocess_max_call_ms REAL NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN postprocess_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN output_times BLOB;                 -- shown pieces' times, float64 ms little-endian
CREATE TABLE plugin_approvals (
    sha256      TEXT PRIMARY KEY CHECK (length(sha256) = 64),
    path        TEXT NOT NULL,              -- where the approved file was (informative)
    approved_by TEXT NOT NULL,
    approved_at TEXT NOT NULL,              -- ISO-8601 UTC
    audit_json  TEXT NOT NULL               -- the audit report the approver saw
);
)sql";

// Version 4: image input (issue 25, PRODUCT.md §3). A request keeps its images, the prompt
// positions they filled, those truncation dropped, and the encoder's time.
constexpr std::string_view kSchemaV4 = R"sql(
ALTER TABLE requests ADD COLUMN images INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN image_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN images_dropped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE requests ADD COLUMN encode_ms REAL NOT NULL DEFAULT 0;
)sql";

static_assert(kApplicationId == 1296196706, "kSchemaV1 spells the application id in decimal");

[[noreturn]] void notOurs(const std::string& path, const std::string& why) {
    throw DbError(path + " is not a ModeBench database (" + why + ")");
}

uint32_t bigEndian(const unsigned char* p, int bytes) {
    uint32_t v = 0;
    for (int i = 0; i < bytes; ++i) v = (v << 8) | p[i];
    return v;
}

bool walHasFrames(const std::string& path) {
    struct stat wal {};
    return ::stat((path + "-wal").c_str(), &wal) == 0 && wal.st_size > 0;
}

// What can be learned from the bytes alone. Returns false when the file does not exist.
// Never opens the file for writing.
bool checkFileHeader(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    if (S_ISDIR(st.st_mode)) notOurs(path, "a directory");
    if (!S_ISREG(st.st_mode)) notOurs(path, "not a regular file");
    if (st.st_size == 0) return true; // sqlite treats an empty file as an empty database
    std::array<unsigned char, 100> h{};
    std::ifstream in(path, std::ios::binary);
    if (!in) throw DbError("cannot read " + path);
    in.read(reinterpret_cast<char*>(h.data()), h.size());
    const auto got = static_cast<size_t>(in.gcount());
    static constexpr char kMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                        'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
    if (got < sizeof kMagic || std::memcmp(h.data(), kMagic, sizeof kMagic) != 0)
        notOurs(path, "not SQLite");
    if (got < h.size()) notOurs(path, "truncated SQLite header");
    uint32_t pageSize = bigEndian(&h[16], 2);
    if (pageSize == 1) pageSize = 65536;
    if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) != 0)
        notOurs(path, "bad SQLite page size " + std::to_string(pageSize));
    // The in-header page count is valid when "version-valid-for" equals the change counter.
    // A WAL may legitimately hold pages beyond the main file (a checkpoint cut short).
    const uint32_t pages = bigEndian(&h[28], 4);
    const bool countValid = pages > 0 && bigEndian(&h[92], 4) == bigEndian(&h[24], 4);
    if (countValid && !walHasFrames(path) &&
        static_cast<uint64_t>(st.st_size) < uint64_t{pages} * pageSize)
        notOurs(path, "truncated: the header promises " + std::to_string(pages) + " pages of " +
                          std::to_string(pageSize) + " bytes, the file holds " +
                          std::to_string(st.st_size) + " bytes");
    return true;
}

bool isCorruption(int code) {
    const int primary = code & 0xff;
    return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

// user_version of an existing file, read through a read-only connection; checks that the
// file is a ModeBench store (or an empty database) that this build can read. Without WAL
// content the main file is the whole database, and an immutable open reads it without
// creating -wal/-shm files beside a file that may not be ours; with WAL content a plain
// read-only open reads the WAL too (its files exist already).
int probeVersion(const std::string& path) {
    try {
        Connection ro =
            Connection::open(path, walHasFrames(path) ? OpenMode::ReadOnly : OpenMode::Immutable);
        ro.exec("PRAGMA busy_timeout = 5000");
        const auto version = ro.queryInt("PRAGMA user_version");
        const auto appId = ro.queryInt("PRAGMA application_id");
        const auto objects = ro.queryInt("SELECT count(*) FROM sqlite_schema");
        if (appId != kApplicationId && (appId != 0 || version != 0 || objects != 0))
            notOurs(path, "a SQLite database of another application");
        if (version > latestSchemaVersion())
            throw DbError(path + " has schema version " + std::to_string(version) +
                          ", newer than this build's " + std::to_string(latestSchemaVersion()) +
                          "; open it with a newer ModeBench");
        if (version < 0) notOurs(path, "negative schema version");
        return static_cast<int>(version);
    } catch (const DbError& e) {
        if (isCorruption(e.code())) notOurs(path, std::string("corrupt: ") + e.what());
        throw;
    }
}

void setPragmas(Connection& c, bool writer) {
    c.exec("PRAGMA busy_timeout = 5000");
    if (writer) {
        const std::string mode = c.queryText("PRAGMA journal_mode = WAL");
        if (mode != "wal")
            throw DbError("cannot switch " + c.path() + " to WAL journaling (got '" + mode + "')");
        c.exec("PRAGMA synchronous = FULL");
    }
}

} // namespace

const std::vector<std::string_view>& migrations() {
    static const std::vector<std::string_view> kMigrations = {
        kSchemaV1,
        kSchemaV2,
        kSchemaV3,
        kSchemaV4,
        // Version 5 goes here: one SQL string taking version 4 to 5.
    };
    return kMigrations;
}

int latestSchemaVersion() {
    return static_cast<int>(migrations().size());
}

void migrate(Connection& c, int target) {
    if (target < 0 || target > latestSchemaVersion())
        throw DbError("no schema version " + std::to_string(target) + " (this build knows 0.." +
                      std::to_string(latestSchemaVersion()) + ")");
    Transaction tx(c, Transaction::Kind::Immediate);
    // Read under the write lock: another process may have migrated since the probe.
    const auto from = c.queryInt("PRAGMA user_version");
    if (from > target)
        throw DbError(c.path() + " has schema version " + std::to_string(from) +
                      ", newer than this build's " + std::to_string(target) +
                      "; open it with a newer ModeBench");
    if (from == target) return;
    for (auto v = from; v < target; ++v) c.exec(migrations()[static_cast<size_t>(v)]);
    // Migrations run with foreign keys off (sqlite's procedure for table rebuilds); check
    // that they left every reference valid before committing.
    if (c.prepare("PRAGMA foreign_key_check").step())
        throw DbError("migrating " + c.path() + " to version " + std::to_string(target) +
                      " broke a foreign key");
    c.exec("PRAGMA user_version = " + std::to_string(target));
    tx.commit();
}

Connection openDatabase(const std::string& path, const OpenOptions& options) {
    const bool exists = checkFileHeader(path);
    if (!exists && (options.readOnly || !options.create)) throw DbError("no database at " + path);
    if (exists) probeVersion(path);

    Connection c = Connection::open(path, options.readOnly ? OpenMode::ReadOnly
                                          : options.create ? OpenMode::ReadWriteCreate
                                                           : OpenMode::ReadWrite);
    try {
        setPragmas(c, !options.readOnly);
        if (!options.readOnly) {
            // Only a file that needs it takes the write lock for migrating.
            if (c.queryInt("PRAGMA user_version") != latestSchemaVersion()) {
                c.exec("PRAGMA foreign_keys = OFF"); // a no-op inside transactions, hence here
                migrate(c);
            }
        } else if (c.queryInt("PRAGMA user_version") < latestSchemaVersion()) {
            throw DbError(path + " has an older schema (version " +
                          c.queryText("PRAGMA user_version") +
                          "); open it for writing once to migrate it");
        }
        c.exec("PRAGMA foreign_keys = ON");
        if (!options.readOnly && options.recoverInterrupted) recoverInterruptedRuns(c);
    } catch (const DbError& e) {
        if (isCorruption(e.code())) notOurs(path, std::string("corrupt: ") + e.what());
        throw;
    }
    return c;
}

int recoverInterruptedRuns(Connection& c) {
    // Cheap check first (partial index), so that most opens take no write lock.
    if (c.queryInt("SELECT EXISTS (SELECT 1 FROM runs WHERE status = 'running')") == 0) return 0;
    const std::string base = c.filename();
    std::vector<RunLock> stale;
    {
        // Under the write lock, a writer's beginRun has either not committed (its row is
        // invisible) or committed while holding its lock; finishRun commits before it
        // releases. So "row running and lock free" means the writer is gone.
        Transaction tx(c, Transaction::Kind::Immediate);
        Statement running = c.prepare("SELECT id FROM runs WHERE status = 'running'");
        Statement mark =
            c.prepare("UPDATE runs SET status = 'interrupted' WHERE id = ? AND status = 'running'");
        while (running.step()) {
            const int64_t id = running.columnInt(0);
            RunLock lock;
            if (RunLock::isHeld(base, id, &lock)) continue;
            mark.bindAll(id).run();
            stale.push_back(std::move(lock));
        }
        running.reset();
        tx.commit();
    }
    for (auto& lock : stale) lock.releaseAndRemove();
    return static_cast<int>(stale.size());
}

std::string isoNowUtc() {
    const auto now = std::chrono::system_clock::now();
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
    const std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                  static_cast<int>(ms % 1000));
    return buf;
}

} // namespace mb::db
