// Crash safety and concurrency: a writer killed by SIGKILL, readers beside a writer, live-writer
// locks.
#include "db/run_lock.h"
#include "db/run_store.h"
#include "db/schema.h"
#include "db/sqlite_run_sink.h"
#include "db_test_util.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace mb;
using namespace mb::db;
using mb::test::TempDir;

namespace {

int outputTokensFor(uint64_t index) {
    return 1 + static_cast<int>(index % 17);
}

bool readAll(int fd, void* data, size_t bytes) {
    auto* p = static_cast<char*>(data);
    while (bytes > 0) {
        const ssize_t n = ::read(fd, p, bytes);
        if (n <= 0) return false;
        p += n;
        bytes -= static_cast<size_t>(n);
    }
    return true;
}

// Every request has exactly output_tokens token events, in every snapshot.
void expectConsistent(Connection& c) {
    EXPECT_EQ(c.queryInt("SELECT count(*) FROM requests r WHERE r.output_tokens != "
                         "(SELECT count(*) FROM token_events t WHERE t.request_id = r.id)"),
              0);
    EXPECT_EQ(c.queryInt("SELECT count(*) FROM token_events"),
              c.queryInt("SELECT coalesce(sum(output_tokens), 0) FROM requests"));
}

} // namespace

TEST(Crash, KilledWriterLeavesCommittedRequestsAndAnInterruptedRun) {
    TempDir dir;
    const std::string path = dir / "crash.db";
    RunStore::open(path); // created before the fork, so the reader below can open it
    constexpr int64_t kSignalAfter = 640;

    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // Child: no gtest here. Writes until killed (alarm: never outlive a broken parent).
        ::close(fds[0]);
        ::alarm(120);
        try {
            SqliteRunSink sink(path);
            const int64_t run = sink.beginRun(mb::test::makeRunInfo("doomed"));
            const int64_t cand = sink.addCandidate(run, mb::test::makeCandidateInfo("a", "fast"));
            if (::write(fds[1], &run, sizeof run) != sizeof run) ::_exit(3);
            for (uint64_t i = 0;; ++i) {
                sink.requestFinished(cand, mb::test::makeRecord(i, outputTokensFor(i)));
                if (i % 64 == 63) {
                    sink.flush(); // back-pressure: the queue never grows without bound
                    if (static_cast<int64_t>(i + 1) == kSignalAfter && ::write(fds[1], "c", 1) != 1)
                        ::_exit(3);
                }
            }
        } catch (...) {
            ::_exit(4);
        }
    }
    ::close(fds[1]);
    int64_t runId = 0;
    char committed = 0;
    const bool gotId = readAll(fds[0], &runId, sizeof runId);
    const bool gotSignal = gotId && readAll(fds[0], &committed, 1);
    ::close(fds[0]);
    if (!gotSignal) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        FAIL() << "the child stopped before committing " << kSignalAfter << " requests";
    }
    {
        // While the child writes: a read-only connection sees the committed requests.
        Connection ro = openDatabase(path, {.readOnly = true});
        Transaction snapshot(ro, Transaction::Kind::Deferred);
        EXPECT_GE(ro.queryInt("SELECT count(*) FROM requests"), kSignalAfter);
        EXPECT_EQ(ro.queryText("SELECT status FROM runs WHERE id = " + std::to_string(runId)),
                  "running");
        expectConsistent(ro);
    }
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "child status " << status;
    EXPECT_TRUE(std::filesystem::exists(runLockPath(path, runId))); // the dead writer's lock file

    RunStore store = RunStore::open(path); // recovery happens here
    Connection& c = store.connection();
    EXPECT_EQ(c.queryText("PRAGMA integrity_check"), "ok");
    EXPECT_EQ(c.queryInt("SELECT count(*) FROM pragma_foreign_key_check"), 0);
    const StoredRun run = store.getRun(runId);
    EXPECT_EQ(run.status, lab::RunStatus::Interrupted);
    ASSERT_EQ(run.candidates.size(), 1u);
    const auto& requests = run.candidates[0].requests;
    EXPECT_GE(static_cast<int64_t>(requests.size()), kSignalAfter);
    for (size_t i = 0; i < requests.size(); ++i) {
        // Committed in order, none missing, each with all of its token events.
        ASSERT_EQ(requests[i].id, i);
        const auto want = mb::test::makeRecord(i, outputTokensFor(i));
        ASSERT_EQ(requests[i].tokenTimesMs, want.tokenTimesMs) << "request " << i;
        ASSERT_EQ(requests[i].tokens, want.tokens) << "request " << i;
    }
    expectConsistent(c);
    EXPECT_FALSE(std::filesystem::exists(runLockPath(path, runId))); // removed by the recovery
}

