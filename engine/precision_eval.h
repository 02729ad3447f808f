// Precision A/B: perplexity of a model on a text, and how closely a candidate follows a reference.
#pragma once

#include "engine/llama_model.h"
#include "kernels/cpu/thread_pool.h"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace mb::engine {

struct PerplexityResult {
    double perplexity = 0;
    int64_t predicted = 0; // next-token predictions scored
    int64_t windows = 0;   // forward passes (non-overlapping windows)
};

// Perplexity of `tokens` (BOS first when the model has one), scored in non-overlapping
// windows of at most `context` tokens, each run as one batched pass with logits for every
// position. With a leading BOS every window starts with BOS and every later token is
// predicted exactly once. exp(mean negative log-likelihood), log-softmax in double.
// Throws std::invalid_argument for fewer than 2 tokens or a context outside [2, model's].
PerplexityResult perplexityDetail(const LlamaModel& model, kernels::ThreadPool& pool,
                                  std::span<const int32_t> tokens, int64_t context);
double perplexity(const LlamaModel& model, kernels::ThreadPool& pool, std::span<const int32_t> tokens,
                  int64_t context);

struct PrecisionComparison {
    double agreement = 0;      // matching argmax / positions
    double meanKl = 0;         // mean KL(reference || candidate) per position, nats
    double refPerplexity = 0;  // over every prompt + continuation
    double candPerplexity = 0;
    int64_t positions = 0;     // continuation positions compared
    int64_t prompts = 0;       // prompts evaluated (fewer than given when stopped early)
    bool stopped = false;      // `onPrompt` asked to stop; the figures cover `prompts` prompts
};

// Called after each prompt with (prompts done, prompts in all); returning false stops the
// comparison there (its figures then cover the prompts done).
using PrecisionProgress = std::function<bool(int64_t done, int64_t total)>;

// For each prompt: `genTokens` greedy (argmax) tokens from the reference, then prompt plus
// continuation teacher-forced through both models (one batched pass each); at every
// position predicting a continuation token, the argmaxes and the softmax distributions are
// compared. Throws std::invalid_argument for different vocabulary sizes, an empty prompt,
// genTokens < 1, or a sequence beyond either model's context.
PrecisionComparison comparePrecision(const LlamaModel& reference, const LlamaModel& candidate,
                                     kernels::ThreadPool& pool, const std::vector<std::vector<int32_t>>& prompts,
                                     int64_t genTokens, const PrecisionProgress& onPrompt = {});

// (tokens.size(), vocabSize) logits of every position of `tokens` in one batched pass on
// a fresh cache. Throws std::invalid_argument when the tokens exceed the model's context.
std::vector<float> allLogits(const LlamaModel& model, kernels::ThreadPool& pool, std::span<const int32_t> tokens);

} // namespace mb::engine
