// Decode attention of a batch of sequences over paged F32 and F16 K/V, against a plain read of the same blocks.
//
// Usage: attention_bench [threads = 2] [repetitions = 200] [sequences = 8] [positions = 300] [evict = 1].
// The shape is regular mode's decode step on stories15m (6 layers, 6 heads of 48, K/V rows of
// 288 elements, blocks of 16 positions): each sequence has `positions` cached positions (varied
// ±50%, seeded), its blocks contiguous as in a per-request cache. Before every layer a 64 MiB
// read through the same thread pool evicts the caches, as the step's weight products do
// (evict = 0 skips it: K/V then stay in the caches as far as they fit).
// Prints, per K/V type, the median milliseconds per step (all layers) of:
//   per head  one unit per (sequence, head) through kernels::attendPagedRun, each reading
//             its head's slice of every position (a prefill run's pattern, for comparison);
//   rows      one unit per sequence through kernels::attendPagedHeads, reading whole
//             positions for all heads (the forward pass's decode attention);
//   read      a sum over exactly the blocks attention reads, split evenly over the pool
//             (what the bytes alone cost at this machine's bandwidth).
// Compare the ratios in one run; the shared machine moves absolute figures by ±20%.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/ops.h"
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <type_traits>
#include <vector>

using namespace mb::kernels;

