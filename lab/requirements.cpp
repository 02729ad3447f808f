// Parsing and writing the requirements file, with errors that name the JSON key.
#include "lab/requirements.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace mb::lab {

namespace {

constexpr const char* kWhat = "requirements";

struct MetricName {
    SloMetric metric;
    const char* name;
};
constexpr MetricName kMetrics[] = {{SloMetric::TtftMs, "ttft_ms"},
                                   {SloMetric::E2eMs, "e2e_ms"},
                                   {SloMetric::TpotMs, "tpot_ms"},
                                   {SloMetric::ItlMs, "itl_ms"}};
struct StatName {
    SloStat stat;
    const char* name;
};
constexpr StatName kStats[] = {{SloStat::P50, "p50"},   {SloStat::P90, "p90"},
                               {SloStat::P95, "p95"},   {SloStat::P99, "p99"},
                               {SloStat::P999, "p99.9"}, {SloStat::Mean, "mean"},
                               {SloStat::Max, "max"}};

[[noreturn]] void fail(const std::string& key, const std::string& why) {
    throw RequirementsError(std::string(kWhat) + ": " + key + ": " + why);
}

std::string joinedNames(const auto& table) {
    std::string s;
    for (const auto& e : table) s += (s.empty() ? "" : ", ") + std::string(e.name);
    return s;
}

bool flag(const nlohmann::json& j, const std::string& key) {
    if (!j.is_boolean()) fail(key, "expected true or false");
    return j.get<bool>();
}

} // namespace

namespace json_check {

void requireObject(const nlohmann::json& j, const std::string& what, const std::string& key) {
    if (!j.is_object())
        throw RequirementsError(what + ": " + (key.empty() ? "document" : key) +
                                ": expected a JSON object");
}

void rejectUnknownKeys(const nlohmann::json& j, const std::vector<std::string>& known,
                       const std::string& what, const std::string& prefix) {
    for (const auto& [k, v] : j.items())
        if (std::find(known.begin(), known.end(), k) == known.end())
            throw RequirementsError(what + ": " + prefix + k + ": unknown key");
}

double number(const nlohmann::json& j, const std::string& what, const std::string& key, double min,
              double max) {
    if (!j.is_number()) throw RequirementsError(what + ": " + key + ": expected a number");
    const double v = j.get<double>();
    if (!std::isfinite(v) || v < min || v > max) {
        std::ostringstream why;
        why << what << ": " << key << ": " << v << " is outside [" << min << ", ";
        if (max == std::numeric_limits<double>::max()) why << "inf";
        else why << max;
        why << "]";
        throw RequirementsError(why.str());
    }
    return v;
}

nlohmann::json parseFile(const std::string& path, const std::string& what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw RequirementsError(what + " file " + path + ": cannot open");
    try {
        return nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
        std::string msg = e.what();
        std::replace(msg.begin(), msg.end(), '\n', ' ');
        throw RequirementsError(what + " file " + path + ": not JSON: " + msg);
    }
}

} // namespace json_check

const char* sloMetricName(SloMetric m) {
    for (const auto& e : kMetrics)
        if (e.metric == m) return e.name;
    return "?";
}

const char* sloStatName(SloStat s) {
    for (const auto& e : kStats)
        if (e.stat == s) return e.name;
    return "?";
}

std::string SloEntry::key() const {
    return std::string(sloMetricName(metric)) + "." + sloStatName(stat);
}

const char* opsCapabilityName(OpsCapability c) {
    switch (c) {
    case OpsCapability::Low: return "low";
    case OpsCapability::Medium: return "medium";
    case OpsCapability::High: return "high";
    }
    return "?";
}

std::optional<double> Requirements::minTtftLimitMs() const {
    std::optional<double> best;
    for (const auto& e : slo)
        if (e.metric == SloMetric::TtftMs && (!best || e.limitMs < *best)) best = e.limitMs;
    return best;
}

