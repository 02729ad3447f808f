// Runs engine::comparePrecision for a comparison's candidate and (de)serialises its figures.
#include "lab/precision_check.h"

#include "engine/llama_model.h"
#include "engine/precision_eval.h"
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace mb::lab {

std::vector<std::vector<int32_t>> precisionPrompts(const std::vector<WorkloadRequest>& requests, int count,
                                                   int64_t maxTokens, int64_t genTokens, int64_t contextLength) {
    const int64_t cap = std::min(maxTokens, contextLength - genTokens);
    if (cap < 1)
        throw std::invalid_argument("precision check: " + std::to_string(genTokens) +
                                    " generated tokens leave no room for a prompt in a context of " +
                                    std::to_string(contextLength));
    std::vector<std::vector<int32_t>> out;
    for (const auto& r : requests) {
        if (static_cast<int>(out.size()) >= count) break;
        if (r.warmup || r.prompt.empty()) continue;
        const auto n = static_cast<size_t>(std::min<int64_t>(cap, static_cast<int64_t>(r.prompt.size())));
        out.emplace_back(r.prompt.begin(), r.prompt.begin() + static_cast<std::ptrdiff_t>(n));
    }
    return out;
}

std::optional<PrecisionCheck> checkPrecision(const std::string& modelPath, engine::Precision precision,
                                             const std::vector<std::vector<int32_t>>& prompts, int threads,
                                             const PrecisionCheckOptions& options, const std::string& label) {
    return checkPrecision(PrecisionSubjects{modelPath, engine::Precision::F32, "", precision}, prompts, threads,
                          options, label);
}

std::optional<PrecisionCheck> checkPrecision(const PrecisionSubjects& subjects,
                                             const std::vector<std::vector<int32_t>>& prompts, int threads,
                                             const PrecisionCheckOptions& options, const std::string& label) {
    if (prompts.empty()) throw std::invalid_argument("precision check: no prompts");
    const auto start = std::chrono::steady_clock::now();
    const auto cancelled = [&] { return options.cancel && options.cancel->load(); };
    const bool sameFile = subjects.candidatePath.empty() || subjects.candidatePath == subjects.referencePath;
    const std::string& candidatePath = sameFile ? subjects.referencePath : subjects.candidatePath;
    if (cancelled()) return std::nullopt;
    const auto reference = engine::LlamaModel::load(subjects.referencePath, {.precision = subjects.referencePrecision});
    if (cancelled()) return std::nullopt;
    const auto candidate = engine::LlamaModel::load(candidatePath, {.precision = subjects.candidatePrecision});
    kernels::ThreadPool pool(std::max(1, threads));
    const auto total = static_cast<int64_t>(prompts.size());
    if (options.onProgress) options.onProgress(label, 0, total);
    const engine::PrecisionComparison r =
        engine::comparePrecision(*reference, *candidate, pool, prompts, options.genTokens, [&](int64_t done, int64_t all) {
            if (options.onProgress) options.onProgress(label, done, all);
            return !cancelled();
        });
    if (r.prompts == 0) return std::nullopt;
    PrecisionCheck p;
    p.reference = engine::precisionName(subjects.referencePrecision);
    if (!sameFile) p.reference = subjects.referencePath + " (" + p.reference + ")";
    p.precision = engine::precisionName(subjects.candidatePrecision);
    p.prompts = r.prompts;
    p.genTokens = options.genTokens;
    p.positions = r.positions;
    p.agreement = r.agreement;
    p.meanKl = r.meanKl;
    p.referencePerplexity = r.refPerplexity;
    p.candidatePerplexity = r.candPerplexity;
    p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return p;
}

const std::vector<std::string>& samplePrecisionTexts() {
    static const std::vector<std::string> texts = {
        "Once upon a time, there was a little girl who loved to play in the park.",
        "The weather today is cold and windy, so remember to wear a warm coat.",
        "To make a cup of tea, first boil the water, then",
        "The cat sat by the window and watched the birds in the garden.",
        "In the morning the baker opens his shop and sells fresh bread to",
        "Tom wanted to build a boat, so he asked his father for help.",
        "The library is quiet in the afternoon, and many students come to",
        "After the rain stopped, the children ran outside to look for",
    };
    return texts;
}

nlohmann::ordered_json toJson(const PrecisionCheck& p) {
    return {{"reference", p.reference},
            {"precision", p.precision},
            {"prompts", p.prompts},
            {"gen_tokens", p.genTokens},
            {"positions", p.positions},
            {"agreement", p.agreement},
            {"mean_kl", p.meanKl},
            {"reference_perplexity", p.referencePerplexity},
            {"candidate_perplexity", p.candidatePerplexity},
            {"seconds", p.seconds}};
}

std::optional<PrecisionCheck> precisionCheckFromJson(const nlohmann::json& summary) {
    if (!summary.is_object() || !summary.contains("precision")) return std::nullopt;
    const auto& j = summary["precision"];
    if (!j.is_object()) return std::nullopt;
    try {
        PrecisionCheck p;
        p.reference = j.value("reference", std::string("f32"));
        p.precision = j.value("precision", std::string());
        p.prompts = j.at("prompts").get<int64_t>();
        p.genTokens = j.value("gen_tokens", int64_t{0});
        p.positions = j.at("positions").get<int64_t>();
        p.agreement = j.at("agreement").get<double>();
        p.meanKl = j.at("mean_kl").get<double>();
        p.referencePerplexity = j.at("reference_perplexity").get<double>();
        p.candidatePerplexity = j.at("candidate_perplexity").get<double>();
        p.seconds = j.value("seconds", 0.0);
        return p;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;
    }
}

std::optional<PrecisionCheck> precisionCheckFromSummaryText(const std::string& summaryJson) {
    if (summaryJson.empty()) return std::nullopt;
    const auto j = nlohmann::json::parse(summaryJson, nullptr, /*allow_exceptions=*/false);
    return precisionCheckFromJson(j);
}

} // namespace mb::lab
