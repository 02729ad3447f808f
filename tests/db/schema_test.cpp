// Schema versions and migrations from every older version; files that are not ours are refused
// untouched.
#include "db/run_store.h"
#include "db/schema.h"
#include "db_test_util.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace mb::db;
using mb::test::fileState;
using mb::test::TempDir;

namespace {

std::vector<std::string> tableNames(Connection& c) {
    std::vector<std::string> names;
    Statement s = c.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name");
    while (s.step()) names.push_back(s.columnText(0));
    return names;
}

// A store file at exactly `version`: an empty file for 0, else migrations up to it.
void makeVersion(const std::string& path, int version) {
    std::ofstream(path).flush(); // empty file = version 0
    if (version == 0) return;
    Connection c = Connection::open(path, OpenMode::ReadWrite);
    migrate(c, version);
}

void expectRefusedUntouched(const std::string& path, const std::string& mentions) {
    const auto before = fileState(path);
    const bool hadWal = std::filesystem::exists(path + "-wal"),
               hadShm = std::filesystem::exists(path + "-shm");
    try {
        RunStore::open(path);
        ADD_FAILURE() << "opened " << path;
    } catch (const DbError& e) {
        EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    }
    EXPECT_EQ(fileState(path), before) << path << " was modified";
    // Read-only and sink opens refuse it too.
    EXPECT_THROW(openDatabase(path, {.readOnly = true}), DbError);
    EXPECT_THROW(SqliteRunSink sink(path), DbError);
    EXPECT_EQ(fileState(path), before) << path << " was modified";
    // Nor were files created beside it.
    EXPECT_EQ(std::filesystem::exists(path + "-wal"), hadWal);
    EXPECT_EQ(std::filesystem::exists(path + "-shm"), hadShm);
}

} // namespace

TEST(Schema, VersionOneIsTheInitialSchema) {
    EXPECT_GE(latestSchemaVersion(), 1);
    EXPECT_EQ(static_cast<size_t>(latestSchemaVersion()), migrations().size());
}

TEST(Schema, NewFileGetsLatestSchemaAndPragmas) {
    TempDir dir;
    Connection c = openDatabase(dir / "new.db");
    EXPECT_EQ(c.queryInt("PRAGMA user_version"), latestSchemaVersion());
    EXPECT_EQ(c.queryInt("PRAGMA application_id"), kApplicationId);
    EXPECT_EQ(c.queryText("PRAGMA journal_mode"), "wal");
    EXPECT_EQ(c.queryInt("PRAGMA foreign_keys"), 1);
    EXPECT_EQ(c.queryInt("PRAGMA busy_timeout"), 5000);
    const auto tables = tableNames(c);
    for (const char* t :
         {"runs", "candidates", "requests", "token_events", "series", "selections", "reports"})
        EXPECT_NE(std::find(tables.begin(), tables.end(), t), tables.end()) << t;
    Statement idx =
        c.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL");
    std::vector<std::string> indexes;
    while (idx.step()) indexes.push_back(idx.columnText(0));
    for (const char* i : {"runs_by_created_at", "requests_by_candidate", "candidates_by_run"})
        EXPECT_NE(std::find(indexes.begin(), indexes.end(), i), indexes.end()) << i;
    EXPECT_EQ(c.queryText("PRAGMA integrity_check"), "ok");
}

TEST(Schema, MigratesFromEveryOlderVersion) {
    for (int from = 0; from < latestSchemaVersion(); ++from) {
        SCOPED_TRACE("from version " + std::to_string(from));
        TempDir dir;
        const std::string path = dir / ("v" + std::to_string(from) + ".db");
        makeVersion(path, from);
        {
            Connection raw = Connection::open(path, OpenMode::ReadOnly);
            EXPECT_EQ(raw.queryInt("PRAGMA user_version"), from);
        }
        // A read-only open refuses to migrate.
        EXPECT_THROW(openDatabase(path, {.readOnly = true}), DbError);
        RunStore store = RunStore::open(path);
        EXPECT_EQ(store.connection().queryInt("PRAGMA user_version"), latestSchemaVersion());
        EXPECT_EQ(store.connection().queryText("PRAGMA integrity_check"), "ok");
        EXPECT_EQ(store.connection().queryInt("SELECT count(*) FROM pragma_foreign_key_check"), 0);
        // The migrated file is usable end to end.
        {
            SqliteRunSink sink(path);
            mb::test::writeSampleRun(sink, "after migration");
        }
        EXPECT_EQ(store.listRuns().size(), 1u);
        // Same tables as a file created new.
        Connection fresh = openDatabase(dir / "fresh.db");
        EXPECT_EQ(tableNames(store.connection()), tableNames(fresh));
    }
}