Requirements parseRequirements(const nlohmann::json& j) {
    using namespace json_check;
    constexpr double kInf = std::numeric_limits<double>::max();
    requireObject(j, kWhat, "");
    rejectUnknownKeys(j,
                      {"slo", "inputs", "monthly", "weights", "ops_capability", "cost_materiality", "needs", "quality"},
                      kWhat, "");
    Requirements r;

    if (!j.contains("slo")) fail("slo", "required (e.g. {\"ttft_ms\": {\"p95\": 3000}})");
    const auto& slo = j["slo"];
    requireObject(slo, kWhat, "slo");
    for (const auto& [metricKey, stats] : slo.items()) {
        const auto m = std::find_if(std::begin(kMetrics), std::end(kMetrics),
                                    [&](const MetricName& e) { return metricKey == e.name; });
        if (m == std::end(kMetrics))
            fail("slo." + metricKey, "unknown metric (expected one of " + joinedNames(kMetrics) + ")");
        requireObject(stats, kWhat, "slo." + metricKey);
        if (stats.empty()) fail("slo." + metricKey, "expected at least one bound, e.g. {\"p95\": 3000}");
        for (const auto& [statKey, limit] : stats.items()) {
            const std::string key = "slo." + metricKey + "." + statKey;
            const auto s = std::find_if(std::begin(kStats), std::end(kStats),
                                        [&](const StatName& e) { return statKey == e.name; });
            if (s == std::end(kStats))
                fail(key, "unknown statistic (expected one of " + joinedNames(kStats) + ")");
            if (!limit.is_number() || !(limit.get<double>() > 0) || !std::isfinite(limit.get<double>()))
                fail(key, "expected a positive number of milliseconds");
            r.slo.push_back({m->metric, s->stat, limit.get<double>()});
        }
    }
    if (r.slo.empty()) fail("slo", "expected at least one bound, e.g. {\"ttft_ms\": {\"p95\": 3000}}");

    if (j.contains("inputs")) {
        const auto& in = j["inputs"];
        requireObject(in, kWhat, "inputs");
        rejectUnknownKeys(in, {"prompt_file", "max_tokens", "over_cap_tolerance"}, kWhat, "inputs.");
        if (in.contains("prompt_file")) {
            if (!in["prompt_file"].is_string() || in["prompt_file"].get<std::string>().empty())
                fail("inputs.prompt_file", "expected a file path");
            r.inputs.promptFile = in["prompt_file"].get<std::string>();
        }
        if (in.contains("max_tokens")) {
            if (!in["max_tokens"].is_number_integer() || in["max_tokens"].get<int64_t>() < 1)
                fail("inputs.max_tokens", "expected a positive whole number of tokens");
            r.inputs.maxTokens = in["max_tokens"].get<int64_t>();
        }
        if (in.contains("over_cap_tolerance"))
            r.inputs.overCapTolerance =
                number(in["over_cap_tolerance"], kWhat, "inputs.over_cap_tolerance", 0, 1);
    }

    if (j.contains("monthly")) {
        const auto& mo = j["monthly"];
        requireObject(mo, kWhat, "monthly");
        rejectUnknownKeys(mo, {"requests", "input_tokens_per_request", "output_tokens_per_request", "peak_to_mean"},
                          kWhat, "monthly.");
        if (mo.contains("peak_to_mean"))
            r.monthly.peakToMean = number(mo["peak_to_mean"], kWhat, "monthly.peak_to_mean", 1, 1000);
        if (mo.contains("requests")) r.monthly.requests = number(mo["requests"], kWhat, "monthly.requests", 0, kInf);
        if (mo.contains("input_tokens_per_request"))
            r.monthly.inputTokensPerRequest =
                number(mo["input_tokens_per_request"], kWhat, "monthly.input_tokens_per_request", 0, kInf);
        if (mo.contains("output_tokens_per_request"))
            r.monthly.outputTokensPerRequest =
                number(mo["output_tokens_per_request"], kWhat, "monthly.output_tokens_per_request", 0, kInf);
    }

    if (j.contains("weights")) {
        const auto& w = j["weights"];
        requireObject(w, kWhat, "weights");
        rejectUnknownKeys(w, {"latency", "cost", "features"}, kWhat, "weights.");
        // An absent weight keeps its default; the three are normalised to sum 1 when scoring.
        if (w.contains("latency")) r.weights.latency = number(w["latency"], kWhat, "weights.latency", 0, kInf);
        if (w.contains("cost")) r.weights.cost = number(w["cost"], kWhat, "weights.cost", 0, kInf);
        if (w.contains("features")) r.weights.features = number(w["features"], kWhat, "weights.features", 0, kInf);
        if (r.weights.latency + r.weights.cost + r.weights.features <= 0)
            fail("weights", "at least one weight must be positive");
    }

    if (j.contains("ops_capability")) {
        const auto& o = j["ops_capability"];
        const std::string v = o.is_string() ? o.get<std::string>() : std::string();
        if (v == "low") r.opsCapability = OpsCapability::Low;
        else if (v == "medium") r.opsCapability = OpsCapability::Medium;
        else if (v == "high") r.opsCapability = OpsCapability::High;
        else fail("ops_capability", "expected \"low\", \"medium\" or \"high\"");
    }

    if (j.contains("cost_materiality"))
        r.costMateriality = json_check::number(j["cost_materiality"], kWhat, "cost_materiality", 0, 1);

    if (j.contains("quality")) {
        const auto& q = j["quality"];
        requireObject(q, kWhat, "quality");
        rejectUnknownKeys(q, {"min_agreement", "max_mean_kl", "max_perplexity_ratio"}, kWhat, "quality.");
        if (q.contains("min_agreement"))
            r.quality.minAgreement = number(q["min_agreement"], kWhat, "quality.min_agreement", 0, 1);
        if (q.contains("max_mean_kl")) r.quality.maxMeanKl = number(q["max_mean_kl"], kWhat, "quality.max_mean_kl", 0, kInf);
        if (q.contains("max_perplexity_ratio"))
            r.quality.maxPerplexityRatio =
                number(q["max_perplexity_ratio"], kWhat, "quality.max_perplexity_ratio", 1, kInf);
    }

    if (j.contains("needs")) {
        const auto& n = j["needs"];
        requireObject(n, kWhat, "needs");
        rejectUnknownKeys(n, {"hot_updates", "custom_batching"}, kWhat, "needs.");
        if (n.contains("hot_updates")) r.needs.hotUpdates = flag(n["hot_updates"], "needs.hot_updates");
        if (n.contains("custom_batching"))
            r.needs.customBatching = flag(n["custom_batching"], "needs.custom_batching");
    }
    return r;
}

