// What the selection's parts share: the two modes, the error they throw, one SLO bound checked.
#pragma once

#include <stdexcept>
#include <string>

namespace mb::lab {

enum class Mode { Fast, Regular };
const char* modeName(Mode m); // "fast", "regular"

// Runs that cannot be compared (no fast or no regular candidate, no stored requests, a
// prompt file that cannot be read). One line.
class SelectionError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct SloCheck {
    std::string key; // "ttft_ms.p95"
    double limitMs = 0;
    double measuredMs = 0; // the statistic over the candidate's Ok requests
    bool met = false;
    bool measured = true; // false when no Ok request defines the metric (measuredMs is then 0)
    double headroom = 0;  // the bound's latency score in [0, 1] (docs/SELECTION.md)
};

} // namespace mb::lab
