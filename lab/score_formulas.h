// The selection's formulas as the report's appendix: each term, its formula, and what it gave in
// one selection.
//
// The one place the report (every format) spells the formulas; the constants come from
// lab/selection.h and the cost formula is lab/cost_model.h's. docs/SELECTION.md ("Score"
// and "Cost") has the same formulas with their reasons.
#pragma once

#include "lab/selection.h"

#include <string>
#include <vector>

namespace mb::lab {

struct FormulaLine {
    std::string term;    // "latency headroom (per SLO bound)"
    std::string formula; // with the constants written in
    std::string applied; // the selection's figures through it ("" when it has none)
};

// Rules, latency headroom, latency, cost and features scores, total with the weights as used,
// tie, dominance, confidence and the monthly cost, in that order.
std::vector<FormulaLine> scoreFormulas(const SelectionResult& r);

} // namespace mb::lab
