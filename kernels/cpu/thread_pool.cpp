// Persistent worker threads that claim chunks of each job from a shared counter.
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <pthread.h>
#include <sched.h>
#include <stdexcept>
#include <string>
#include <system_error>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define MB_PAUSE() _mm_pause()
#else
#define MB_PAUSE() std::this_thread::yield()
#endif

namespace mb::kernels {

namespace {
// Busy-wait about 20-50 microseconds, then yield the core a while, then sleep: covers
// the gap between the products of one decode step without starving other threads.
constexpr int kSpinIterations = 8000;
constexpr int kYieldIterations = 200;
// Chunks per participant: a little slack so a late thread's share is taken by others.
constexpr int64_t kChunksPerThread = 2;
} // namespace

ThreadPool::ThreadPool(int threads) : m_threads(std::max(1, threads)) {
    m_workers.reserve(static_cast<size_t>(m_threads - 1));
    for (int i = 1; i < m_threads; ++i) {
        try {
            m_workers.emplace_back([this, i] { workerLoop(i); });
            const std::string name = "mb-compute-" + std::to_string(i);
            pthread_setname_np(m_workers.back().native_handle(), name.c_str());
        } catch (const std::exception& e) {
            // No destructor runs for a constructor that throws, and a joinable std::thread
            // destroyed by the unwinding would call std::terminate: stop and join here.
            stopWorkers();
            const auto* system = dynamic_cast<const std::system_error*>(&e);
            throw std::runtime_error("cannot start " + std::to_string(m_threads) + " threads: only " +
                                     std::to_string(i) + " could be created (" +
                                     (system ? system->code().message() : std::string(e.what())) +
                                     "); use fewer --threads");
        }
    }
}

ThreadPool::~ThreadPool() {
    stopWorkers();
}

void ThreadPool::stopWorkers() {
    {
        std::lock_guard lock(m_mutex);
        m_stop.store(true);
    }
    m_wake.notify_all();
    for (auto& t : m_workers) t.join();
    m_workers.clear();
}

int ThreadPool::hardwareThreads() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
    return std::max(1u, std::thread::hardware_concurrency());
}

void ThreadPool::runChunks(uint32_t job, int worker) {
    uint64_t v = m_claim.load(std::memory_order_acquire);
    for (;;) {
        if (static_cast<uint32_t>(v >> 32) != job) return;
        const auto chunk = static_cast<int64_t>(v & 0xffffffffu);
        if (chunk >= m_chunks.load(std::memory_order_relaxed)) return;
        if (!m_claim.compare_exchange_weak(v, v + 1, std::memory_order_acq_rel, std::memory_order_acquire))
            continue;
        // Chunk c holds m_unitsPerChunk units, one more for the first m_unitsLeft chunks: sizes
        // differ by at most a unit, the larger first, so the last chunks claimed are the small ones.
        const int64_t firstUnit = chunk * m_unitsPerChunk + std::min(chunk, m_unitsLeft);
        const int64_t units = m_unitsPerChunk + (chunk < m_unitsLeft ? 1 : 0);
        const int64_t begin = firstUnit * m_grain;
        const int64_t end = std::min(m_count, (firstUnit + units) * m_grain);
        (*m_fn)(begin, end, worker);
        m_done.fetch_add(1, std::memory_order_acq_rel);
        v = m_claim.load(std::memory_order_acquire);
    }
}

void ThreadPool::parallelFor(int64_t count, RangeFn fn, int64_t grain) {
    if (count <= 0) return;
    grain = std::max<int64_t>(1, grain);
    const int64_t units = (count + grain - 1) / grain;
    if (m_threads == 1 || units == 1) {
        fn(0, count, 0);
        return;
    }
    const int64_t chunkCount = std::min<int64_t>(units, m_threads * kChunksPerThread);
    m_fn = &fn;
    m_count = count;
    m_grain = grain;
    m_unitsPerChunk = units / chunkCount;
    m_unitsLeft = units % chunkCount;
    m_chunks.store(chunkCount, std::memory_order_relaxed);
    m_done.store(0, std::memory_order_relaxed);
    const uint32_t job = ++m_job;
    m_claim.store(static_cast<uint64_t>(job) << 32, std::memory_order_seq_cst);
    if (m_sleeping.load(std::memory_order_seq_cst) > 0) {
        { std::lock_guard lock(m_mutex); }
        m_wake.notify_all();
    }
    runChunks(job, 0);
    int spins = 0;
    while (m_done.load(std::memory_order_acquire) != chunkCount) {
        if (++spins < kSpinIterations) MB_PAUSE();
        else std::this_thread::yield();
    }
    // Seal the job before its parameters change, so a worker holding a stale view of the
    // counter can never claim a chunk of the next job with this job's number.
    m_claim.store((static_cast<uint64_t>(job) << 32) | 0xffffffffu, std::memory_order_release);
    m_fn = nullptr;
}

void ThreadPool::workerLoop(int index) {
    uint32_t seen = 0;
    auto currentJob = [this] { return static_cast<uint32_t>(m_claim.load(std::memory_order_acquire) >> 32); };
    for (;;) {
        int spins = 0;
        while (currentJob() == seen && !m_stop.load(std::memory_order_relaxed)) {
            if (spins < kSpinIterations) {
                MB_PAUSE();
            } else if (spins < kSpinIterations + kYieldIterations) {
                std::this_thread::yield();
            } else {
                std::unique_lock lock(m_mutex);
                m_sleeping.fetch_add(1, std::memory_order_seq_cst);
                m_wake.wait(lock, [&] { return currentJob() != seen || m_stop.load(); });
                m_sleeping.fetch_sub(1, std::memory_order_relaxed);
                break;
            }
            ++spins;
        }
        if (m_stop.load()) return;
        seen = currentJob();
        runChunks(seen, index);
    }
}

} // namespace mb::kernels
