// The run store: what the sink writes comes back; list, edit, delete, diff; export → import →
// export.
#include "db/run_document.h"
#include "db/run_store.h"
#include "db/sqlite_run_sink.h"
#include "db_test_util.h"
#include "lab/metrics.h"

#include <gtest/gtest.h>

#include <sstream>

using namespace mb;
using namespace mb::db;
using mb::test::TempDir;

namespace {

void expectSameRecord(const lab::RequestRecord& got, const lab::RequestRecord& want) {
    EXPECT_EQ(got.id, want.id);
    EXPECT_EQ(got.status, want.status);
    EXPECT_EQ(got.error, want.error);
    EXPECT_EQ(got.promptTokens, want.promptTokens);
    EXPECT_EQ(got.cachedTokens, want.cachedTokens);
    EXPECT_EQ(got.truncatedTokens, want.truncatedTokens);
    EXPECT_EQ(got.outputTokens, want.outputTokens);
    EXPECT_EQ(got.submittedMs, want.submittedMs);
    EXPECT_EQ(got.scheduledMs, want.scheduledMs);
    EXPECT_EQ(got.firstTokenMs, want.firstTokenMs);
    EXPECT_EQ(got.finishedMs, want.finishedMs);
    EXPECT_EQ(got.tokenTimesMs, want.tokenTimesMs);
    EXPECT_EQ(got.kvBytesPeak, want.kvBytesPeak);
    EXPECT_EQ(got.tokens, want.tokens);
    EXPECT_EQ(got.text, want.text);
}

// The document without the fields an import re-assigns or that name the export itself.
nlohmann::ordered_json withoutIds(nlohmann::ordered_json doc) {
    doc.erase("exported_at");
    doc["run"].erase("id");
    for (auto& c : doc["candidates"]) c.erase("id");
    return doc;
}

} // namespace

TEST(RunStore, SinkWritesWhatGetRunReads) {
    TempDir dir;
    const std::string path = dir / "store.db";
    int64_t id = 0;
    {
        SqliteRunSink sink(path);
        id = mb::test::writeSampleRun(sink, "first", 8, 5);
        EXPECT_EQ(sink.committedRequests(), 16);
    }
    RunStore store = RunStore::open(path);
    const StoredRun run = store.getRun(id);
    EXPECT_EQ(run.id, id);
    EXPECT_EQ(run.info.name, "first");
    EXPECT_EQ(run.info.tags, (std::vector<std::string>{"nightly", "cpu"}));
    EXPECT_EQ(run.status, lab::RunStatus::Complete);
    EXPECT_EQ(run.info.workloadJson, mb::test::makeRunInfo("x").workloadJson);
    EXPECT_EQ(run.summaryJson, R"({"a":{"ok":8},"b":{"ok":7}})");
    EXPECT_EQ(run.createdAt.size(), 24u) << run.createdAt; // 2024-05-01T12:34:56.789Z
    EXPECT_EQ(run.createdAt.back(), 'Z');
    ASSERT_EQ(run.candidates.size(), 2u);
    const StoredCandidate& a = run.candidates[0];
    EXPECT_EQ(a.info.label, "a");
    EXPECT_EQ(a.info.modelSha256, std::string(64, 'a'));
    EXPECT_EQ(a.info.modelBytes, 1185376u);
    ASSERT_EQ(a.requests.size(), 8u);
    for (int i = 0; i < 8; ++i)
        expectSameRecord(a.requests[static_cast<size_t>(i)],
                         mb::test::makeRecord(static_cast<uint64_t>(i), 5));
    const StoredCandidate& b = run.candidates[1];
    expectSameRecord(b.requests[7], mb::test::makeRecord(7, 6, lab::RequestStatus::Rejected));
    ASSERT_EQ(a.series.size(), 2u);
    EXPECT_EQ(a.series[0].first, "throughput");
    EXPECT_EQ(a.series[0].second, (std::vector<std::pair<double, double>>{{0, 10}, {1, 12.5}}));
    // Derived columns are stored for SQL queries.
    Statement s = store.connection().prepare(
        "SELECT queue_ms, ttft_ms, tpot_ms FROM requests WHERE idx = 3 AND "
        "candidate_id = ?");
    s.bind(1, a.id);
    ASSERT_TRUE(s.step());
    const auto rec = mb::test::makeRecord(3, 5);
    EXPECT_DOUBLE_EQ(s.columnDouble(0), rec.queueMs());
    EXPECT_DOUBLE_EQ(s.columnDouble(1), rec.ttftMs());
    EXPECT_DOUBLE_EQ(s.columnDouble(2), rec.tpotMs());
    // Summaries only: no requests loaded.
    EXPECT_TRUE(store.getRun(id, RunDetail::Summaries).candidates[0].requests.empty());
    EXPECT_THROW(store.getRun(id + 100), DbError);
}

