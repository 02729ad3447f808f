// The store thread: drains the sink's queue into batched SQLite transactions.
#include "db/sqlite_run_sink.h"

#include "db/schema.h"

#include <optional>
#include <pthread.h>

namespace mb::db {

SqliteRunSink::SqliteRunSink(const std::string& path, SinkOptions options)
    : m_path(path), m_options(options) {
    std::promise<void> opened;
    auto ready = opened.get_future();
    m_thread = std::thread([this, p = std::move(opened)]() mutable { storeThread(std::move(p)); });
    try {
        ready.get();
    } catch (...) {
        m_thread.join(); // the thread returns right after reporting the failure
        throw;
    }
}

SqliteRunSink::~SqliteRunSink() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_one();
    if (m_thread.joinable()) m_thread.join();
}

void SqliteRunSink::rethrowPendingError() {
    if (m_error) std::rethrow_exception(std::exchange(m_error, nullptr));
}

void SqliteRunSink::push(Item item) {
    bool wake = false;
    {
        std::lock_guard lock(m_mutex);
        if (m_queue.empty()) m_firstQueued = std::chrono::steady_clock::now();
        m_queue.push_back(std::move(item));
        // Wake the store thread to start the batch clock, and when the batch is full.
        wake = m_queue.size() == 1 || m_queue.size() >= m_options.batchRecords;
    }
    if (wake) m_wake.notify_one();
}

void SqliteRunSink::callOnStoreThread(std::function<void()> work) {
    auto done = std::make_shared<std::promise<void>>();
    auto result = done->get_future();
    {
        std::lock_guard lock(m_mutex);
        rethrowPendingError();
        if (m_queue.empty()) m_firstQueued = std::chrono::steady_clock::now();
        m_queue.push_back(SyncItem{std::move(work), std::move(done)});
        ++m_syncPending;
    }
    m_wake.notify_one();
    result.get();
}

int64_t SqliteRunSink::beginRun(const lab::RunInfo& info) {
    int64_t id = 0;
    callOnStoreThread([&] {
        Transaction tx(m_connection);
        id = m_rows->insertRun(info, lab::RunStatus::Running, isoNowUtc());
        // Locked before the row is visible to anyone: recovery (under the write lock)
        // never sees this run without its lock held.
        RunLock lock = RunLock::acquire(m_connection.filename(), id);
        try {
            tx.commit();
        } catch (...) {
            lock.releaseAndRemove();
            throw;
        }
        m_locks[id] = std::move(lock);
    });
    return id;
}

int64_t SqliteRunSink::addCandidate(int64_t runId, const lab::CandidateInfo& info) {
    int64_t id = 0;
    callOnStoreThread([&] { id = m_rows->insertCandidate(runId, info); });
    return id;
}

void SqliteRunSink::requestFinished(int64_t candidateId, const lab::RequestRecord& record) {
    push(RequestItem{candidateId, record});
}

void SqliteRunSink::finishCandidate(
    int64_t candidateId, const std::string& summaryJson,
    const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>& series) {
    {
        std::lock_guard lock(m_mutex);
        rethrowPendingError();
    }
    push(CandidateItem{candidateId, summaryJson, series});
}

void SqliteRunSink::finishRun(int64_t runId, lab::RunStatus status,
                              const std::string& summaryJson) {
    callOnStoreThread([&] {
        m_rows->finishRun(runId, status, summaryJson);
        // Committed (autocommit) before the lock goes: see RunLock.
        if (auto it = m_locks.find(runId); it != m_locks.end()) {
            it->second.releaseAndRemove();
            m_locks.erase(it);
        }
    });
}

void SqliteRunSink::flush() {
    callOnStoreThread([] {});
}

void SqliteRunSink::storeThread(std::promise<void> opened) {
    pthread_setname_np(pthread_self(), "mb-store");
    try {
        m_connection = openDatabase(m_path);
        m_rows = std::make_unique<RowWriter>(m_connection);
    } catch (...) {
        m_rows.reset();
        m_connection = Connection();
        opened.set_exception(std::current_exception());
        return;
    }
    opened.set_value();

    std::unique_lock lock(m_mutex);
    for (;;) {
        m_wake.wait(lock, [&] { return m_stop || !m_queue.empty(); });
        if (m_queue.empty()) break; // stopping, nothing left
        // Let the batch fill for up to batchInterval after its first record.
        m_wake.wait_until(lock, m_firstQueued + m_options.batchInterval, [&] {
            return m_stop || m_syncPending > 0 || m_queue.size() >= m_options.batchRecords;
        });
        std::vector<Item> batch;
        batch.swap(m_queue);
        m_syncPending = 0;
        lock.unlock();
        writeBatch(batch);
        lock.lock();
    }
    lock.unlock();
    shutDown();
}

void SqliteRunSink::writeBatch(std::vector<Item>& batch) {
    std::optional<Transaction> tx;
    int64_t requests = 0;
    auto remember = [&](std::exception_ptr e) {
        std::lock_guard lock(m_mutex);
        if (!m_error) m_error = e;
    };
    auto commit = [&] {
        if (!tx) return;
        try {
            tx->commit();
            m_committedRequests.fetch_add(requests, std::memory_order_relaxed);
        } catch (...) {
            remember(std::current_exception()); // the batch is lost; its transaction rolls back
        }
        tx.reset();
        requests = 0;
    };
    for (Item& item : batch) {
        if (auto* sync = std::get_if<SyncItem>(&item)) {
            commit();
            std::exception_ptr pending;
            {
                std::lock_guard lock(m_mutex);
                pending = std::exchange(m_error, nullptr);
            }
            if (pending) { // an earlier record of this batch failed: report it, skip the work
                sync->done->set_exception(pending);
                continue;
            }
            try {
                sync->work();
                sync->done->set_value();
            } catch (...) {
                sync->done->set_exception(std::current_exception());
            }
            continue;
        }
        try {
            if (!tx) tx.emplace(m_connection, Transaction::Kind::Immediate);
            if (auto* r = std::get_if<RequestItem>(&item)) {
                m_rows->insertRequest(r->candidateId, r->record);
                ++requests;
            } else {
                auto& c = std::get<CandidateItem>(item);
                m_rows->setCandidateSummary(c.candidateId, c.summaryJson);
                m_rows->insertSeries(c.candidateId, c.series);
            }
        } catch (...) {
            remember(std::current_exception());
            // A failed BEGIN leaves no transaction; a failed insert keeps the batch's others.
            if (tx && !m_connection.inTransaction()) tx.reset();
        }
    }
    commit();
}

void SqliteRunSink::shutDown() {
    // Runs begun here but never finished: the process is alive and knows they ended early.
    for (auto& [id, lock] : m_locks) {
        try {
            Statement s = m_connection.prepare(
                "UPDATE runs SET status = 'interrupted' WHERE id = ? AND status = 'running'");
            s.bind(1, id).run();
            lock.releaseAndRemove();
        } catch (const std::exception&) {
            // Leave the lock file; the next open marks the run once this process is gone.
        }
    }
    m_locks.clear();
    m_rows.reset();
    m_connection = Connection();
}

} // namespace mb::db
