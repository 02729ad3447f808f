// The sweep tag's names and JSON.
#include "lab/sweep_tag.h"

namespace mb::lab {

const char* sweepKindName(SweepKind k) { return k == SweepKind::Rates ? "rates" : "concurrency"; }

std::optional<SweepKind> sweepKindFromName(const std::string& name) {
    if (name == "rates") return SweepKind::Rates;
    if (name == "concurrency") return SweepKind::Concurrency;
    return std::nullopt;
}

nlohmann::ordered_json toJson(const SweepTag& t) {
    nlohmann::ordered_json j{{"kind", sweepKindName(t.kind)}, {"index", t.index}};
    j["level"] = t.probe ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(t.level);
    if (t.probe) j["probe"] = true;
    return j;
}

std::optional<SweepTag> sweepTagFromJson(const nlohmann::json& j, std::string& why) {
    if (!j.is_object()) {
        why = "sweep: expected an object";
        return std::nullopt;
    }
    const auto kind = sweepKindFromName(j.value("kind", std::string()));
    if (!kind) {
        why = "sweep.kind is neither rates nor concurrency";
        return std::nullopt;
    }
    SweepTag t;
    t.kind = *kind;
    t.level = j.contains("level") && j["level"].is_number() ? j["level"].get<double>() : 0.0;
    t.index = j.contains("index") && j["index"].is_number_integer() ? j["index"].get<int>() : 0;
    t.probe = j.contains("probe") && j["probe"].is_boolean() && j["probe"].get<bool>();
    if (!t.probe && !(t.level > 0)) {
        why = "sweep.level must be a positive number";
        return std::nullopt;
    }
    return t;
}

} // namespace mb::lab
