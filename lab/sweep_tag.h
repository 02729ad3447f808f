// A run's place in a load sweep (lab/sweep.h writes it, lab/capacity.h reads it): kind, level, index.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace mb::lab {

enum class SweepKind { Rates, Concurrency };
const char* sweepKindName(SweepKind k); // "rates", "concurrency"
std::optional<SweepKind> sweepKindFromName(const std::string& name);

struct SweepTag {
    SweepKind kind = SweepKind::Concurrency;
    double level = 0;   // rates: offered requests/s; concurrency: requests in flight
    int index = 0;      // 0-based position in the sweep
    bool probe = false; // a rates sweep's closed-loop concurrency-1 probe (its load: what it served)
};

// {"kind", "index", "level" (null for a probe), "probe" (only when true)}.
nlohmann::ordered_json toJson(const SweepTag& t);
// toJson's output back; nullopt with `why` set ("sweep.kind is neither rates nor concurrency")
// for a malformed tag.
std::optional<SweepTag> sweepTagFromJson(const nlohmann::json& j, std::string& why);

} // namespace mb::lab
