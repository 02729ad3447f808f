// Precision A/B beside the latency figures: a candidate's weights, at its profile's precision,
// against the same model file computed in F32, on the workload's own prompts.
#pragma once

#include "engine/profile.h"
#include "lab/workload.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mb::lab {

// engine::comparePrecision's figures as a run stores them (the candidate summary's "precision").
struct PrecisionCheck {
    std::string reference = "f32"; // the reference the candidate was compared against
    std::string precision;         // the candidate's precision ("native" = the file's own types)
    int64_t prompts = 0;           // prompts evaluated
    int64_t genTokens = 0;         // greedy reference tokens per prompt
    int64_t positions = 0;         // next-token distributions compared
    double agreement = 0;          // share of positions where both argmaxes agree
    double meanKl = 0;             // mean KL(reference || candidate), nats
    double referencePerplexity = 0;
    double candidatePerplexity = 0; // both over prompt + reference continuation
    double seconds = 0;             // wall time of the check
};

struct PrecisionCheckOptions {
    int prompts = 0;               // prompts to evaluate; 0 = no check
    int64_t genTokens = 16;        // greedy reference tokens per prompt
    int64_t maxPromptTokens = 256; // longer prompts keep their first tokens (BOS included)
    const std::atomic<bool>* cancel = nullptr;
    // (candidate label, prompts done, prompts in all), from the calling thread.
    std::function<void(const std::string&, int64_t, int64_t)> onProgress;
};

// The first `count` measured prompts of `requests`, each cut to `maxTokens` tokens, leaving
// room for `genTokens` within `contextLength`.
std::vector<std::vector<int32_t>> precisionPrompts(const std::vector<WorkloadRequest>& requests, int count,
                                                   int64_t maxTokens, int64_t genTokens, int64_t contextLength);

// What is compared: by default one file in F32 against itself at a profile's precision;
// the Models page also compares two files (say a model and its quantised copy).
struct PrecisionSubjects {
    std::string referencePath;
    engine::Precision referencePrecision = engine::Precision::F32;
    std::string candidatePath; // empty: referencePath
    engine::Precision candidatePrecision = engine::Precision::Native;
};

// Loads both models and compares them on `prompts` with `threads` threads. Returns nothing
// when cancelled before any prompt was evaluated. Throws what the model loader throws, and
// std::invalid_argument for bad prompts or different vocabularies.
std::optional<PrecisionCheck> checkPrecision(const PrecisionSubjects& subjects,
                                             const std::vector<std::vector<int32_t>>& prompts, int threads,
                                             const PrecisionCheckOptions& options, const std::string& label);
// The common case: `modelPath` at `precision` against the same file in F32.
std::optional<PrecisionCheck> checkPrecision(const std::string& modelPath, engine::Precision precision,
                                             const std::vector<std::vector<int32_t>>& prompts, int threads,
                                             const PrecisionCheckOptions& options, const std::string& label);

// A few short, plain English sentences: the prompts when the user gives no prompt file.
const std::vector<std::string>& samplePrecisionTexts();

nlohmann::ordered_json toJson(const PrecisionCheck& p);
// From a stored candidate summary's "precision" object; nothing when absent or malformed.
std::optional<PrecisionCheck> precisionCheckFromJson(const nlohmann::json& summary);
std::optional<PrecisionCheck> precisionCheckFromSummaryText(const std::string& summaryJson);

} // namespace mb::lab