Requirements loadRequirements(const std::string& path) {
    Requirements r = json_check::loadFile(path, kWhat, parseRequirements);
    // Relative to the file, made absolute: a selection saved with these requirements reads
    // the same prompt file from any working directory (migrate, report, the GUI).
    if (std::filesystem::path p(r.inputs.promptFile); !p.empty() && p.is_relative())
        r.inputs.promptFile =
            std::filesystem::absolute(std::filesystem::path(path).parent_path() / p).lexically_normal().string();
    return r;
}

nlohmann::ordered_json toJson(const Requirements& r) {
    nlohmann::ordered_json j;
    nlohmann::ordered_json slo = nlohmann::ordered_json::object();
    for (const auto& e : r.slo) slo[sloMetricName(e.metric)][sloStatName(e.stat)] = e.limitMs;
    j["slo"] = std::move(slo);
    nlohmann::ordered_json inputs;
    if (!r.inputs.promptFile.empty()) inputs["prompt_file"] = r.inputs.promptFile;
    if (r.inputs.maxTokens) inputs["max_tokens"] = *r.inputs.maxTokens;
    inputs["over_cap_tolerance"] = r.inputs.overCapTolerance;
    j["inputs"] = std::move(inputs);
    nlohmann::ordered_json monthly = nlohmann::ordered_json::object();
    if (r.monthly.requests) monthly["requests"] = *r.monthly.requests;
    if (r.monthly.inputTokensPerRequest) monthly["input_tokens_per_request"] = *r.monthly.inputTokensPerRequest;
    if (r.monthly.outputTokensPerRequest) monthly["output_tokens_per_request"] = *r.monthly.outputTokensPerRequest;
    monthly["peak_to_mean"] = r.monthly.peakToMean;
    j["monthly"] = std::move(monthly);
    j["weights"] = {{"latency", r.weights.latency}, {"cost", r.weights.cost}, {"features", r.weights.features}};
    j["ops_capability"] = opsCapabilityName(r.opsCapability);
    j["cost_materiality"] = r.costMateriality;
    j["needs"] = {{"hot_updates", r.needs.hotUpdates}, {"custom_batching", r.needs.customBatching}};
    if (r.quality.any()) {
        nlohmann::ordered_json q = nlohmann::ordered_json::object();
        if (r.quality.minAgreement) q["min_agreement"] = *r.quality.minAgreement;
        if (r.quality.maxMeanKl) q["max_mean_kl"] = *r.quality.maxMeanKl;
        if (r.quality.maxPerplexityRatio) q["max_perplexity_ratio"] = *r.quality.maxPerplexityRatio;
        j["quality"] = std::move(q);
    }
    return j;
}

} // namespace mb::lab
