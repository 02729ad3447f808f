// The selection requirements file (PRODUCT.md §6): latency SLOs, inputs, volume, weights, needs.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mb::lab {

// A requirements or price-sheet file that cannot be used; the message names the JSON key
// ("requirements: slo.ttft_ms.p95: expected a positive number of milliseconds").
class RequirementsError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class SloMetric { TtftMs, E2eMs, TpotMs, ItlMs };
enum class SloStat { P50, P90, P95, P99, P999, Mean, Max };

const char* sloMetricName(SloMetric m); // "ttft_ms", "e2e_ms", "tpot_ms", "itl_ms"
const char* sloStatName(SloStat s);     // "p50", "p90", "p95", "p99", "p99.9", "mean", "max"

// One bound: `stat` of `metric` over a candidate's Ok requests must be <= limitMs.
struct SloEntry {
    SloMetric metric = SloMetric::TtftMs;
    SloStat stat = SloStat::P95;
    double limitMs = 0;

    std::string key() const; // "ttft_ms.p95"
};

enum class OpsCapability { Low, Medium, High };
const char* opsCapabilityName(OpsCapability c); // "low", "medium", "high"

// Every field but `slo` is optional; absent fields keep these defaults.
struct Requirements {
    std::vector<SloEntry> slo; // metrics, then statistics, in name order; at least one

    struct Inputs {
        std::string promptFile;        // measured input lengths ("" = use the runs' prompts)
        std::optional<int64_t> maxTokens; // stated longest input, tokens
        double overCapTolerance = 0;   // share of inputs allowed over the fast-mode cap, [0, 1]
    } inputs;

    struct Monthly {
        std::optional<double> requests; // per month; unset: the run's own request count
        std::optional<double> inputTokensPerRequest;  // unset: measured mean
        std::optional<double> outputTokensPerRequest; // unset: measured mean
        double peakToMean = 3; // the busiest hour's rate over the month's mean, [1, 1000]: sizes replicas
    } monthly;

    struct Weights {
        double latency = 0.5, cost = 0.3, features = 0.2; // >= 0, not all 0
    } weights;

    OpsCapability opsCapability = OpsCapability::Medium;

    // Cost cannot decide when the two month bills differ by less than this share of the
    // larger one, [0, 1]; default 5%.
    double costMateriality = 0.05;

    // A quality floor against the model's F32 output (the precision A/B a run measures with
    // compare --precision-check N): greedy top-1 agreement, mean KL (nats), perplexity ratio.
    struct Quality {
        std::optional<double> minAgreement;       // [0, 1]
        std::optional<double> maxMeanKl;          // >= 0
        std::optional<double> maxPerplexityRatio; // >= 1: candidate / reference perplexity
        bool any() const { return minAgreement || maxMeanKl || maxPerplexityRatio; }
    } quality;

    struct Needs {
        bool hotUpdates = false;
        bool customBatching = false;
    } needs;

    // The smallest TTFT limit of any statistic; nullopt without a TTFT entry.
    std::optional<double> minTtftLimitMs() const;
};

// Parses a requirements document. Unknown keys and impossible values throw
// RequirementsError naming the key; `slo` is required and must hold at least one bound.
// A relative inputs.prompt_file is kept as written (the caller resolves it, e.g. against
// the requirements file's directory).
Requirements parseRequirements(const nlohmann::json& j);
// Reads and parses a file; errors are prefixed with the path. A relative
// inputs.prompt_file is resolved against the file's directory and made absolute.
Requirements loadRequirements(const std::string& path);
// All keys, in the file format; parseRequirements(toJson(r)) == r.
nlohmann::ordered_json toJson(const Requirements& r);

// Helpers shared with the price-sheet parser: throw RequirementsError("WHAT: KEY: WHY").
namespace json_check {
void requireObject(const nlohmann::json& j, const std::string& what, const std::string& key);
void rejectUnknownKeys(const nlohmann::json& j, const std::vector<std::string>& known,
                       const std::string& what, const std::string& prefix);
double number(const nlohmann::json& j, const std::string& what, const std::string& key,
              double min, double max);
nlohmann::json parseFile(const std::string& path, const std::string& what);
// parse(parseFile(path)), with the path prefixed to any RequirementsError.
template <class Parse>
auto loadFile(const std::string& path, const std::string& what, Parse parse) {
    const nlohmann::json j = parseFile(path, what);
    try {
        return parse(j);
    } catch (const RequirementsError& e) {
        throw RequirementsError(path + ": " + e.what());
    }
}
} // namespace json_check

} // namespace mb::lab
