// Read bandwidth of this machine: a parallel sum over a large buffer, the yardstick for decode speed.
//
// Decode reads every weight once per token, so bandwidth / model bytes is its ceiling
// (docs/PERFORMANCE.md). Usage: mem_bandwidth [MiB = 512] [threads = all] [repetitions = 5];
// prints the best and median GB/s (1 GB = 1e9 bytes) of the timed passes after a warm-up.
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
    const long mib = argc > 1 ? std::atol(argv[1]) : 512;
    const int threads = argc > 2 ? std::atoi(argv[2]) : mb::kernels::ThreadPool::hardwareThreads();
    const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
    if (mib < 1 || threads < 1 || reps < 1) {
        std::fprintf(stderr, "usage: mem_bandwidth [MiB >= 1] [threads >= 1] [repetitions >= 1]\n");
        return 2;
    }
    const size_t n = static_cast<size_t>(mib) * 1024 * 1024 / sizeof(uint32_t);
    std::vector<uint32_t> buf(n, 1u); // written once: every page is resident before timing
    mb::kernels::ThreadPool pool(threads);
    std::vector<uint64_t> partial(static_cast<size_t>(threads));
    // An integer sum per thread over its contiguous slice: integer adds reassociate, so
    // the compiler vectorises the loop and the pass is limited by memory, not by adds.
    auto pass = [&](int64_t b, int64_t e, int worker) {
        const uint32_t* p = buf.data();
        uint32_t s = 0;
        for (int64_t i = b; i < e; ++i) s += p[i];
        partial[static_cast<size_t>(worker)] += s;
    };
    const auto chunk = (static_cast<int64_t>(n) + threads - 1) / threads;
    std::vector<double> gbs;
    for (int r = 0; r <= reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        pool.parallelFor(static_cast<int64_t>(n), pass, chunk);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (r > 0) gbs.push_back(static_cast<double>(n * sizeof(float)) / s / 1e9);
    }
    std::sort(gbs.begin(), gbs.end());
    uint64_t check = 0;
    for (uint64_t v : partial) check += v;
    std::printf("{\"mib\": %ld, \"threads\": %d, \"best_gb_s\": %.2f, \"median_gb_s\": %.2f, \"checksum\": %llu}\n",
                mib, threads, gbs.back(), gbs[gbs.size() / 2], static_cast<unsigned long long>(check));
    return 0;
}
