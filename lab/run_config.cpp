// RunConfig to and from the stored config JSON, reading the shapes older builds wrote too.
#include "lab/run_config.h"

#include <algorithm>
#include <climits>
#include <set>
#include <type_traits>

namespace mb::lab {

namespace {

using Json = nlohmann::json;
using OJson = nlohmann::ordered_json;

// Every key toJson writes or an older build wrote; anything else is kept in `extra`.
const std::set<std::string>& knownKeys() {
    static const std::set<std::string> k = {"source",
                                            "models",
                                            "model",
                                            "model_b",
                                            "profiles",
                                            "plugins",
                                            "mmproj",
                                            "sampling",
                                            "candidate_sampling",
                                            "arrival",
                                            "interleave",
                                            "slices",
                                            "threads",
                                            "device",
                                            "primers",
                                            "precision_check",
                                            "prompts",
                                            "max_tokens",
                                            "slo",
                                            "repeats",
                                            "replays_run",
                                            "prompt",
                                            "chat_turns",
                                            "concurrent"};
    return k;
}

OJson samplingJson(const engine::SamplerParams& s) {
    return {{"temperature", s.temperature},
            {"top_k", s.topK},
            {"top_p", s.topP},
            {"min_p", s.minP},
            {"repeat_penalty", s.repeatPenalty},
            {"repeat_last_n", s.repeatLastN},
            {"seed", s.seed}};
}

// Absent or mistyped fields keep the sampler's defaults.
std::optional<engine::SamplerParams> samplingFrom(const Json& j) {
    if (!j.is_object()) return std::nullopt;
    engine::SamplerParams s;
    auto num = [&](const char* key, auto& out) {
        if (const auto it = j.find(key); it != j.end() && it->is_number())
            out = it->get<std::remove_reference_t<decltype(out)>>();
    };
    num("temperature", s.temperature);
    num("top_k", s.topK);
    num("top_p", s.topP);
    num("min_p", s.minP);
    num("repeat_penalty", s.repeatPenalty);
    num("repeat_last_n", s.repeatLastN);
    if (const auto it = j.find("seed");
        it != j.end() &&
        (it->is_number_unsigned() || (it->is_number_integer() && it->get<int64_t>() >= 0)))
        s.seed = it->get<uint64_t>();
    return s;
}

// The workload parser reads the arrival object, so both spell it the same way.
std::optional<ArrivalSpec> arrivalFrom(const Json& j) {
    if (!j.is_object()) return std::nullopt;
    try {
        return parseWorkloadSpec(Json{{"arrival", j}}).arrival;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

OJson arrivalJson(const ArrivalSpec& a) {
    WorkloadSpec spec;
    spec.arrival = a;
    return toJson(spec)["arrival"];
}

std::string stringOr(const Json& j, const char* key, std::string fallback = {}) {
    const auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

template <class T> std::optional<T> integer(const Json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return std::nullopt;
    return static_cast<T>(it->get<int64_t>());
}

// An SLO bound: a positive number; null, negative or absent is unset (older builds wrote
// null from compare and -1 from the GUI).
std::optional<double> bound(const Json& slo, const char* key) {
    const auto it = slo.find(key);
    if (it == slo.end() || !it->is_number() || it->get<double>() < 0) return std::nullopt;
    return it->get<double>();
}

// Candidates from "models" {label: path} (this build, the GUI's older runs) or the CLI's
// older "model" / "model_b" (always a and b), with "profiles" {label: name}.
std::vector<RunConfig::Side> sidesFrom(const Json& j) {
    std::vector<RunConfig::Side> sides;
    const Json profiles =
        j.contains("profiles") && j["profiles"].is_object() ? j["profiles"] : Json::object();
    auto add = [&](const std::string& label, const std::string& model) {
        sides.push_back({label, model, stringOr(profiles, label.c_str()), std::nullopt, nullptr});
    };
    if (const auto it = j.find("models"); it != j.end() && it->is_object()) {
        for (const auto& [label, model] : it->items())
            add(label, model.is_string() ? model.get<std::string>() : "");
    } else if (j.contains("model") && j["model"].is_string()) {
        add("a", j["model"].get<std::string>());
        add("b", stringOr(j, "model_b", j["model"].get<std::string>()));
    }
    for (const auto& [label, name] : profiles.items()) // profiles without a model (none so far)
        if (std::none_of(sides.begin(), sides.end(),
                         [&](const auto& s) { return s.label == label; }))
            add(label, "");
    if (const auto it = j.find("candidate_sampling"); it != j.end() && it->is_object())
        for (auto& s : sides)
            if (it->contains(s.label)) s.sampling = samplingFrom((*it)[s.label]);
    if (const auto it = j.find("plugins"); it != j.end() && it->is_object())
        for (auto& s : sides)
            if (it->contains(s.label) && (*it)[s.label].is_object()) s.plugins = (*it)[s.label];
    if (const auto it = j.find("mmproj"); it != j.end() && it->is_object())
        for (auto& s : sides)
            if (it->contains(s.label) && (*it)[s.label].is_string()) s.mmproj = (*it)[s.label].get<std::string>();
    return sides;
}

} // namespace

const RunConfig::Side* RunConfig::side(const std::string& label) const {
    for (const Side& s : candidates)
        if (s.label == label) return &s;
    return nullptr;
}

Slo RunConfig::slo() const {
    Slo s;
    s.ttftMs = sloTtftMs.value_or(-1);
    s.e2eMs = sloE2eMs.value_or(-1);
    s.tpotMs = sloTpotMs.value_or(-1);
    return s;
}

void RunConfig::setSlo(const Slo& s) {
    auto set = [](double v) { return v >= 0 ? std::optional<double>(v) : std::nullopt; };
    sloTtftMs = set(s.ttftMs);
    sloE2eMs = set(s.e2eMs);
    sloTpotMs = set(s.tpotMs);
}

OJson toJson(const RunConfig& c) {
    OJson j;
    if (!c.source.empty()) j["source"] = c.source;
    OJson models = OJson::object(), profiles = OJson::object(), own = OJson::object(), chains = OJson::object(),
          vision = OJson::object();
    const OJson runSampling = c.sampling ? samplingJson(*c.sampling) : OJson();
    for (const auto& s : c.candidates) {
        models[s.label] = s.model;
        profiles[s.label] = s.profile;
        // Only a side whose sampling differs from the run's: the common case stays one object.
        if (s.sampling && samplingJson(*s.sampling) != runSampling)
            own[s.label] = samplingJson(*s.sampling);
        if (s.plugins.is_object()) chains[s.label] = s.plugins;
        if (!s.mmproj.empty()) vision[s.label] = s.mmproj;
    }
    j["models"] = std::move(models);
    j["profiles"] = std::move(profiles);
    if (!chains.empty()) j["plugins"] = std::move(chains);
    if (!vision.empty()) j["mmproj"] = std::move(vision);
    if (c.sampling) j["sampling"] = samplingJson(*c.sampling);
    if (!own.empty()) j["candidate_sampling"] = std::move(own);
    if (c.arrival) j["arrival"] = arrivalJson(*c.arrival);
    j["interleave"] = c.interleave;
    if (c.slices > 0) j["slices"] = c.slices;
    j["threads"] = c.threads;
    if (!c.device.empty()) j["device"] = c.device;
    j["primers"] = c.primers;
    j["precision_check"] = {{"prompts", c.precisionPrompts}, {"gen_tokens", c.precisionGenTokens}};
    j["prompts"] = c.promptFile;
    if (c.maxTokens) j["max_tokens"] = *c.maxTokens;
    OJson slo = OJson::object();
    if (c.sloTtftMs) slo["ttft_ms"] = *c.sloTtftMs;
    if (c.sloE2eMs) slo["e2e_ms"] = *c.sloE2eMs;
    if (c.sloTpotMs) slo["tpot_ms"] = *c.sloTpotMs;
    j["slo"] = std::move(slo);
    if (c.repeats > 1) j["repeats"] = c.repeats;
    if (c.replaysRun) j["replays_run"] = *c.replaysRun;
    if (c.sweep) j["sweep"] = toJson(*c.sweep);
    if (c.playground) {
        j["prompt"] = c.playground->prompt;
        j["chat_turns"] = c.playground->chatTurns;
        j["concurrent"] = c.playground->concurrent;
    }
    if (c.extra.is_object())
        for (const auto& [key, value] : c.extra.items())
            if (!j.contains(key)) j[key] = value;
    return j;
}

RunConfig runConfigFromJson(const Json& j) {
    RunConfig c;
    if (!j.is_object()) return c;
    c.source = stringOr(j, "source");
    c.candidates = sidesFrom(j);
    if (j.contains("sampling")) c.sampling = samplingFrom(j["sampling"]);
    if (j.contains("arrival")) c.arrival = arrivalFrom(j["arrival"]);
    if (const auto it = j.find("interleave"); it != j.end() && it->is_boolean())
        c.interleave = it->get<bool>();
    c.slices = std::max<int32_t>(0, integer<int32_t>(j, "slices").value_or(0));
    c.threads = std::max<int32_t>(1, integer<int32_t>(j, "threads").value_or(1));
    c.device = stringOr(j, "device");
    c.primers = std::max<int64_t>(0, integer<int64_t>(j, "primers").value_or(0));
    if (const auto it = j.find("precision_check"); it != j.end() && it->is_object()) {
        c.precisionPrompts = std::max<int64_t>(0, integer<int64_t>(*it, "prompts").value_or(0));
        c.precisionGenTokens = integer<int64_t>(*it, "gen_tokens").value_or(c.precisionGenTokens);
    }
    c.promptFile = stringOr(j, "prompts");
    if (const auto m = integer<int64_t>(j, "max_tokens"); m && *m > 0 && *m <= INT32_MAX)
        c.maxTokens = static_cast<int32_t>(*m);
    if (const auto it = j.find("slo"); it != j.end() && it->is_object()) {
        c.sloTtftMs = bound(*it, "ttft_ms");
        c.sloE2eMs = bound(*it, "e2e_ms");
        c.sloTpotMs = bound(*it, "tpot_ms");
    }
    c.repeats = std::max<int32_t>(1, integer<int32_t>(j, "repeats").value_or(1));
    c.replaysRun = integer<int64_t>(j, "replays_run");
    if (j.contains("prompt") || j.contains("chat_turns") || j.contains("concurrent")) {
        RunConfig::Playground p;
        p.prompt = stringOr(j, "prompt");
        p.chatTurns = integer<int64_t>(j, "chat_turns").value_or(0);
        if (const auto it = j.find("concurrent"); it != j.end() && it->is_boolean())
            p.concurrent = it->get<bool>();
        c.playground = p;
    }
    for (const auto& [key, value] : j.items())
        if (!knownKeys().count(key)) c.extra[key] = value;
    if (c.extra.contains("sweep")) { // a tag that reads is typed; a malformed one stays as it was
        std::string why;
        c.sweep = sweepTagFromJson(c.extra["sweep"], why);
        if (c.sweep) c.extra.erase("sweep");
    }
    return c;
}

RunConfig runConfigFromText(const std::string& configJson) {
    if (configJson.empty()) return {};
    try {
        return runConfigFromJson(Json::parse(configJson));
    } catch (const Json::exception&) {
        return {};
    }
}

} // namespace mb::lab