TEST(Schema, MigrationIsAtomic) {
    // A migration that fails half way leaves the file at its old version.
    TempDir dir;
    const std::string path = dir / "v0.db";
    makeVersion(path, 0);
    Connection c = Connection::open(path, OpenMode::ReadWrite);
    c.exec("CREATE TABLE runs (x)"); // collides with the initial schema
    EXPECT_THROW(migrate(c), DbError);
    EXPECT_EQ(c.queryInt("PRAGMA user_version"), 0);
    EXPECT_EQ(c.queryInt("SELECT count(*) FROM sqlite_schema WHERE name = 'candidates'"), 0);
}

TEST(Schema, NewerSchemaIsRefusedUntouched) {
    TempDir dir;
    const std::string path = dir / "future.db";
    {
        SqliteRunSink sink(path);
        mb::test::writeSampleRun(sink, "from the future");
    }
    {
        Connection raw = Connection::open(path, OpenMode::ReadWrite);
        raw.exec("PRAGMA user_version = " + std::to_string(latestSchemaVersion() + 1));
    }
    const std::string newer = std::to_string(latestSchemaVersion() + 1);
    const std::string ours = std::to_string(latestSchemaVersion());
    expectRefusedUntouched(path, "schema version " + newer + ", newer than this build's " + ours);
}

TEST(Schema, TextFileIsRefusedUntouched) {
    TempDir dir;
    const std::string path = dir / "notes.db";
    std::ofstream(path) << "these are my notes, not a database\n";
    expectRefusedUntouched(path, path + " is not a ModeBench database (not SQLite)");
    const std::string tiny = dir / "tiny.db";
    std::ofstream(tiny) << "SQLite";
    expectRefusedUntouched(tiny, "not SQLite");
}

TEST(Schema, TruncatedFileIsRefusedUntouched) {
    TempDir dir;
    const std::string path = dir / "cut.db";
    {
        SqliteRunSink sink(path);
        mb::test::writeSampleRun(sink, "to be cut", 200, 20);
    }
    const std::string bytes = mb::test::fileBytes(path);
    ASSERT_GT(bytes.size(), 16384u);
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
    expectRefusedUntouched(path, "not a ModeBench database (truncated");
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), 60);
    expectRefusedUntouched(path, "not a ModeBench database");
}

TEST(Schema, DirectoryIsRefused) {
    TempDir dir;
    std::filesystem::create_directories(dir / "adir.db");
    EXPECT_THROW(RunStore::open(dir / "adir.db"), DbError);
    try {
        RunStore::open(dir / "adir.db");
    } catch (const DbError& e) {
        EXPECT_NE(std::string(e.what()).find("is not a ModeBench database (a directory)"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(std::filesystem::is_empty(dir / "adir.db"));
}

TEST(Schema, OtherApplicationsDatabaseIsRefusedUntouched) {
    TempDir dir;
    const std::string path = dir / "other.db";
    {
        Connection c = Connection::open(path, OpenMode::ReadWriteCreate);
        c.exec("CREATE TABLE contacts (name TEXT); INSERT INTO contacts VALUES ('ada')");
    }
    expectRefusedUntouched(path, "a SQLite database of another application");
}

TEST(Schema, EmptyFileBecomesAStore) {
    TempDir dir;
    const std::string path = dir / "empty.db";
    std::ofstream(path).flush();
    RunStore store = RunStore::open(path);
    EXPECT_TRUE(store.listRuns().empty());
    EXPECT_THROW(RunStore::open(dir / "missing.db", {.readOnly = true}), DbError);
    EXPECT_THROW(RunStore::open(dir / "no/such/dir/x.db"), DbError);
}