namespace {

constexpr int64_t kLayers = 6, kHeads = 6, kHeadDim = 48, kKvDim = kHeads * kHeadDim, kBlock = 16;
constexpr int64_t kBlockElems = kBlock * kKvDim;

// K and V of every layer for all sequences' blocks, in element type T.
template <class T>
struct Store {
    std::vector<T> k, v;
    const T* kBlock(int64_t layer, int64_t block, int64_t blocks) const { return &k[(layer * blocks + block) * kBlockElems]; }
    const T* vBlock(int64_t layer, int64_t block, int64_t blocks) const { return &v[(layer * blocks + block) * kBlockElems]; }
};

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 2;
    const int reps = argc > 2 ? std::atoi(argv[2]) : 200;
    const int64_t seqs = argc > 3 ? std::atol(argv[3]) : 8;
    const int64_t positions = argc > 4 ? std::atol(argv[4]) : 300;
    const bool evictFirst = argc > 5 ? std::atoi(argv[5]) != 0 : true;
    if (threads < 1 || reps < 1 || seqs < 1 || positions < 2 || positions > 100000) {
        std::fprintf(stderr, "usage: attention_bench [threads >= 1] [repetitions >= 1] [sequences >= 1] "
                             "[positions 2..100000] [evict 0|1]\n");
        return 2;
    }
    std::mt19937 rng(7);
    std::vector<int64_t> lens(static_cast<size_t>(seqs)), firstBlock;
    int64_t blocks = 0;
    for (auto& len : lens) {
        len = positions / 2 + static_cast<int64_t>(rng() % static_cast<uint32_t>(positions));
        firstBlock.push_back(blocks);
        blocks += (len + kBlock - 1) / kBlock;
    }
    const auto elems = static_cast<size_t>(kLayers * blocks * kBlockElems);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    Store<float> f32{std::vector<float>(elems), std::vector<float>(elems)};
    Store<uint16_t> f16{std::vector<uint16_t>(elems), std::vector<uint16_t>(elems)};
    for (size_t i = 0; i < elems; ++i) {
        f32.k[i] = dist(rng);
        f32.v[i] = dist(rng);
        f16.k[i] = floatToFp16(f32.k[i]);
        f16.v[i] = floatToFp16(f32.v[i]);
    }
    std::vector<float> q(static_cast<size_t>(seqs * kHeads * kHeadDim)), out(q.size());
    for (auto& x : q) x = dist(rng);
    const int64_t maxLen = *std::max_element(lens.begin(), lens.end());
    std::vector<float> scores(static_cast<size_t>(threads * kHeads * maxLen));
    std::vector<float> flush(size_t{64} << 20 >> 2, 1.0f);
    std::vector<double> sinks(static_cast<size_t>(threads));
    ThreadPool pool(threads);
    const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));

    auto evict = [&] {
        auto body = [&](int64_t a, int64_t b, int w) {
            float s = 0;
            for (int64_t i = a; i < b; i += 16) s += flush[static_cast<size_t>(i)];
            sinks[static_cast<size_t>(w)] += s;
        };
        pool.parallelFor(static_cast<int64_t>(flush.size()), body, static_cast<int64_t>(flush.size()) / threads + 1);
    };
    auto timeSteps = [&](auto&& layerFn) {
        std::vector<double> steps;
        for (int r = 0; r < reps; ++r) {
            double ms = 0;
            for (int64_t l = 0; l < kLayers; ++l) {
                if (evictFirst) evict();
                const auto t0 = std::chrono::steady_clock::now();
                layerFn(l);
                ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            }
            steps.push_back(ms);
        }
        return median(steps);
    };
    auto run = [&](const char* name, const auto& store, size_t elemBytes) {
        using T = std::remove_cvref_t<decltype(store.k[0])>;
        std::vector<const T*> kp, vp; // block pointers of one layer, as the forward pass builds them
        auto pointers = [&](int64_t l) {
            kp.clear();
            vp.clear();
            for (int64_t b = 0; b < blocks; ++b) {
                kp.push_back(store.kBlock(l, b, blocks));
                vp.push_back(store.vBlock(l, b, blocks));
            }
        };
        auto attend = [&](int64_t l) {
            pointers(l);
            auto body = [&](int64_t u0, int64_t u1, int w) {
                for (int64_t u = u0; u < u1; ++u) {
                    const auto s = static_cast<size_t>(u / kHeads);
                    const int64_t h = u % kHeads;
                    const auto first = static_cast<size_t>(firstBlock[s]);
                    float* o = &out[static_cast<size_t>(u * kHeadDim)];
                    attendPagedRun(&q[static_cast<size_t>(u * kHeadDim)], 0, 1, kp.data() + first, vp.data() + first,
                                   kBlock, lens[s], kKvDim, h * kHeadDim, kHeadDim, scale,
                                   &scores[static_cast<size_t>(w * maxLen)], 0, o, 0);
                }
            };
            pool.parallelFor(seqs * kHeads, body, 1);
        };
        auto attendRows = [&](int64_t l) {
            {
                pointers(l);
                auto body = [&](int64_t s0, int64_t s1, int w) {
                    for (int64_t s = s0; s < s1; ++s) {
                        const auto first = static_cast<size_t>(firstBlock[static_cast<size_t>(s)]);
                        attendPagedHeads(&q[static_cast<size_t>(s * kHeads * kHeadDim)], kHeads, 0, 1, kp.data() + first,
                                         vp.data() + first, kBlock, lens[static_cast<size_t>(s)], kKvDim, kHeadDim, scale,
                                         &scores[static_cast<size_t>(w * kHeads * maxLen)], maxLen,
                                         &out[static_cast<size_t>(s * kHeads * kHeadDim)]);
                    }
                };
                pool.parallelFor(seqs, body, 1);
            }
        };
        auto read = [&](int64_t l) {
            auto body = [&](int64_t b0, int64_t b1, int w) {
                uint64_t s = 0; // integer adds: the compiler vectorises the sum
                for (int64_t b = b0; b < b1; ++b)
                    for (const T* p : {store.kBlock(l, b, blocks), store.vBlock(l, b, blocks)}) {
                        const auto* words = reinterpret_cast<const uint32_t*>(p);
                        for (size_t i = 0; i < kBlockElems * sizeof(T) / 4; ++i) s += words[i];
                    }
                sinks[static_cast<size_t>(w)] += static_cast<double>(s);
            };
            pool.parallelFor(blocks, body, blocks / threads + 1);
        };
        const double attendMs = timeSteps(attend), rowsMs = timeSteps(attendRows), readMs = timeSteps(read);
        double cached = 0;
        for (int64_t len : lens) cached += static_cast<double>(len);
        const double mb = cached * kKvDim * 2 * kLayers * static_cast<double>(elemBytes) / 1e6;
        std::printf("%s: %.1f MB of K/V per step; per head %.3f ms (%.1f GB/s), rows %.3f ms (%.1f GB/s), "
                    "read %.3f ms (%.1f GB/s)\n",
                    name, mb, attendMs, mb / attendMs, rowsMs, mb / rowsMs, readMs, mb / readMs);
    };
    std::printf("%lld sequences, %lld positions on average, %d threads, median of %d steps, caches %s\n",
                static_cast<long long>(seqs), static_cast<long long>(positions), threads, reps,
                evictFirst ? "evicted before every layer" : "warm");
    run("F32", f32, 4);
    run("F16", f16, 2);
    double sink = out[0];
    for (double s : sinks) sink += s;
    std::printf("(checksum %g)\n", sink);
    return 0;
}
