// lab::RunSink over SQLite: runs recorded as they happen by one writer thread, in batched
// transactions.
#pragma once

#include "db/run_lock.h"
#include "db/run_rows.h"
#include "db/sqlite.h"
#include "lab/run_sink.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace mb::db {

struct SinkOptions {
    // A batch commits this long after its first record arrived, or as soon as it holds
    // `batchRecords` requests/candidate summaries, or when a synchronous call arrives.
    std::chrono::milliseconds batchInterval{50};
    size_t batchRecords = 256;
};

// Owns its own Connection, used only by its writer thread — "the store thread", named
// `mb-store` — which the constructor starts (opening the file there: openDatabase with
// checks, migrations and recovery; its DbError is rethrown by the constructor).
//
// requestFinished and finishCandidate only copy into a mutex-protected queue, so event
// threads never wait for the disk. The store thread commits the queue in one transaction
// per batch (each request with its token_events rows inside a savepoint; prepared
// statements reused), never one per token. beginRun, addCandidate, finishRun and flush
// are synchronous: they queue behind everything before them and return once their own
// work has committed, so they flush first.
//
// Durability: a run is durable up to its last committed batch (WAL, synchronous=FULL).
// While a run is being written its lock file `DB.lock-RUNID` is held (run_lock.h); if the
// process dies, the next open marks the run `interrupted`. A run left unfinished when the
// sink is destroyed is marked `interrupted` by the destructor.
//
// Errors: a failure on the store thread (a bad candidate id, a full disk) is remembered
// and rethrown by the next beginRun/addCandidate/finishCandidate/finishRun/flush on the
// caller's thread; requestFinished never throws for it. A batch that fails to commit is
// lost; a request that fails to insert is skipped (its savepoint rolled back).
//
// The queue is unbounded: requestFinished never blocks an event thread. A producer far
// faster than the disk (only benchmarks are) should call flush() now and then.
//
// Thread-safe as lab::RunSink requires. The destructor flushes, finishes and joins;
// it never throws (errors then are dropped).
class SqliteRunSink final : public lab::RunSink {
public:
    explicit SqliteRunSink(const std::string& path, SinkOptions options = {});
    ~SqliteRunSink() override;
    SqliteRunSink(const SqliteRunSink&) = delete;
    SqliteRunSink& operator=(const SqliteRunSink&) = delete;

    int64_t beginRun(const lab::RunInfo& info) override;
    int64_t addCandidate(int64_t runId, const lab::CandidateInfo& info) override;
    void requestFinished(int64_t candidateId, const lab::RequestRecord& record) override;
    void finishCandidate(
        int64_t candidateId, const std::string& summaryJson,
        const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>& series)
        override;
    void finishRun(int64_t runId, lab::RunStatus status, const std::string& summaryJson) override;
    void flush() override;

    const std::string& path() const { return m_path; }
    // Requests committed so far (any thread; for progress displays and tests).
    int64_t committedRequests() const {
        return m_committedRequests.load(std::memory_order_relaxed);
    }

private:
    struct RequestItem {
        int64_t candidateId;
        lab::RequestRecord record;
    };
    struct CandidateItem {
        int64_t candidateId;
        std::string summaryJson;
        SeriesList series;
    };
    struct SyncItem {
        std::function<void()> work; // runs on the store thread, outside any batch transaction
        std::shared_ptr<std::promise<void>>
            done; // shared: the caller may return before set_value does
    };
    using Item = std::variant<RequestItem, CandidateItem, SyncItem>;

    void push(Item item);                               // caller threads
    void callOnStoreThread(std::function<void()> work); // waits; rethrows
    void rethrowPendingError();                         // caller threads, m_mutex held
    void storeThread(std::promise<void> opened);
    void writeBatch(std::vector<Item>& batch); // store thread
    void shutDown();                           // store thread, on stop

    const std::string m_path;
    const SinkOptions m_options;

    std::mutex m_mutex; // guards everything down to m_thread
    std::condition_variable m_wake;
    std::vector<Item> m_queue;
    size_t m_syncPending = 0;
    std::chrono::steady_clock::time_point m_firstQueued;
    bool m_stop = false;
    std::exception_ptr m_error; // the first store-thread failure not yet reported
    std::thread m_thread;

    std::atomic<int64_t> m_committedRequests{0};

    // Store thread only.
    Connection m_connection;
    std::unique_ptr<RowWriter> m_rows;
    std::map<int64_t, RunLock> m_locks; // runs begun here and not yet finished
};

} // namespace mb::db
