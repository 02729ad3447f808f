// The selection result as JSON (CLI output, stored selections, reports) and back.
#include "lab/selection.h"

#include <algorithm>
#include <iterator>

namespace mb::lab {

namespace {

using OJson = nlohmann::ordered_json;

constexpr Verdict kVerdicts[] = {Verdict::Recommended, Verdict::NoClearWinner, Verdict::NoneFeasible};

OJson scoreJson(const CandidateScore& c) {
    OJson slo = OJson::array();
    for (const auto& k : c.slo)
        slo.push_back({{"key", k.key}, {"limit_ms", k.limitMs}, {"measured_ms", k.measuredMs}, {"met", k.met},
                       {"measured", k.measured}, {"headroom", k.headroom}});
    OJson spread = OJson::array();
    for (const auto& x : c.spread)
        spread.push_back({{"key", x.key}, {"runs", x.runs}, {"mean", x.mean}, {"ci95_low", x.ci95Low},
                          {"ci95_high", x.ci95High}, {"cv", x.cv}});
    return {{"label", c.label},
            {"profile", c.profile},
            {"total", c.total},
            {"latency", c.latency},
            {"cost", c.costScore},
            {"features", c.features},
            {"ops_penalty", c.opsPenalty},
            {"meets_slo", c.meetsSlo},
            {"slo", slo},
            {"ok_share", c.okShare},
            {"requests", c.requests},
            {"rejected", c.rejected},
            {"failed", c.failed},
            {"truncated", c.truncated},
            {"hit_rate", c.hitRate},
            {"requests_per_s", c.requestsPerS},
            {"input_tokens_per_request", c.inputTokensPerRequest},
            {"output_tokens_per_request", c.outputTokensPerRequest},
            {"supports", {{"hot_updates", c.hotUpdates}, {"custom_batching", c.customBatching}}},
            {"precision", c.precision},
            {"quality", c.quality ? OJson(toJson(*c.quality)) : OJson()},
            {"context", {{"cap", c.contextCap}, {"profile_cap", c.profileCap}, {"model_context", c.modelContext},
                         {"inputs", c.inputs}, {"over_cap", c.inputsOverCap}}},
            {"feasible", c.feasible},
            {"gaps", c.gaps},
            {"remedies", c.remedies},
            {"spread", spread}};
}

CandidateScore scoreFromJson(Mode mode, const nlohmann::json& j, const nlohmann::json& cost) {
    CandidateScore c;
    c.mode = mode;
    c.label = j.at("label").get<std::string>();
    c.profile = j.at("profile").get<std::string>();
    c.total = j.at("total").get<double>();
    c.latency = j.at("latency").get<double>();
    c.costScore = j.at("cost").get<double>();
    c.features = j.at("features").get<double>();
    c.opsPenalty = j.at("ops_penalty").get<double>();
    c.meetsSlo = j.at("meets_slo").get<bool>();
    for (const auto& k : j.at("slo"))
        c.slo.push_back({k.at("key").get<std::string>(), k.at("limit_ms").get<double>(),
                         k.at("measured_ms").get<double>(), k.at("met").get<bool>(), k.value("measured", true),
                         k.value("headroom", 0.0)});
    // Absent in selections saved before feasibility and headroom scoring.
    c.precision = j.value("precision", std::string());
    if (j.contains("context")) {
        const auto& x = j.at("context");
        c.contextCap = x.at("cap").get<int64_t>();
        c.profileCap = x.at("profile_cap").get<int64_t>();
        c.modelContext = x.at("model_context").get<int64_t>();
        c.inputs = x.at("inputs").get<int64_t>();
        c.inputsOverCap = x.at("over_cap").get<int64_t>();
    }
    c.feasible = j.value("feasible", c.meetsSlo);
    c.gaps = j.value("gaps", std::vector<std::string>{});
    c.remedies = j.value("remedies", std::vector<std::string>{});
    if (j.contains("spread"))
        for (const auto& x : j.at("spread"))
            c.spread.push_back({x.at("key").get<std::string>(), x.at("runs").get<int64_t>(), x.at("mean").get<double>(),
                                x.at("ci95_low").get<double>(), x.at("ci95_high").get<double>(),
                                x.at("cv").get<double>()});
    c.okShare = j.at("ok_share").get<double>();
    c.requests = j.value("requests", int64_t{0}); // absent in selections saved before these counts
    c.rejected = j.value("rejected", int64_t{0});
    c.failed = j.value("failed", int64_t{0});
    c.truncated = j.value("truncated", int64_t{0});
    c.hitRate = j.at("hit_rate").get<double>();
    c.requestsPerS = j.at("requests_per_s").get<double>();
    c.inputTokensPerRequest = j.at("input_tokens_per_request").get<double>();
    c.outputTokensPerRequest = j.at("output_tokens_per_request").get<double>();
    c.hotUpdates = j.at("supports").at("hot_updates").get<bool>();
    c.customBatching = j.at("supports").at("custom_batching").get<bool>();
    if (j.contains("quality") && !j["quality"].is_null())
        c.quality = precisionCheckFromJson(nlohmann::json{{"precision", j["quality"]}});
    if (!cost.is_null()) c.cost = costProjectionFromJson(cost);
    if (!cost.is_null() && cost.contains("reference")) {
        c.costNoHits = costProjectionFromJson(cost["reference"].at("no_hits"));
        c.costAllHits = costProjectionFromJson(cost["reference"].at("all_hits"));
    }
    return c;
}

} // namespace

nlohmann::ordered_json toJson(const SelectionResult& r) {
    OJson j;
    j["verdict"] = verdictName(r.verdict);
    j["recommendation"] = r.verdict == Verdict::Recommended ? OJson(modeName(r.recommendation)) : OJson();
    j["decided_by"] = r.decidedBy;
    j["headline"] = r.headline;
    j["rule_margin"] = r.ruleMargin;
    j["confidence"] = r.confidence ? OJson(*r.confidence) : OJson();
    j["basis"] = r.basis;
    j["margin_within_noise"] = r.marginWithinNoise;
    j["dominance"] = r.dominance;
    j["dominant"] = r.dominant ? OJson(modeName(*r.dominant)) : OJson();
    j["tie_reasons"] = r.tieReasons;
    j["warnings"] = r.warnings;
    j["noise"] = {{"method", r.noise.method},
                  {"replicates", r.noise.replicates},
                  {"agreeing", r.noise.agreeing},
                  {"seed", r.noise.seed},
                  {"score_margin", r.noise.scoreMargin},
                  {"ci95_low", r.noise.ci95Low},
                  {"ci95_high", r.noise.ci95High}};
    OJson trace = OJson::array();
    for (const auto& t : r.trace) trace.push_back({{"rule", t.rule}, {"fired", t.fired}, {"detail", t.detail}});
    j["trace"] = trace;
    j["conflicts"] = r.conflicts;
    OJson scores, cost;
    for (const auto& s : r.scores) {
        scores[modeName(s.mode)] = scoreJson(s);
        OJson one = s.cost ? OJson(toJson(*s.cost)) : OJson();
        if (s.cost && s.costNoHits && s.costAllHits)
            one["reference"] = {{"no_hits", toJson(*s.costNoHits)}, {"all_hits", toJson(*s.costAllHits)}};
        cost[modeName(s.mode)] = one;
    }
    scores["weights"] = {{"latency", r.weights.latency}, {"cost", r.weights.cost}, {"features", r.weights.features}};
    j["scores"] = scores;
    const bool priced = !r.scores.empty() && r.scores.front().cost.has_value();
    if (priced && r.prices) cost["prices"] = toJson(*r.prices);
    j["cost"] = priced ? cost : OJson();
    j["inputs"] = {{"source", r.inputs.source},
                   {"prompt_file", r.inputs.promptFile},
                   {"count", r.inputs.count},
                   {"over_cap", r.inputs.overCap},
                   {"share", r.inputs.share},
                   {"longest", r.inputs.longest},
                   {"cap", r.inputs.cap},
                   {"mean_tokens", r.inputs.meanTokens},
                   {"profile_cap", r.inputs.profileCap},
                   {"model_context", r.inputs.modelContext}};
    j["monitoring"] = r.monitoring;
    OJson capacity = OJson::array();
    for (const ModeCapacity& c : r.capacity) capacity.push_back(toJson(c));
    j["capacity"] = std::move(capacity);
    j["run_ids"] = r.runIds;
    return j;
}

SelectionResult selectionResultFromJson(const nlohmann::json& j) {
    try {
        SelectionResult r;
        // Selections saved before verdicts always recommended a mode.
        const std::string verdict = j.value("verdict", std::string("recommended"));
        const auto v = std::find_if(std::begin(kVerdicts), std::end(kVerdicts),
                                    [&](Verdict x) { return verdict == verdictName(x); });
        if (v == std::end(kVerdicts)) throw SelectionError("verdict: unknown value " + verdict);
        r.verdict = *v;
        const auto& recJ = j.at("recommendation");
        const std::string rec = recJ.is_null() ? std::string("regular") : recJ.get<std::string>();
        if (rec != "fast" && rec != "regular") throw SelectionError("recommendation: expected fast or regular");
        if (recJ.is_null() && r.verdict == Verdict::Recommended)
            throw SelectionError("recommendation: null for a recommended verdict");
        r.recommendation = rec == "fast" ? Mode::Fast : Mode::Regular;
        r.decidedBy = j.at("decided_by").get<std::string>();
        r.headline = j.value("headline", std::string());
        r.ruleMargin = j.value("rule_margin", std::string());
        if (const auto& c = j.at("confidence"); !c.is_null()) r.confidence = c.get<double>();
        r.basis = j.value("basis", std::string());
        r.marginWithinNoise = j.at("margin_within_noise").get<bool>();
        r.dominance = j.value("dominance", std::string());
        if (j.contains("dominant") && !j.at("dominant").is_null())
            r.dominant = j.at("dominant").get<std::string>() == "fast" ? Mode::Fast : Mode::Regular;
        r.tieReasons = j.value("tie_reasons", std::vector<std::string>{});
        r.warnings = j.value("warnings", std::vector<std::string>{});
        const auto& n = j.at("noise");
        r.noise = {n.at("method").get<std::string>(), n.at("replicates").get<int64_t>(),
                   n.at("agreeing").get<int64_t>(),   n.at("seed").get<uint64_t>(),
                   n.at("score_margin").get<double>(), n.at("ci95_low").get<double>(),
                   n.at("ci95_high").get<double>()};
        for (const auto& t : j.at("trace"))
            r.trace.push_back({t.at("rule").get<std::string>(), t.at("fired").get<bool>(),
                               t.at("detail").get<std::string>()});
        r.conflicts = j.at("conflicts").get<std::vector<std::string>>();
        const auto& cost = j.at("cost");
        for (Mode m : {Mode::Fast, Mode::Regular})
            r.scores.push_back(scoreFromJson(m, j.at("scores").at(modeName(m)),
                                             cost.is_null() ? nlohmann::json() : cost.at(modeName(m))));
        if (!cost.is_null() && cost.contains("prices")) r.prices = parsePriceSheet(cost["prices"]);
        const auto& w = j.at("scores").at("weights");
        r.weights = {w.at("latency").get<double>(), w.at("cost").get<double>(), w.at("features").get<double>()};
        const auto& in = j.at("inputs");
        r.inputs = {in.at("source").get<std::string>(), in.at("prompt_file").get<std::string>(),
                    in.at("count").get<int64_t>(),       in.at("over_cap").get<int64_t>(),
                    in.at("longest").get<int64_t>(),     in.at("cap").get<int64_t>(),
                    in.at("share").get<double>(),        in.value("mean_tokens", 0.0),
                    in.value("profile_cap", in.at("cap").get<int64_t>()), in.value("model_context", int64_t{0})};
        r.monitoring = j.at("monitoring").get<std::vector<std::string>>();
        if (j.contains("capacity")) // absent in selections saved before capacity sweeps
            for (const auto& c : j.at("capacity")) r.capacity.push_back(modeCapacityFromJson(c));
        r.runIds = j.at("run_ids").get<std::vector<int64_t>>();
        return r;
    } catch (const nlohmann::json::exception& e) {
        throw SelectionError(std::string("not a selection result: ") + e.what());
    }
}

} // namespace mb::lab
