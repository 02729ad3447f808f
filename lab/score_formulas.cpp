// The appendix's formulas, with the selection's constants and its figures through them.
#include "lab/score_formulas.h"

#include "lab/selection_internal.h"

namespace mb::lab {

using namespace selection_detail;

namespace {

// "fast 0.866, regular 0.640" for one component of each candidate.
std::string perCandidate(const SelectionResult& r, double CandidateScore::*field) {
    std::string s;
    for (const auto& c : r.scores)
        s += (s.empty() ? "" : ", ") + std::string(modeName(c.mode)) + " " + num(c.*field, 3);
    return s;
}

std::string headroomApplied(const SelectionResult& r) {
    std::string s;
    for (const auto& c : r.scores)
        for (const auto& k : c.slo)
            s += (s.empty() ? "" : "; ") + std::string(modeName(c.mode)) + " " + boundText(k.key) +
                 " " + (k.measured ? ms(k.measuredMs) : std::string("not measured")) + " vs " +
                 ms(k.limitMs) + ": " + num(k.headroom, 3);
    return s;
}

std::string latencyApplied(const SelectionResult& r) {
    std::string s;
    for (const auto& c : r.scores) {
        double mean = 0;
        for (const auto& k : c.slo) mean += k.headroom;
        mean = c.slo.empty() ? 0.0 : mean / static_cast<double>(c.slo.size());
        s += (s.empty() ? "" : "; ") + std::string(modeName(c.mode)) + " " + num(c.okShare, 3) +
             " × " + num(mean, 3) + " = " + num(c.latency, 3);
    }
    return s;
}

std::string totalApplied(const SelectionResult& r) {
    const auto& w = r.weights;
    std::string s = "weights as used: latency " + num(w.latency, 2) + ", cost " + num(w.cost, 2) +
                    ", features " + num(w.features, 2);
    for (const auto& c : r.scores)
        s += "; " + std::string(modeName(c.mode)) + " " + num(w.latency, 2) + "·" +
             num(c.latency, 3) + " + " + num(w.cost, 2) + "·" + num(c.costScore, 3) + " + " +
             num(w.features, 2) + "·" + num(c.features, 3) + " − " + num(c.opsPenalty, 2) + " = " +
             num(c.total, 3);
    return s;
}

std::string confidenceApplied(const SelectionResult& r) {
    if (r.noise.replicates <= 0) return "no replicates recorded";
    std::string s = std::to_string(r.noise.agreeing) + " of " + std::to_string(r.noise.replicates) +
                    " " + (r.noise.method == "runs" ? "run" : "request") + " bootstraps (seed " +
                    std::to_string(r.noise.seed) + ") agree";
    s += r.confidence ? ": confidence " + num(*r.confidence, 3) : "; " + r.basis;
    return s;
}

std::string pricesApplied(const SelectionResult& r) {
    if (!r.prices) return "no price sheet: costs were not projected and the cost weight is 0";
    const PriceSheet& p = *r.prices;
    const std::string per = " " + p.currency + "/M";
    std::string s = "prices (" + p.currency + "): input " + num(p.input, 4) + per +
                    ", cached input " + num(p.cachedInput, 4) + per + ", output " +
                    num(p.output, 4) + per + ", accelerator hour " + grouped(p.acceleratorHour, 2) +
                    " " + p.currency + ", base fee " + grouped(p.baseFee, 2) + " " + p.currency +
                    " a month";
    for (const auto& t : p.tiers)
        s += "; tier above " + grouped(t.aboveTokens, 0) + " tokens: −" + pct(t.discount);
    if (!p.tiers.empty()) s += std::string(" (tiers_apply ") + tiersApplyName(p.tiersApply) + ")";
    for (const auto& c : r.scores)
        if (c.cost)
            s += "; " + std::string(modeName(c.mode)) + " total " + grouped(c.cost->total, 2) +
                 " " + c.cost->currency;
    return s;
}

} // namespace

std::vector<FormulaLine> scoreFormulas(const SelectionResult& r) {
    std::vector<FormulaLine> out;
    out.push_back({"rules, in order",
                   "feasibility: every SLO bound met and the inputs within each candidate's "
                   "effective context cap; "
                   "context: share of inputs longer than fast's cap > over_cap_tolerance → "
                   "regular; latency: smallest "
                   "TTFT limit < " +
                       ms(kLatencyRuleTtftMs) +
                       ", or only fast meets the TTFT bounds → fast; cost: "
                       "bills at least cost_materiality apart and cost weight > features weight → "
                       "the cheaper; "
                       "operations: low capability subtracts " +
                       num(kLowOpsPenalty, 2) + " from fast's total",
                   r.decidedBy.empty() ? std::string() : "decided by " + r.decidedBy});
    out.push_back({"latency headroom (per SLO bound b)",
                   "h_b = clamp(0.5 − ln(measured_b / limit_b) / (2·ln " + num(kHeadroomSpan, 0) +
                       "), 0, 1): 0.5 at the limit, 1 at 1/" + num(kHeadroomSpan, 0) +
                       " of it or better, 0 at " + num(kHeadroomSpan, 0) +
                       "× over; an unmeasured bound counts 0, a measured 0 counts 1",
                   headroomApplied(r)});
    out.push_back(
        {"latency score", "latency = ok_share × mean over the bounds of h_b", latencyApplied(r)});
    out.push_back(
        {"cost score",
         "cost = min(bill_fast, bill_regular) / own bill; 1 for both when the bills are less than "
         "cost_materiality apart, and 1 for a bill of 0",
         r.prices ? perCandidate(r, &CandidateScore::costScore) : "no price sheet"});
    out.push_back(
        {"features score",
         "features = needs_met × (requests − truncated − rejected) / requests; needs_met = stated "
         "needs "
         "(hot_updates, custom_batching) the profile supports / needs stated, 1 without needs",
         perCandidate(r, &CandidateScore::features)});
    out.push_back(
        {"total",
         "total = w_latency·latency + w_cost·cost + w_features·features − ops_penalty; the weights "
         "normalised "
         "to sum 1 over the components measured (w_cost 0 without a price sheet); ops_penalty " +
             num(kLowOpsPenalty, 2) + " on fast with low operations capability",
         totalApplied(r)});
    out.push_back({"tie (no clear winner)",
                   "the score decided and |total_fast − total_regular| < " + num(kTieMargin, 2) +
                       ", or the margin's 95% interval reaches 0, or (several runs) confidence < " +
                       num(kClearConfidence, 2) + "; unless one candidate dominates",
                   "margin " + num(r.noise.scoreMargin, 3) + ", 95% interval " +
                       num(r.noise.ci95Low, 3) + " to " + num(r.noise.ci95High, 3)});
    out.push_back({"dominance",
                   "better on p50 and p95 of TTFT, E2E, TPOT and ITL (those both measured) by "
                   "worse / better ≥ " +
                       num(kDominanceMinRatio, 2) +
                       " on the pooled requests, and (several runs) better on each in "
                       "every run",
                   r.dominance.empty() ? std::string("no candidate dominates") : r.dominance});
    out.push_back({"confidence",
                   "share of B bootstrap replicates that reach the same outcome: several runs "
                   "resample whole runs "
                   "with replacement; one run resamples its requests, which only flags a tie; "
                   "given only for a score "
                   "decision over two or more runs",
                   confidenceApplied(r)});
    out.push_back({"monthly cost",
                   "I = requests × input tokens per request; Ic = I × hit rate; Iu = I − Ic; O = "
                   "requests × output "
                   "tokens per request; list = (Iu·p_input + Ic·p_cached_input + O·p_output) / "
                   "1e6; tier discount on "
                   "the list price (above: per band of tokens over each threshold; whole: the "
                   "highest tier reached); "
                   "hardware = accelerator_hour × requests / measured requests per s / 3600; total "
                   "= base_fee + list "
                   "− discount + hardware; per million tokens = total / (I + O) × 1e6",
                   pricesApplied(r)});
    return out;
}

} // namespace mb::lab
