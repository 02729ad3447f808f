// Raw engine speed: prefill and decode tokens per second measured separately, repeated.
#pragma once

#include "engine/devices.h"
#include "engine/llama_model.h"
#include "kernels/cpu/thread_pool.h"

#include <cstdint>
#include <vector>

namespace mb::engine {

struct BenchOptions {
    int64_t promptTokens = 128; // prefilled as one batch
    int64_t genTokens = 64;     // decoded one at a time after the prompt
    int repetitions = 3;
    uint64_t seed = 0;          // for the synthetic prompt's token ids
    Device device;              // resolved (engine::resolveDevice); the CPU by default
    bool graphs = false;        // CUDA: replay the decode step as a captured graph
};

struct BenchResult {
    std::vector<double> prefillTokS; // one per repetition
    std::vector<double> decodeTokS;
};

// One untimed warm-up pass, then `repetitions` timed ones, each on a fresh KV cache:
// prefill of a seeded prompt (BOS + ordinary tokens), then greedy decode steps. Throws
// std::invalid_argument when the prompt plus generation does not fit the context.
BenchResult runBenchmark(const LlamaModel& model, kernels::ThreadPool& pool, const BenchOptions& options);

// Mean and sample standard deviation.
std::pair<double, double> meanStd(const std::vector<double>& values);

} // namespace mb::engine