TEST(RunStore, ListFiltersRenamesTagsAndDeletes) {
    TempDir dir;
    const std::string path = dir / "store.db";
    std::vector<int64_t> ids;
    {
        SqliteRunSink sink(path);
        for (int i = 0; i < 3; ++i)
            ids.push_back(mb::test::writeSampleRun(sink, "run " + std::to_string(i), 2, 2));
    }
    RunStore store = RunStore::open(path);
    auto runs = store.listRuns();
    ASSERT_EQ(runs.size(), 3u);
    EXPECT_EQ(runs[0].id, ids[2]); // newest first
    ASSERT_EQ(runs[0].candidates.size(), 2u);
    EXPECT_EQ(runs[0].candidates[0].label, "a");
    EXPECT_EQ(runs[0].candidates[0].profileName, "fast");
    EXPECT_EQ(runs[0].candidates[1].profileName, "regular");
    EXPECT_EQ(runs[0].status, lab::RunStatus::Complete);

    store.renameRun(ids[1], "renamed");
    store.setTags(ids[1], {"keep", "with \"quotes\""});
    EXPECT_EQ(store.getRun(ids[1], RunDetail::Summaries).info.name, "renamed");
    EXPECT_EQ(store.listRuns({.tag = "with \"quotes\""}).size(), 1u);
    EXPECT_EQ(store.listRuns({.tag = "keep"})[0].id, ids[1]);
    EXPECT_EQ(store.listRuns({.tag = "nightly"}).size(), 2u);
    EXPECT_EQ(store.listRuns({.nameContains = "run "}).size(), 2u);
    EXPECT_EQ(store.listRuns({.status = lab::RunStatus::Failed}).size(), 0u);
    const auto limited = store.listRuns({.limit = 1});
    ASSERT_EQ(limited.size(), 1u);
    EXPECT_EQ(limited[0].candidates.size(), 2u);
    EXPECT_EQ(store.listRuns({.createdFrom = "2000-01-01", .createdBefore = "2000-01-02"}).size(),
              0u);
    EXPECT_THROW(store.renameRun(999, "x"), DbError);

    store.deleteRun(ids[0]);
    EXPECT_EQ(store.listRuns().size(), 2u);
    EXPECT_THROW(store.deleteRun(ids[0]), DbError);
    // Cascade: nothing of the deleted run is left.
    Connection& c = store.connection();
    EXPECT_EQ(
        c.queryInt("SELECT count(*) FROM candidates WHERE run_id NOT IN (SELECT id FROM runs)"), 0);
    EXPECT_EQ(c.queryInt("SELECT count(*) FROM requests"), 2 * 2 * 2);
    EXPECT_EQ(
        c.queryInt(
            "SELECT count(*) FROM token_events WHERE request_id NOT IN (SELECT id FROM requests)"),
        0);
    EXPECT_EQ(
        c.queryInt(
            "SELECT count(*) FROM series WHERE candidate_id NOT IN (SELECT id FROM candidates)"),
        0);
}

