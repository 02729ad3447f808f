// Run store speed (docs/PERFORMANCE.md "Run store"): sink inserts, listing 10,000 runs, loading
// 100,000 token events.
#include "db/run_rows.h"
#include "db/run_store.h"
#include "db/sqlite_run_sink.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using namespace mb;

// Databases live under $MB_BENCH_DIR (default: the system temp directory), removed at exit.
const fs::path& benchDir() {
    static const fs::path dir = [] {
        const char* env = std::getenv("MB_BENCH_DIR");
        fs::path d = (env && *env ? fs::path(env) : fs::temp_directory_path()) /
                     ("mb_store_bench_" + std::to_string(::getpid()));
        fs::remove_all(d);
        fs::create_directories(d);
        std::atexit([] { fs::remove_all(benchDir()); });
        return d;
    }();
    return dir;
}

lab::RequestRecord record(uint64_t index, int tokens) {
    lab::RequestRecord r;
    r.id = index;
    r.promptTokens = 512;
    r.cachedTokens = 256;
    r.outputTokens = tokens;
    r.submittedMs = 3.0 * static_cast<double>(index);
    r.scheduledMs = r.submittedMs + 0.7;
    for (int k = 0; k < tokens; ++k) {
        r.tokenTimesMs.push_back(r.scheduledMs + 5.0 + 1.37 * k);
        r.tokens.push_back(100 + k % 300);
    }
    r.firstTokenMs = r.tokenTimesMs.front();
    r.finishedMs = r.tokenTimesMs.back() + 0.1;
    r.kvBytesPeak = 1 << 20;
    r.text = std::string(static_cast<size_t>(tokens) * 4, 'x');
    return r;
}

lab::CandidateInfo candidate(const char* label, const char* profile) {
    lab::CandidateInfo c;
    c.label = label;
    c.targetKind = "embedded";
    c.modelPath = "/models/model.gguf";
    c.modelBytes = 1 << 30;
    c.modelSha256 = std::string(64, 'f');
    c.shapeJson = R"({"dim":4096,"layers":32,"heads":32,"kv_heads":8})";
    c.profileJson =
        std::string(R"({"name":")") + profile +
        R"(","weights":"preload","kv":"pool","block_size":16,"prefix_cache":true,"batching":"off"})";
    return c;
}

lab::RunInfo runInfo(int i) {
    lab::RunInfo info;
    info.name = "run " + std::to_string(i);
    info.tags = {"bench"};
    info.workloadJson = R"({"name":"shared-prefix","requests":64,"seed":42})";
    info.configJson = R"({"threads":8,"interleave":false})";
    info.environmentJson = R"({"cpu":{"model":"bench"}})";
    return info;
}

// Token events through the sink, as the runner delivers them: requestFinished per request
// (100 tokens each) on the caller's thread, committed by the store thread; the iteration
// ends when flush() returns, i.e. when every event is committed.
void BM_SinkTokenEvents(benchmark::State& state) {
    const int requests = 1000, tokens = static_cast<int>(state.range(0));
    std::vector<lab::RequestRecord> records;
    for (int i = 0; i < requests; ++i) records.push_back(record(static_cast<uint64_t>(i), tokens));
    db::SqliteRunSink sink((benchDir() / "sink.db").string());
    for (auto _ : state) {
        const int64_t run = sink.beginRun(runInfo(0));
        const int64_t cand = sink.addCandidate(run, candidate("a", "fast"));
        for (const auto& r : records) sink.requestFinished(cand, r);
        sink.flush();
        sink.finishRun(run, lab::RunStatus::Complete, "{}");
    }
    state.SetItemsProcessed(state.iterations() * requests * tokens);
    state.counters["requests_per_s"] = benchmark::Counter(
        static_cast<double>(state.iterations() * requests), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SinkTokenEvents)->Arg(100)->Unit(benchmark::kMillisecond)->UseRealTime();

// listRuns over 10,000 runs of two candidates each (names, tags, statuses, profiles).
void BM_ListRuns10k(benchmark::State& state) {
    const std::string path = (benchDir() / "list.db").string();
    if (!fs::exists(path)) {
        db::RunStore store = db::RunStore::open(path);
        db::Transaction tx(store.connection());
        db::RowWriter rows(store.connection());
        for (int i = 0; i < 10000; ++i) {
            const int64_t id =
                rows.insertRun(runInfo(i), lab::RunStatus::Complete, db::isoNowUtc());
            rows.insertCandidate(id, candidate("a", "fast"));
            rows.insertCandidate(id, candidate("b", "regular"));
        }
        tx.commit();
    }
    db::RunStore store = db::RunStore::open(path);
    size_t n = 0;
    for (auto _ : state) {
        const auto runs = store.listRuns();
        n = runs.size();
        benchmark::DoNotOptimize(runs.data());
    }
    if (n != 10000) state.SkipWithError("expected 10000 runs");
}
BENCHMARK(BM_ListRuns10k)->Unit(benchmark::kMillisecond)->UseRealTime();

// getRun(Full) of one run: two candidates × 500 requests × 100 tokens = 100,000 token events.
void BM_LoadRun100kEvents(benchmark::State& state) {
    const std::string path = (benchDir() / "load.db").string();
    int64_t id = 0;
    {
        db::SqliteRunSink sink(path);
        id = sink.beginRun(runInfo(0));
        for (const char* label : {"a", "b"}) {
            const int64_t cand =
                sink.addCandidate(id, candidate(label, label[0] == 'a' ? "fast" : "regular"));
            for (int i = 0; i < 500; ++i)
                sink.requestFinished(cand, record(static_cast<uint64_t>(i), 100));
        }
        sink.finishRun(id, lab::RunStatus::Complete, "{}");
    }
    db::RunStore store = db::RunStore::open(path);
    size_t events = 0;
    for (auto _ : state) {
        const db::StoredRun run = store.getRun(id);
        events = 0;
        for (const auto& c : run.candidates)
            for (const auto& r : c.requests) events += r.tokenTimesMs.size();
        benchmark::DoNotOptimize(events);
    }
    if (events != 100000) state.SkipWithError("expected 100000 token events");
    state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(events));
}
BENCHMARK(BM_LoadRun100kEvents)->Unit(benchmark::kMillisecond)->UseRealTime();

// The same run exported as the JSON document (runs export --format json), for scale.
void BM_ExportRun100kEvents(benchmark::State& state) {
    const std::string path = (benchDir() / "load.db").string();
    db::RunStore store = db::RunStore::open(path);
    const int64_t id = store.listRuns({.limit = 1}).at(0).id;
    for (auto _ : state) {
        const std::string text = store.exportRun(id).dump();
        benchmark::DoNotOptimize(text.data());
    }
}
BENCHMARK(BM_ExportRun100kEvents)->Unit(benchmark::kMillisecond)->UseRealTime();

} // namespace

BENCHMARK_MAIN();
