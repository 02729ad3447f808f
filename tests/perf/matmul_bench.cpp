// Matmul throughput per weight type and shape: the kernel-level view behind prefill and decode speed.
//
// Usage: matmul_bench [threads = 1] [tokens = 128] [repetitions = 20] [shapes = stories110m |
// stories15m | llama-3.2-1b] [types = f32,f16,q8_0,q4_0 (any quantisable types, comma-separated)]. For the model's shapes (stories110m: 768 x 768, 2048 x 768, 768 x 2048,
// 32000 x 768; stories15m: the same with 288 and 768; llama-3.2-1b: 2048 x 2048, 8192 x 2048,
// 2048 x 8192, 128256 x 2048, the row lengths where activations outgrow L1) and each weight type, prints the best and
// median GMAC/s (1e9 multiply-adds per second) over the repetitions; the types with panels (F32,
// F16, Q8_0, Q4_0, Q4_K, Q6_K) also as "f32p", "f16p", ..., "q6_kp", from 16-row panels
// (kernels/cpu/panels.h, panels_k.h) where the kernel table multiplies them. Best-of-N is the
// figure to compare on a shared machine: interference only ever slows a run down.
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/panels.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/vec.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

using namespace mb::kernels;

int main(int argc, char** argv) {
    const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
    const int64_t n = argc > 2 ? std::atol(argv[2]) : 128;
    const int reps = argc > 3 ? std::atoi(argv[3]) : 20;
    const std::string preset = argc > 4 ? argv[4] : "stories110m";
    std::vector<TensorType> types;
    for (std::string list = argc > 5 ? argv[5] : "f32,f16,q8_0,q4_0"; !list.empty();) {
        const size_t comma = std::min(list.find(','), list.size());
        const auto t = tensorTypeFromName(list.substr(0, comma));
        if (!t || !traits(*t).fromFloat) {
            std::fprintf(stderr, "matmul_bench: not a type the engine can write: %s\n", list.substr(0, comma).c_str());
            return 2;
        }
        types.push_back(*t);
        list.erase(0, comma + 1);
    }
    if (threads < 1 || n < 1 || reps < 1 || (preset != "stories110m" && preset != "stories15m" && preset != "llama-3.2-1b")) {
        std::fprintf(stderr, "usage: matmul_bench [threads >= 1] [tokens >= 1] [repetitions >= 1] "
                             "[stories110m | stories15m | llama-3.2-1b] [types, comma-separated]\n");
        return 2;
    }
    std::printf("kernels: %s, threads %d, tokens %lld\n", vecKernels().name, threads, static_cast<long long>(n));
    ThreadPool pool(threads);
    MatmulScratch scratch;
    std::mt19937 rng(1);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    // rows (out), cols (in): the layer shapes, and the output matrix, too big for the caches,
    // whose one-token product shows the memory-bound (decode) regime.
    const bool large = preset == "llama-3.2-1b";
    const int64_t dim = large ? 2048 : preset == "stories15m" ? 288 : 768;
    const int64_t ffn = large ? 8192 : preset == "stories15m" ? 768 : 2048;
    const int64_t shapes[][2] = {{dim, dim}, {ffn, dim}, {dim, ffn}, {large ? 128256 : 32000, dim}};
    for (TensorType type : types) {
        for (const auto& shape : shapes) {
            const int64_t rows = shape[0], cols = shape[1];
            std::vector<float> wf(static_cast<size_t>(rows * cols)), x(static_cast<size_t>(n * cols));
            for (auto& v : wf) v = dist(rng);
            for (auto& v : x) v = dist(rng);
            std::vector<uint8_t> packed(rowBytes(type, cols) * static_cast<size_t>(rows));
            for (int64_t r = 0; r < rows; ++r)
                quantizeRow(type, wf.data() + r * cols, packed.data() + r * rowBytes(type, cols), cols);
            WeightMatrix w{type, rows, cols, packed.data()};
            // Types with panels (F32, F16, Q8_0, Q4_0, Q4_K, Q6_K where the kernel table multiplies
            // them) run twice: from their rows (dot tiles), then from 16-row panels (outer products), as
            // Forward uses them.
            const size_t panelBytes = panelBytesFor(vecKernels(), type, rows, cols);
            PanelMemory panels = allocatePanelMemory(panelBytes);
            const bool withPanels = panelBytes > 0;
            if (withPanels) packPanels(type, packed.data(), rows, cols, panels.get());
            for (int layout = 0; layout < (withPanels ? 2 : 1); ++layout) {
                w.panels = layout == 1 ? panels.get() : nullptr;
                std::vector<float> y(static_cast<size_t>(n * rows));
                matmul(w, x.data(), n, y.data(), pool, scratch); // warm-up
                std::vector<double> gmacs;
                for (int r = 0; r < reps; ++r) {
                    const auto t0 = std::chrono::steady_clock::now();
                    matmul(w, x.data(), n, y.data(), pool, scratch);
                    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                    gmacs.push_back(static_cast<double>(rows * cols * n) / s / 1e9);
                }
                std::sort(gmacs.begin(), gmacs.end());
                // Weight bytes read per second at the best time (each weight read once per call).
                const double gbs = gmacs.back() * 1e9 / static_cast<double>(rows * cols * n) *
                                   static_cast<double>(w.bytes()) / 1e9;
                const std::string name = std::string(tensorTypeName(type)) + (layout == 1 ? "p" : "");
                std::printf("%-6s %5lld x %-5lld best %6.1f  median %6.1f GMAC/s  (best: weights at %5.1f GB/s)\n",
                            name.c_str(), static_cast<long long>(rows), static_cast<long long>(cols), gmacs.back(),
                            gmacs[gmacs.size() / 2], gbs);
            }
        }
    }
    return 0;
}