TEST(RunStore, ExportImportExportIsEqual) {
    TempDir dir;
    int64_t id = 0;
    {
        SqliteRunSink sink(dir / "a.db");
        id = mb::test::writeSampleRun(sink, "round trip", 12, 7);
    }
    RunStore a = RunStore::open(dir / "a.db");
    const auto first = a.exportRun(id);
    EXPECT_EQ(first["format"], kRunDocumentFormat);
    EXPECT_EQ(first["format_version"], kRunDocumentVersion);
    EXPECT_EQ(first["run"]["workload"]["seed"], 42);
    EXPECT_EQ(first["candidates"][1]["requests"][11]["scheduled_ms"], nullptr);
    EXPECT_EQ(first["candidates"][0]["requests"][3]["token_times_ms"].size(), 7u);

    // Through text, into another store and back into the same one.
    const auto parsed = nlohmann::ordered_json::parse(first.dump());
    RunStore b = RunStore::open(dir / "b.db");
    const int64_t idB = b.importRun(parsed);
    const int64_t idA2 = a.importRun(parsed);
    EXPECT_NE(idA2, id);
    const auto second = b.exportRun(idB);
    const auto third = a.exportRun(idA2);
    EXPECT_EQ(withoutIds(second), withoutIds(first));
    EXPECT_EQ(withoutIds(third), withoutIds(first));
    EXPECT_EQ(second["run"]["created_at"], first["run"]["created_at"]); // kept, not re-assigned
}

// One serialiser of request records: the document's requests are lab::toJson's (token
// times included), and documents exported before it was shared ("index") still import.
TEST(RunStore, DocumentRequestsAreLabsRecordsAndOldIndexKeysImport) {
    TempDir dir;
    int64_t id = 0;
    {
        SqliteRunSink sink(dir / "a.db");
        id = mb::test::writeSampleRun(sink, "source", 3, 2);
    }
    RunStore store = RunStore::open(dir / "a.db");
    const StoredRun run = store.getRun(id);
    auto doc = store.exportRun(id);
    const auto& requests = doc["candidates"][1]["requests"];
    ASSERT_EQ(requests.size(), run.candidates[1].requests.size());
    for (size_t i = 0; i < requests.size(); ++i)
        EXPECT_EQ(requests[i], lab::toJson(run.candidates[1].requests[i], true)) << i;
    EXPECT_TRUE(requests[0].contains("id"));
    EXPECT_FALSE(requests[0].contains("index"));

    doc["format_version"] = 1; // as exported before the serialiser was shared
    for (auto& c : doc["candidates"])
        for (auto& r : c["requests"]) {
            r["index"] = r["id"];
            r.erase("id");
        }
    const StoredRun back = store.getRun(store.importRun(doc));
    ASSERT_EQ(back.candidates.size(), run.candidates.size());
    for (size_t c = 0; c < run.candidates.size(); ++c)
        for (size_t i = 0; i < run.candidates[c].requests.size(); ++i)
            expectSameRecord(back.candidates[c].requests[i], run.candidates[c].requests[i]);
}

TEST(RunStore, ImportRejectsBadDocumentsClearly) {
    TempDir dir;
    int64_t id = 0;
    {
        SqliteRunSink sink(dir / "a.db");
        id = mb::test::writeSampleRun(sink, "source", 3, 2);
    }
    RunStore store = RunStore::open(dir / "a.db");
    const auto good = store.exportRun(id);
    auto expectError = [&](nlohmann::ordered_json doc, const std::string& mentions) {
        try {
            store.importRun(doc);
            ADD_FAILURE() << "imported; expected: " << mentions;
        } catch (const DbError& e) {
            EXPECT_NE(std::string(e.what()).find(mentions), std::string::npos) << e.what();
        }
    };
    auto doc = good;
    doc["format"] = "something-else";
    expectError(doc, "import: format: expected \"modebench-run\"");
    doc = good;
    doc["format_version"] = kRunDocumentVersion + 1;
    expectError(doc, "newer than this build reads");
    doc = good;
    doc.erase("run");
    expectError(doc, "import: document: missing \"run\"");
    doc = good;
    doc["candidates"][1]["requests"][2]["status"] = "fine";
    expectError(
        doc,
        "import: candidates[1].requests[2].status: expected one of ok, error, cancelled, rejected");
    doc = good;
    doc["candidates"][0]["requests"][1]["token_times_ms"][0] = "soon";
    expectError(doc, "candidates[0].requests[1].token_times_ms[0]: expected a number");
    doc = good;
    doc["candidates"][0]["requests"][1]["id"] = 0;
    expectError(doc, "candidates[0].requests[1].id: id 0 appears twice");
    doc = good;
    doc["run"]["created_at"] = "yesterday";
    expectError(doc, "run.created_at: expected ISO-8601");
    doc = good;
    doc["candidates"][0]["model_bytes"] = -5;
    expectError(doc, "candidates[0].model_bytes: must be >= 0");
    expectError(nlohmann::ordered_json::array(), "expected an object");
    // Nothing half-imported.
    EXPECT_EQ(store.listRuns().size(), 1u);
    EXPECT_EQ(store.connection().queryInt("SELECT count(*) FROM candidates"), 2);
}

