// The executive summary of a selection: the verdict, its confidence, the numbers that decided, what
// would change it.
//
// A pure function of a SelectionResult (also one read back from a stored selection), so the
// report (every format) and the GUI's Selection page show the same sentences. Every figure is
// read from the result; nothing is hard-coded but the selection's own thresholds
// (lab/selection.h). docs/SELECTION.md, "Executive summary", says which numbers each kind
// of decision quotes.
#pragma once

#include "lab/selection.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace mb::lab {

// One figure the decision rests on: "fast TTFT p95" "68.5 ms" against "≤ 2,000 ms (the SLO)".
struct DecidingNumber {
    std::string label;   // what was measured or stated, naming the candidate
    std::string value;   // with its unit (ms, tokens, the price sheet's currency, a share)
    std::string against; // the threshold or the rival it is compared with, with its unit

    std::string text() const; // "label value vs against"
};

struct ExecutiveSummary {
    Verdict verdict = Verdict::Recommended;
    std::optional<Mode> recommendation; // only with Verdict::Recommended
    std::string verdictLine; // "Recommendation: deploy fast mode, decided by the latency rule."
    std::optional<double> confidence;    // SelectionResult::confidence
    std::string confidenceLine;          // the figure (or its absence) with its basis, one sentence
    std::vector<DecidingNumber> numbers; // at most kMaxDecidingNumbers, the deciding rule's first
    std::vector<std::string>
        wouldChange; // sentences, each a measurement or requirement that would turn it
};

inline constexpr size_t kMaxDecidingNumbers = 3;

// Never throws on a result with missing parts (no scores, no trace): it says less.
ExecutiveSummary executiveSummary(const SelectionResult& r);

// {"verdict", "recommendation" (null unless recommended), "verdict_line", "confidence" (null
//  when none), "confidence_line", "numbers": [{"label", "value", "against"}], "would_change"}
nlohmann::ordered_json toJson(const ExecutiveSummary& s);

} // namespace mb::lab