TEST(Crash, ReaderSeesConsistentSnapshotsWhileARunWrites) {
    TempDir dir;
    const std::string path = dir / "live.db";
    RunStore::open(path);
    constexpr int kBatches = 30;
    constexpr int kPerBatch = 100;

    // The writer runs at most one flushed batch ahead of the reader's snapshots, so the
    // reader reads while batches commit and provably sees intermediate states (no sleeps).
    std::mutex m;
    std::condition_variable cv;
    int flushed = 0, readUpTo = 0;
    bool done = false;
    std::thread writer([&] {
        SqliteRunSink sink(path,
                           {.batchInterval = std::chrono::milliseconds(2), .batchRecords = 16});
        const int64_t run = sink.beginRun(mb::test::makeRunInfo("live"));
        const int64_t cand = sink.addCandidate(run, mb::test::makeCandidateInfo("a", "fast"));
        uint64_t next = 0;
        for (int b = 0; b < kBatches; ++b) {
            for (int i = 0; i < kPerBatch; ++i, ++next)
                sink.requestFinished(cand, mb::test::makeRecord(next, outputTokensFor(next)));
            sink.flush();
            std::unique_lock lock(m);
            flushed = b + 1;
            cv.notify_all();
            // The next batch's records (committed by the sink in small transactions while the
            // reader reads) start only after a snapshot has seen this flush, so the reader sees
            // every flushed count; waiting for readUpTo >= b let the writer run two flushes
            // ahead and the reader skip states on a loaded machine.
            cv.wait(lock, [&] { return readUpTo >= b + 1; });
        }
        sink.finishRun(run, lab::RunStatus::Complete, "{}");
        std::lock_guard lock(m);
        done = true;
        cv.notify_all();
    });

    Connection ro = openDatabase(path, {.readOnly = true});
    int64_t last = 0;
    int reads = 0, partial = 0;
    for (;;) {
        int target = 0;
        bool finished = false;
        {
            std::lock_guard lock(m);
            target = flushed;
            finished = done;
        }
        {
            Transaction snapshot(ro, Transaction::Kind::Deferred);
            const int64_t n = ro.queryInt("SELECT count(*) FROM requests");
            EXPECT_GE(n, int64_t{target} * kPerBatch);
            EXPECT_GE(n, last);
            last = n;
            expectConsistent(ro);
            if (n > 0 && n < int64_t{kBatches} * kPerBatch) ++partial;
            ++reads;
        }
        if (finished) break;
        std::unique_lock lock(m);
        readUpTo = target;
        cv.notify_all();
        cv.wait(lock, [&] { return flushed > target || done; });
    }
    writer.join();
    EXPECT_EQ(last, kBatches * kPerBatch);
    EXPECT_GE(partial, kBatches - 2);
    EXPECT_GT(reads, kBatches);
}

TEST(Crash, LiveWriterInTheSameProcessIsNotMarkedInterrupted) {
    TempDir dir;
    const std::string path = dir / "same.db";
    SqliteRunSink sink(path);
    const int64_t run = sink.beginRun(mb::test::makeRunInfo("live"));
    EXPECT_TRUE(RunLock::isHeld(openDatabase(path).filename(), run));
    {
        RunStore other = RunStore::open(path); // runs recovery: must leave the live run alone
        EXPECT_EQ(other.getRun(run, RunDetail::Summaries).status, lab::RunStatus::Running);
        EXPECT_THROW(other.deleteRun(run), DbError); // still being written
    }
    sink.finishRun(run, lab::RunStatus::Complete, "{}");
    EXPECT_FALSE(std::filesystem::exists(runLockPath(path, run)));
    EXPECT_EQ(RunStore::open(path).getRun(run, RunDetail::Summaries).status,
              lab::RunStatus::Complete);
}

TEST(Crash, SinkDestroyedMidRunMarksItInterrupted) {
    TempDir dir;
    const std::string path = dir / "early.db";
    int64_t run = 0;
    {
        SqliteRunSink sink(path);
        run = sink.beginRun(mb::test::makeRunInfo("left"));
        const int64_t cand = sink.addCandidate(run, mb::test::makeCandidateInfo("a", "fast"));
        for (uint64_t i = 0; i < 10; ++i) sink.requestFinished(cand, mb::test::makeRecord(i, 3));
        // No flush: the destructor flushes.
    }
    RunStore store = RunStore::open(path, {.recoverInterrupted = false});
    const StoredRun r = store.getRun(run);
    EXPECT_EQ(r.status, lab::RunStatus::Interrupted);
    EXPECT_EQ(r.candidates[0].requests.size(), 10u);
}

TEST(Crash, StoreThreadErrorsSurfaceOnTheNextSynchronousCall) {
    TempDir dir;
    const std::string path = dir / "err.db";
    SqliteRunSink sink(path);
    const int64_t run = sink.beginRun(mb::test::makeRunInfo("errors"));
    const int64_t cand = sink.addCandidate(run, mb::test::makeCandidateInfo("a", "fast"));
    sink.requestFinished(cand, mb::test::makeRecord(0, 2));
    sink.requestFinished(cand + 1000, mb::test::makeRecord(1, 2)); // no such candidate
    sink.requestFinished(cand, mb::test::makeRecord(2, 2));
    try {
        sink.flush();
        FAIL() << "no error";
    } catch (const DbError& e) {
        EXPECT_NE(std::string(e.what()).find("FOREIGN KEY"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(sink.flush()); // reported once
    EXPECT_THROW(sink.addCandidate(run + 1000, mb::test::makeCandidateInfo("b", "regular")),
                 DbError);
    sink.finishRun(run, lab::RunStatus::Complete, "{}");
    // The good records of the failed batch were kept.
    RunStore store = RunStore::open(path);
    const StoredRun stored = store.getRun(run);
    const auto& requests = stored.candidates[0].requests;
    ASSERT_EQ(requests.size(), 2u);
    EXPECT_EQ(requests[1].id, 2u);
    EXPECT_EQ(requests[1].tokenTimesMs.size(), 2u);
}

TEST(Crash, StoreThreadIsNamed) {
    TempDir dir;
    SqliteRunSink sink(dir / "name.db");
    bool found = false;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) {
        const std::string comm = mb::test::fileBytes((entry.path() / "comm").string());
        if (comm.rfind("mb-store", 0) == 0) found = true;
    }
    EXPECT_TRUE(found);
}