TEST(RunStore, ImportedRunningRunArrivesInterrupted) {
    TempDir dir;
    int64_t id = 0;
    {
        SqliteRunSink sink(dir / "a.db");
        id = mb::test::writeSampleRun(sink, "source", 2, 2);
    }
    RunStore store = RunStore::open(dir / "a.db");
    auto doc = store.exportRun(id);
    doc["run"]["status"] = "running";
    const int64_t copy = store.importRun(doc);
    EXPECT_EQ(store.getRun(copy, RunDetail::Summaries).status, lab::RunStatus::Interrupted);
}

TEST(RunStore, CsvHasOneRowPerRequestAndQuotes) {
    TempDir dir;
    int64_t id = 0;
    {
        SqliteRunSink sink(dir / "a.db");
        id = mb::test::writeSampleRun(sink, "csv", 4, 3);
    }
    RunStore store = RunStore::open(dir / "a.db");
    std::ostringstream out;
    writeRunCsv(store.getRun(id), out);
    std::istringstream in(out.str());
    std::string header, line;
    std::getline(in, header);
    EXPECT_EQ(header.rfind("run_id,candidate,profile,index,status,error,prompt_tokens", 0), 0u)
        << header;
    for (const char* col :
         {"queue_ms", "prefill_ms", "ttft_ms", "e2e_ms", "tpot_ms", "kv_bytes_peak", "cached_tokens"})
        EXPECT_NE(header.find(col), std::string::npos) << col;
    std::vector<std::string> rows;
    while (std::getline(in, line)) rows.push_back(line);
    ASSERT_EQ(rows.size(), 8u);
    EXPECT_EQ(rows[0].rfind(std::to_string(id) + ",a,fast,0,ok,,", 0), 0u) << rows[0];
    EXPECT_NE(rows[7].find(",b,regular,3,rejected,\"prompt of 9000 tokens exceeds the context "
                           "limit, \"\"quoted\"\", "
                           "with a comma\","),
              std::string::npos)
        << rows[7];
}

TEST(RunStore, DiffPutsKeyMetricsSideBySide) {
    TempDir dir;
    int64_t r1 = 0, r2 = 0;
    {
        SqliteRunSink sink(dir / "a.db");
        r1 = mb::test::writeSampleRun(sink, "one", 2, 2);
        r2 = mb::test::writeSampleRun(sink, "two", 2, 2);
    }
    RunStore store = RunStore::open(dir / "a.db");
    const RunDiff d = store.diffRuns(r1, r2);
    ASSERT_EQ(d.columns.size(), 4u);
    EXPECT_EQ(d.columns[0].runId, r1);
    EXPECT_EQ(d.columns[2].runId, r2);
    EXPECT_EQ(d.columns[3].profile, "regular");
    const auto at = [&](const std::string& key) {
        for (size_t i = 0; i < d.metrics.size(); ++i)
            if (d.metrics[i].key == key) return i;
        return d.metrics.size();
    };
    ASSERT_LT(at("ttft_ms.p50"), d.metrics.size());
    EXPECT_EQ(d.columns[0].values[at("ttft_ms.p50")], 4.5);
    EXPECT_EQ(d.columns[1].values[at("ttft_ms.p50")], 6.5);
    EXPECT_FALSE(d.columns[0].values[at("tpot_ms.p50")].has_value()); // not in the sample summary
    const auto j = d.toJson();
    EXPECT_EQ(j["columns"][1]["values"]["prefix_cache.hit_rate"], 0.0);
    EXPECT_THROW(store.diffRuns(r1, 12345), DbError);
}
