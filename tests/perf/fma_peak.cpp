// The FMA peak of this machine: independent multiply-add chains in registers, the yardstick for
// prefill speed.
//
// Prefill's products are compute-bound, so this peak / (2 x parameters) bounds prefill
// tokens/s (docs/PERFORMANCE.md). Usage: fma_peak [threads = all]; prints GFLOP/s (an FMA
// counts 2 FLOP) per thread and in all, for 512-bit vectors where the CPU has AVX-512 F,
// else 256-bit (AVX2 + FMA). Each thread runs 12 chains, enough to cover the FMA latency
// on two pipes.
#include "kernels/cpu/cpu_features.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr long kIterations = 100'000'000;

// One timed pass of kIterations x 12 FMAs on vectors of `lanes` floats, returning GFLOP/s. The
// chains decay towards a fixed point, so nothing overflows; their sum goes to *sink (kept live).
#define MB_FMA_CHAINS(Vec, lanes, set1, fma)                                                       \
    Vec a0 = set1(1.0f), a1 = set1(1.1f), a2 = set1(1.2f), a3 = set1(1.3f), a4 = set1(1.4f),       \
        a5 = set1(1.5f);                                                                           \
    Vec a6 = set1(1.6f), a7 = set1(1.7f), a8 = set1(1.8f), a9 = set1(1.9f), a10 = set1(2.0f),      \
        a11 = set1(2.1f);                                                                          \
    const Vec m = set1(0.9999999f), c = set1(1e-7f);                                               \
    const auto t0 = std::chrono::steady_clock::now();                                              \
    for (long i = 0; i < kIterations; ++i) {                                                       \
        a0 = fma(a0, m, c), a1 = fma(a1, m, c), a2 = fma(a2, m, c), a3 = fma(a3, m, c);            \
        a4 = fma(a4, m, c), a5 = fma(a5, m, c), a6 = fma(a6, m, c), a7 = fma(a7, m, c);            \
        a8 = fma(a8, m, c), a9 = fma(a9, m, c), a10 = fma(a10, m, c), a11 = fma(a11, m, c);        \
    }                                                                                              \
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); \
    alignas(64) float out[lanes];                                                                  \
    for (const Vec& v : {a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11}) {                      \
        std::memcpy(out, &v, sizeof out);                                                          \
        for (float f : out) *sink += f;                                                            \
    }                                                                                              \
    return 12.0 * 2.0 * (lanes) * static_cast<double>(kIterations) / s / 1e9;

// GFLOP/s of one thread (an FMA counts 2 FLOP).
__attribute__((target("avx512f"))) double run512(float* sink) {
    MB_FMA_CHAINS(__m512, 16, _mm512_set1_ps, _mm512_fmadd_ps)
}
__attribute__((target("avx2,fma"))) double run256(float* sink) {
    MB_FMA_CHAINS(__m256, 8, _mm256_set1_ps, _mm256_fmadd_ps)
}

} // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1
                            ? std::atoi(argv[1])
                            : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (threads < 1) {
        std::fprintf(stderr, "usage: fma_peak [threads >= 1]\n");
        return 2;
    }
    const mb::kernels::CpuFeatures& f = mb::kernels::cpuFeatures();
    const bool wide = f.avx512f;
    if (!wide && !(f.avx2 && f.fma)) {
        std::fprintf(stderr, "fma_peak: this CPU has neither AVX-512 F nor AVX2 + FMA\n");
        return 1;
    }
    std::vector<double> gflops(static_cast<size_t>(threads));
    std::vector<float> sinks(static_cast<size_t>(threads));
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            float* sink = &sinks[static_cast<size_t>(t)];
            gflops[static_cast<size_t>(t)] = wide ? run512(sink) : run256(sink);
        });
    for (auto& th : pool) th.join();
    double total = 0;
    for (int t = 0; t < threads; ++t) {
        std::printf("thread %d: %.1f GFLOP/s\n", t, gflops[static_cast<size_t>(t)]);
        total += gflops[static_cast<size_t>(t)];
    }
    float sum = 0;
    for (float s : sinks) sum += s;
    std::printf("%s, %d threads: %.1f GFLOP/s F32 FMA peak (chain sum %g)\n",
                wide ? "512-bit" : "256-bit", threads, total, static_cast<double>(sum));
    return 0;
}
