// Saved selections: save, load, list, migration state, deletion with their runs, and v1 files.
#include "db/run_store.h"
#include "db/schema.h"
#include "db_test_util.h"

#include <gtest/gtest.h>

using namespace mb::db;
using mb::test::TempDir;

namespace {

StoredSelection selectionOf(std::vector<int64_t> runIds) {
    StoredSelection s;
    s.runIds = std::move(runIds);
    s.requirementsJson = R"({"slo":{"ttft_ms":{"p95":3000}}})";
    s.pricesJson = R"({"currency":"CNY"})";
    s.resultJson = R"({"recommendation":"fast"})";
    return s;
}

struct TwoRuns {
    std::string path;
    int64_t run1, run2;
};

// A store with two sample runs.
TwoRuns twoRuns(const TempDir& dir) {
    const std::string path = dir / "s.db";
    SqliteRunSink sink(path);
    const int64_t one = mb::test::writeSampleRun(sink, "one");
    return {path, one, mb::test::writeSampleRun(sink, "two")};
}

} // namespace

TEST(SelectionStore, SavesLoadsListsAndUpdates) {
    TempDir dir;
    const auto [path, run1, run2] = twoRuns(dir);
    RunStore store = RunStore::open(path);
    const int64_t a = store.saveSelection(selectionOf({run1}));
    const int64_t b = store.saveSelection(selectionOf({run1, run2}));
    EXPECT_NE(a, b);

    const StoredSelection got = store.getSelection(b);
    EXPECT_EQ(got.id, b);
    EXPECT_EQ(got.runIds, (std::vector<int64_t>{run1, run2}));
    EXPECT_EQ(got.requirementsJson, R"({"slo":{"ttft_ms":{"p95":3000}}})");
    EXPECT_EQ(got.pricesJson, R"({"currency":"CNY"})");
    EXPECT_EQ(got.resultJson, R"({"recommendation":"fast"})");
    EXPECT_TRUE(got.migrationJson.empty());
    EXPECT_EQ(got.createdAt.size(), 24u);

    EXPECT_EQ(store.listSelections().size(), 2u);
    EXPECT_EQ(store.listSelections(run2).size(), 1u);
    EXPECT_EQ(store.listSelections(run2).front().id, b);
    EXPECT_EQ(store.listSelections(run1).size(), 2u);

    store.setSelectionMigration(a, R"({"node":"F"})");
    EXPECT_EQ(store.getSelection(a).migrationJson, R"({"node":"F"})");
    EXPECT_THROW(store.setSelectionMigration(9999, "{}"), DbError);

    try {
        store.getSelection(9999);
        FAIL();
    } catch (const DbError& e) {
        EXPECT_NE(std::string(e.what()).find("no selection 9999 in"), std::string::npos);
    }
    try {
        store.saveSelection(selectionOf({run1, 4242}));
        FAIL();
    } catch (const DbError& e) {
        EXPECT_NE(std::string(e.what()).find("no run 4242 in"), std::string::npos);
    }
    EXPECT_EQ(store.listSelections().size(), 2u) << "a refused save inserts nothing";

    store.deleteSelection(a);
    EXPECT_EQ(store.listSelections().size(), 1u);
}

TEST(SelectionStore, ASelectionGoesWithAnyOfItsRuns) {
    TempDir dir;
    const auto [path, run1, run2] = twoRuns(dir);
    RunStore store = RunStore::open(path);
    store.saveSelection(selectionOf({run1}));
    store.saveSelection(selectionOf({run1, run2}));
    const int64_t onlySecond = store.saveSelection(selectionOf({run2}));
    store.deleteRun(run1); // the first run (cascade) and the second of a pair (trigger)
    const auto left = store.listSelections();
    ASSERT_EQ(left.size(), 1u);
    EXPECT_EQ(left.front().id, onlySecond);
}

// SelectionsOfRun::Refuse names the selections and deletes nothing; Delete returns what went.
TEST(SelectionStore, DeletingARunCanRefuseWhileSelectionsCiteIt) {
    TempDir dir;
    const auto [path, run1, run2] = twoRuns(dir);
    RunStore store = RunStore::open(path);
    const int64_t pair = store.saveSelection(selectionOf({run1, run2}));
    try {
        store.deleteRun(run2, SelectionsOfRun::Refuse);
        FAIL() << "deleted a run a saved selection cites";
    } catch (const RunHasSelectionsError& e) {
        ASSERT_EQ(e.selections.size(), 1u);
        EXPECT_EQ(e.selections[0].id, pair);
        EXPECT_EQ(std::string(e.what()), "run " + std::to_string(run2) + " is part of saved selection #" +
                                             std::to_string(pair));
    }
    EXPECT_TRUE(store.hasRun(run2));
    EXPECT_EQ(store.listSelections().size(), 1u);

    const auto gone = store.deleteRun(run2, SelectionsOfRun::Delete);
    ASSERT_EQ(gone.size(), 1u);
    EXPECT_EQ(gone[0].id, pair);
    EXPECT_TRUE(store.listSelections().empty());
    EXPECT_TRUE(store.deleteRun(run1, SelectionsOfRun::Refuse).empty()); // none left to refuse for
    EXPECT_FALSE(store.hasRun(run1));
}

TEST(SelectionStore, VersionOneSelectionsMigrate) {
    TempDir dir;
    const std::string path = dir / "v1.db";
    {
        Connection c = Connection::open(path, OpenMode::ReadWriteCreate);
        migrate(c, 1);
        c.exec("INSERT INTO runs (created_at, status) VALUES ('2024-01-01T00:00:00.000Z', 'complete')");
        c.exec("INSERT INTO selections (run_id, created_at, requirements_json, result_json) VALUES "
               "(1, '2024-01-01T00:00:01.000Z', '{\"slo\":{}}', '{\"recommendation\":\"regular\"}')");
        EXPECT_EQ(c.queryInt("PRAGMA user_version"), 1);
    }
    RunStore store = RunStore::open(path);
    EXPECT_EQ(store.connection().queryInt("PRAGMA user_version"), latestSchemaVersion());
    EXPECT_GE(latestSchemaVersion(), 2);
    const auto all = store.listSelections();
    ASSERT_EQ(all.size(), 1u);
    EXPECT_EQ(all.front().runIds, (std::vector<int64_t>{1}));
    EXPECT_EQ(all.front().resultJson, R"({"recommendation":"regular"})");
    EXPECT_TRUE(all.front().pricesJson.empty());
    store.deleteRun(1);
    EXPECT_TRUE(store.listSelections().empty());
}
