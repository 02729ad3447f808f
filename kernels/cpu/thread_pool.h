// A persistent pool of worker threads that splits index ranges across threads.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace mb::kernels {

// Non-owning reference to a callable `void(int64_t begin, int64_t end)` or
// `void(int64_t begin, int64_t end, int worker)` (worker in [0, threads), for per-thread
// scratch); no allocation.
class RangeFn {
public:
    template <class F>
    RangeFn(F& f) // NOLINT(google-explicit-constructor): used like a function_ref
        : m_obj(static_cast<void*>(&f)), m_call([](void* o, int64_t b, int64_t e, int w) {
              if constexpr (std::is_invocable_v<F&, int64_t, int64_t, int>)
                  (*static_cast<F*>(o))(b, e, w);
              else
                  (*static_cast<F*>(o))(b, e);
          }) {}
    void operator()(int64_t b, int64_t e, int w) const { m_call(m_obj, b, e, w); }

private:
    void* m_obj;
    void (*m_call)(void*, int64_t, int64_t, int);
};

// `threads` participants: the calling thread plus threads-1 workers created once in the
// constructor. parallelFor cuts the range into chunks that participants claim from a
// shared counter, so a worker the OS has not scheduled yet never holds up the job: the
// caller claims the chunks itself. Between jobs workers spin briefly (a decode step issues
// hundreds of small jobs) and then sleep on a condition variable. One job at a time:
// parallelFor must not be called concurrently from two threads, nor from inside a job.
class ThreadPool {
public:
    // Throws std::runtime_error ("cannot start 1024 threads: only 37 could be created
    // (Resource temporarily unavailable); use fewer --threads") when the OS refuses a
    // thread; the ones already started are stopped and joined first.
    explicit ThreadPool(int threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int threads() const { return m_threads; }

    // Calls fn(begin, end[, worker]) over disjoint ranges covering [0, count), each range
    // a multiple of `grain` long (except the last). Concurrent calls get distinct worker
    // indices in [0, threads). Returns when every range is done.
    void parallelFor(int64_t count, RangeFn fn, int64_t grain = 1);

    // Hardware threads available to this process (at least 1).
    static int hardwareThreads();

private:
    void workerLoop(int index);
    // Tells the workers to stop and joins them.
    void stopWorkers();
    // Claims and runs chunks of job `job` until none is left.
    void runChunks(uint32_t job, int worker);

    int m_threads;
    std::vector<std::thread> m_workers;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    // High 32 bits: job number; low 32 bits: next unclaimed chunk of that job.
    std::atomic<uint64_t> m_claim{0};
    std::atomic<int64_t> m_done{0}; // chunks finished in the current job
    std::atomic<int> m_sleeping{0};
    std::atomic<bool> m_stop{false};
    uint32_t m_job = 0;
    // The current job; written before m_claim publishes it, unchanged until all its chunks are done.
    const RangeFn* m_fn = nullptr;
    int64_t m_count = 0;
    int64_t m_grain = 1;
    int64_t m_unitsPerChunk = 0; // units of `grain` indices per chunk (see runChunks)
    int64_t m_unitsLeft = 0;
    // Atomic because a stale worker (one that loaded the previous job's claim value) reads it
    // while the caller writes the next job's; whatever it reads, its claim then fails.
    std::atomic<int64_t> m_chunks{0};
};

} // namespace mb::kernels
