// The store's schema, versioned through PRAGMA user_version, and the one way to open a store file.
#pragma once

#include "db/sqlite.h"

#include <string>
#include <string_view>
#include <vector>

namespace mb::db {

// Ordered migrations: entry i takes the schema from user_version i to i + 1 (entry 0 is
// the initial schema, version 1). Adding version N + 1 later is appending one entry; old
// entries never change, because files in the field were built by them.
const std::vector<std::string_view>& migrations();
// The newest schema this build understands: migrations().size().
int latestSchemaVersion();

// PRAGMA application_id of ModeBench stores ("MBdb"), set by the first migration.
inline constexpr int64_t kApplicationId = 0x4D426462;

struct OpenOptions {
    bool readOnly = false; // no migration, no recovery, never writes the file
    bool create = true;    // create a missing file (ignored when readOnly)
    // Mark runs still `running` whose writer is gone as `interrupted` (see run_lock.h).
    bool recoverInterrupted = true;
};

// Opens a store file. Before sqlite writes anything it checks, reading only:
//  - a directory, or a file that does not start with "SQLite format 3\0" →
//    DbError "PATH is not a ModeBench database (...)"; a zero-length file counts as new;
//  - a SQLite file sqlite reports corrupt, or whose header promises more pages than the
//    file holds (a truncated copy) → the same error, naming the reason;
//  - a SQLite file of another application (foreign application_id, or tables at
//    user_version 0) → the same error;
//  - user_version newer than latestSchemaVersion() → DbError naming both versions.
// In each case the file is left byte-for-byte as it was. Then, unless readOnly: WAL
// journal, synchronous=FULL (a commit is on disk when COMMIT returns), migrations from
// the file's version inside one transaction, and recovery of interrupted runs. Every
// connection gets foreign_keys=ON and busy_timeout=5000 ms.
Connection openDatabase(const std::string& path, const OpenOptions& options = {});

// Applies migrations [from user_version, target) inside one IMMEDIATE transaction and
// sets user_version = target. Throws DbError when the file is newer than `target`.
// Exposed so that tests can build every older version.
void migrate(Connection& connection, int target = latestSchemaVersion());

// Sets status = 'interrupted' on every `running` run whose lock no live writer holds
// and removes those stale lock files. Returns how many runs it marked.
int recoverInterruptedRuns(Connection& connection);

// ISO-8601 UTC with milliseconds, e.g. "2024-05-01T12:34:56.789Z" (sorts as text).
std::string isoNowUtc();

} // namespace mb::db
