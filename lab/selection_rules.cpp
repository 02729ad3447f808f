// One decision: feasibility, then the four rules of PRODUCT.md §6 in order, then the weighted score.
#include "lab/selection_internal.h"

#include <algorithm>
#include <cmath>

namespace mb::lab::selection_detail {

namespace {

std::string sloText(const CandidateScore& c, SloMetric only, bool onlyThat) {
    std::string s;
    for (const auto& k : c.slo) {
        if (onlyThat && k.key.rfind(sloMetricName(only), 0) != 0) continue;
        s += (s.empty() ? "" : ", ") + k.key;
        if (!k.measured) // no statistic to compare: say why instead of a 0.0 ms
            s += c.okShare == 0 ? " not measured (no successful requests, limit " + num(k.limitMs, 0) + ")"
                                : " not measured (no successful request defines it, limit " + num(k.limitMs, 0) + ")";
        else
            s.append(" ").append(num(k.measuredMs, 1)).append(k.met ? " ms <= " : " ms > ").append(num(k.limitMs, 0));
    }
    return s;
}

bool meets(const CandidateScore& c, SloMetric metric) {
    bool any = false, all = true;
    for (const auto& k : c.slo)
        if (k.key.rfind(sloMetricName(metric), 0) == 0) {
            any = true;
            all = all && k.met;
        }
    return any && all;
}

std::string joined(const std::vector<std::string>& parts, const char* sep) {
    std::string s;
    for (const auto& p : parts) s += (s.empty() ? "" : sep) + p;
    return s;
}

std::string feasibilityText(const CandidateScore& c) {
    if (!c.feasible) return joined(c.gaps, "; ");
    std::string s = std::string(modeName(c.mode)) + " meets every bound (";
    for (size_t i = 0; i < c.slo.size(); ++i)
        s += (i ? ", " : "") + boundText(c.slo[i].key) + " " + measuredText(c, c.slo[i]) + " vs " + ms(c.slo[i].limitMs);
    return s + ") and takes " + std::to_string(c.inputs - c.inputsOverCap) + " of " + std::to_string(c.inputs) +
           " inputs within its cap of " + grouped(static_cast<double>(c.contextCap), 0) + " tokens";
}

// Not a rule of its own: the precisions and the quality figures beside the floor. It fires when
// a candidate misses the floor (feasibility then excludes it).
TraceEntry qualityEntry(const Requirements& req, const CandidateScore& fast, const CandidateScore& regular) {
    std::string detail;
    const bool fired = !meetsQualityFloor(fast, req) || !meetsQualityFloor(regular, req);
    for (const CandidateScore* c : {&fast, &regular})
        detail += (detail.empty() ? "" : "; ") + std::string(modeName(c->mode)) + " runs " + c->precision + ": " +
                  (c->quality ? qualityText(*c->quality) : std::string("no precision A/B measured"));
    if (req.quality.any()) {
        detail += "; floor:";
        if (req.quality.minAgreement) detail += " agreement ≥ " + num(*req.quality.minAgreement, 3);
        if (req.quality.maxMeanKl) detail += " mean KL ≤ " + num(*req.quality.maxMeanKl, 4);
        if (req.quality.maxPerplexityRatio) detail += " perplexity ratio ≤ " + num(*req.quality.maxPerplexityRatio, 3);
        detail += fired ? " (missed: see feasibility)" : " (met by both)";
    } else {
        detail += "; no quality floor stated";
    }
    if (fast.precision != regular.precision)
        detail += "; the candidates differ in precision as well as in serving knobs, so the latency and cost "
                  "differences include the precision: to judge the serving knobs alone, compare a fast profile at "
                  "regular's precision ({\"base\": \"fast\", \"precision\": \"" + regular.precision +
                  "\"}) against regular";
    return {"quality", fired, detail + "."};
}

TraceEntry contextRule(const Requirements& req, const InputLengths& in, bool fires) {
    std::string detail = std::to_string(in.overCap) + " of " + std::to_string(in.count) + " inputs (" + pct(in.share) +
                         ", from " + (in.source == "prompt_file" ? in.promptFile : std::string("the runs' prompts")) +
                         ", longest " + std::to_string(in.longest) + " tokens) are longer than the fast-mode cap of " +
                         std::to_string(in.cap) + " tokens";
    if (in.modelContext > 0)
        detail += " (min of profile max_context " + std::to_string(in.profileCap) + " and model context " +
                  std::to_string(in.modelContext) + " − 1)";
    detail += "; tolerance " + pct(req.inputs.overCapTolerance);
    if (req.inputs.maxTokens)
        detail += "; stated max_tokens " + std::to_string(*req.inputs.maxTokens) +
                  (*req.inputs.maxTokens > in.cap ? " is over the cap" : " is within the cap");
    detail += fires ? ": regular mode required." : ": fast mode can take every input.";
    return {"context", fires, detail};
}

// Rule 2's trace entry (without its final full stop) and the margin it reports when it decides.
TraceEntry latencyRule(const Requirements& req, const CandidateScore& fast, const CandidateScore& regular,
                       std::string& margin) {
    const auto minTtft = req.minTtftLimitMs();
    const bool strict = minTtft && *minTtft < kLatencyRuleTtftMs;
    const bool onlyFast = meets(fast, SloMetric::TtftMs) && !meets(regular, SloMetric::TtftMs);
    const bool fires = strict || onlyFast;
    std::string detail;
    if (!minTtft) detail = "no TTFT requirement";
    else {
        detail = "TTFT requirement " + num(*minTtft, 0) + " ms is " + (strict ? "under " : "not under ") +
                 num(kLatencyRuleTtftMs, 0) + " ms; measured fast " + sloText(fast, SloMetric::TtftMs, true) +
                 "; regular " + sloText(regular, SloMetric::TtftMs, true) + (onlyFast ? " (only fast meets it)" : "");
        margin = strict ? "TTFT requirement " + ms(*minTtft) + " < " + ms(kLatencyRuleTtftMs) : "only fast meets it";
        for (const auto& k : fast.slo)
            if (k.key.rfind(sloMetricName(SloMetric::TtftMs), 0) == 0)
                margin += "; fast " + boundText(k.key) + " " + measuredText(fast, k) + " vs ≤ " + ms(k.limitMs);
    }
    detail += fires ? ": fast mode required" : ": no mode required";
    for (const CandidateScore* c : {&fast, &regular})
        if (const std::string caveat = dataCaveat(*c); !caveat.empty()) detail += "; caution: " + caveat;
    return {"latency", fires, detail};
}

// The cost rule's trace entry; sets both cost scores. Returns the cheaper mode when cost may decide.
std::optional<Mode> costRule(const Requirements& req, CandidateScore& fast, CandidateScore& regular,
                             TraceEntry& entry, std::string& margin) {
    entry = {"cost", false, ""};
    const double cf = fast.cost->total, cr = regular.cost->total;
    const std::string cur = " " + fast.cost->currency;
    const double hi = std::max(cf, cr), lo = std::min(cf, cr);
    const double apart = hi > 0 ? (hi - lo) / hi : 0.0;
    const bool material = apart >= req.costMateriality && hi > lo;
    // An immaterial difference is no difference for the score either.
    fast.costScore = !material || cf <= 0 ? 1.0 : lo / cf;
    regular.costScore = !material || cr <= 0 ? 1.0 : lo / cr;
    const std::string volume = req.monthly.requests
                                   ? grouped(*req.monthly.requests, 0) + " requests a month (stated)"
                                   : std::to_string(fast.requests) + " requests (the runs' own; monthly.requests not stated)";
    std::string reference;
    if (fast.costNoHits && fast.costAllHits)
        reference = "; for reference, at 0% cache hits " + grouped(fast.costNoHits->total, 2) + cur + " and at 100% " +
                    grouped(fast.costAllHits->total, 2) + cur;
    entry.detail = "the same month's traffic (" + volume + ", " + grouped(fast.cost->inputTokens, 0) +
                   " input tokens at full length" + reference + ") costs fast " + grouped(cf, 2) + cur +
                   " (hit rate " + pct(fast.hitRate) + "), regular " + grouped(cr, 2) + cur + " (hit rate " +
                   pct(regular.hitRate) + "): " + pct(apart) + " apart, materiality threshold " +
                   pct(req.costMateriality);
    if (!material) {
        entry.detail += ": under the threshold, cost cannot decide";
        return std::nullopt;
    }
    if (req.weights.cost <= req.weights.features) {
        entry.detail += "; cost weight " + num(req.weights.cost, 2) + " does not exceed features weight " +
                        num(req.weights.features, 2);
        return std::nullopt;
    }
    entry.fired = true;
    // The cheaper of the candidates that meet every SLO (of both when neither does).
    Mode cheaper = cf < cr ? Mode::Fast : Mode::Regular;
    if (fast.meetsSlo != regular.meetsSlo) cheaper = fast.meetsSlo ? Mode::Fast : Mode::Regular;
    entry.detail += "; cost weight " + num(req.weights.cost, 2) + " > features weight " + num(req.weights.features, 2) +
                    ": prefer " + modeName(cheaper) +
                    (fast.meetsSlo != regular.meetsSlo ? " (the only one meeting every SLO)" : "");
    margin = "monthly bills fast " + grouped(cf, 2) + " vs regular " + grouped(cr, 2) + cur + ", " + pct(apart) +
             " apart vs the " + pct(req.costMateriality) + " materiality threshold";
    return cheaper;
}

// What a fast deployment must watch, by the team's operations capability: low gets three
// alerts that each act by rolling back over a sustained window; medium every bound with its
// p99 and the KV memory; high adds the queue depth to scale on.
std::vector<std::string> monitoringPlan(OpsCapability ops, const CandidateScore& fast, uint64_t kvPeakFast) {
    const double floor = kHitRateFloorShare * fast.hitRate;
    std::vector<std::string> plan;
    if (ops == OpsCapability::Low) {
        plan.push_back("roll back to regular when the prefix hit rate stays below " + num(floor, 3) +
                       " for 10 minutes (measured " + num(fast.hitRate, 3) + ")");
        const SloCheck* tightest = nullptr;
        for (const auto& k : fast.slo)
            if (!tightest || (k.measured && k.limitMs > 0 && tightest->limitMs > 0 &&
                              k.measuredMs / k.limitMs > tightest->measuredMs / tightest->limitMs))
                tightest = &k;
        if (tightest)
            plan.push_back("roll back to regular when " + tightest->key + " stays above " + num(tightest->limitMs, 0) +
                           " ms for 10 minutes (measured " + num(tightest->measuredMs, 1) +
                           " ms, the bound with the least headroom)");
        plan.push_back("roll back to regular when more than 1% of requests fail or are rejected for 10 minutes");
        return plan;
    }
    plan.push_back("prefix hit rate >= " + num(floor, 3) + " (measured " + num(fast.hitRate, 3) + ")");
    for (const auto& k : fast.slo)
        plan.push_back(k.key + " <= " + num(k.limitMs, 0) + " ms (measured " + num(k.measuredMs, 1) +
                       " ms), with p99 of " + k.key.substr(0, k.key.find('.')) + " alerted");
    plan.push_back("KV cache memory (peak " + num(double(kvPeakFast) / 1048576.0, 1) + " MiB)");
    if (ops == OpsCapability::High)
        plan.push_back("queue depth (modebench_requests_waiting) and KV use (modebench_kv_cache_usage_ratio), the signals to scale replicas out and in");
    return plan;
}

TraceEntry operationsRule(const Requirements& req, CandidateScore& fast, uint64_t kvPeakFast,
                          std::vector<std::string>& monitoring) {
    monitoring = monitoringPlan(req.opsCapability, fast, kvPeakFast);
    const bool fires = req.opsCapability == OpsCapability::Low;
    fast.opsPenalty = fires ? kLowOpsPenalty : 0.0;
    return {"operations", fires,
            std::string("operations capability ") + opsCapabilityName(req.opsCapability) +
                (fires ? ": fast mode's score reduced by " + num(kLowOpsPenalty, 2) +
                             "; a simpler plan of three alerts, each rolling back to regular: "
                       : ": no penalty; fast mode is monitored on: ") +
                joined(monitoring, "; ")};
}

// The operations entry's last sentence: what the penalty did to the decision.
void penaltyEffect(TraceEntry& ops, const Decision& d, const CandidateScore& fast, const CandidateScore& regular) {
    if (fast.opsPenalty <= 0) {
        ops.detail += ".";
        return;
    }
    const double before = fast.total + fast.opsPenalty;
    const std::string totals = " (fast " + num(fast.total, 3) + " after the penalty, " + num(before, 3) +
                               " before; regular " + num(regular.total, 3) + ")";
    if (d.verdict == Verdict::NoneFeasible)
        ops.detail += "; no candidate is feasible, so the penalty changes the scores only" + totals + ".";
    else if (d.decidedBy != "score")
        ops.detail += "; overridden: the " + d.decidedBy + " rule decided, so the penalty changes the scores only" +
                      totals + ".";
    else if (before > regular.total + kTieMargin && fast.total <= regular.total)
        ops.detail += "; the penalty turned the score decision from fast to regular" + totals + ".";
    else if (std::fabs(before - regular.total) <= kTieMargin && fast.total < regular.total)
        ops.detail += "; without it the scores would tie: the penalty decides for regular" + totals + ".";
    else
        ops.detail += "; the score decision is the same with or without it" + totals + ".";
}

} // namespace

Decision decide(const Requirements& req, bool havePrices, const InputLengths& in, CandidateScore& fast,
                CandidateScore& regular, uint64_t kvPeakFast) {
    Decision d;
    std::optional<Mode> decided;
    auto take = [&](Mode m, const char* by, std::string margin) {
        if (decided || d.verdict == Verdict::NoneFeasible) return false;
        decided = m;
        d.mode = m;
        d.decidedBy = by;
        d.ruleMargin = std::move(margin);
        return true;
    };

    // 0. Feasibility: every SLO bound and the effective context cap, before any ranking.
    const bool both = fast.feasible && regular.feasible;
    d.trace.push_back({"feasibility", !both, feasibilityText(fast) + "; " + feasibilityText(regular) + "."});
    d.trace.push_back(qualityEntry(req, fast, regular));
    if (!fast.feasible && !regular.feasible) {
        d.verdict = Verdict::NoneFeasible;
        d.decidedBy = "feasibility";
        std::vector<std::string> gaps = fast.gaps;
        gaps.insert(gaps.end(), regular.gaps.begin(), regular.gaps.end());
        d.ruleMargin = joined(gaps, "; ");
    }

    // 1. Context: fast's inputs over its effective cap.
    const bool contextFires = inputsOverTolerance(in.overCap, in.count, in.cap, req);
    d.trace.push_back(contextRule(req, in, contextFires));
    if (contextFires)
        take(Mode::Regular, "context",
             std::to_string(in.overCap) + " of " + std::to_string(in.count) + " inputs (" + pct(in.share) +
                 ") longer than fast's cap of " + grouped(static_cast<double>(in.cap), 0) + " tokens" +
                 (in.modelContext > 0 ? " (min of profile max_context " + grouped(static_cast<double>(in.profileCap), 0) +
                                            " and model context " + grouped(static_cast<double>(in.modelContext), 0) +
                                            " − 1)"
                                      : std::string()) +
                 " vs tolerance " + pct(req.inputs.overCapTolerance));
    if (fast.feasible != regular.feasible) {
        const CandidateScore& out = fast.feasible ? regular : fast;
        take(fast.feasible ? Mode::Fast : Mode::Regular, "feasibility", joined(out.gaps, "; "));
    }

    // 2. Latency.
    {
        std::string margin;
        TraceEntry entry = latencyRule(req, fast, regular, margin);
        // Fast infeasible means feasibility already decided (regular, or none feasible).
        if (entry.fired && !take(Mode::Fast, "latency", margin)) {
            if (d.verdict == Verdict::NoneFeasible) {
                entry.detail += " (overridden: fast mode is not feasible)";
            } else if (d.mode == Mode::Fast) {
                entry.detail += " (the " + d.decidedBy + " rule already chose fast mode)";
            } else {
                entry.detail += " (overridden: the " + d.decidedBy + " rule requires regular mode)";
                if (d.decidedBy == "context")
                    d.conflicts.push_back("latency requires fast mode but context requires regular mode; context wins");
            }
        }
        entry.detail += ".";
        d.trace.push_back(entry);
    }

    // Weights, normalised over the components that can be measured.
    const double wl = req.weights.latency, wc = havePrices ? req.weights.cost : 0.0, wf = req.weights.features;
    const double sum = wl + wc + wf > 0 ? wl + wc + wf : 1.0;
    d.weights = {wl / sum, wc / sum, wf / sum};

    // 3. Cost.
    if (!havePrices) {
        d.trace.push_back({"cost", false, "no price sheet: cost not measured."});
    } else {
        TraceEntry entry;
        std::string margin;
        if (const auto cheaper = costRule(req, fast, regular, entry, margin))
            if (!take(*cheaper, "cost", margin))
                entry.detail += " (not deciding: " +
                                (d.verdict == Verdict::NoneFeasible ? std::string("no candidate is feasible")
                                                                    : "the " + d.decidedBy + " rule decided") +
                                ")";
        entry.detail += ".";
        d.trace.push_back(entry);
    }

    // 4. Operations.
    d.trace.push_back(operationsRule(req, fast, kvPeakFast, d.monitoring));

    for (CandidateScore* c : {&fast, &regular})
        c->total = d.weights.latency * c->latency + d.weights.cost * c->costScore +
                   d.weights.features * c->features - c->opsPenalty;
    // Equal scores keep regular mode: the default that needs no migration (select() calls it a tie).
    const Mode better = fast.total > regular.total ? Mode::Fast : Mode::Regular;
    const CandidateScore& w = better == Mode::Fast ? fast : regular;
    const CandidateScore& l = better == Mode::Fast ? regular : fast;
    take(better, "score",
         std::string(modeName(w.mode)) + " " + num(w.total, 3) + " vs " + modeName(l.mode) + " " + num(l.total, 3) +
             " (margin " + num(w.total - l.total, 3) + ")");
    d.mode = decided.value_or(Mode::Regular);
    penaltyEffect(d.trace.back(), d, fast, regular);
    return d;
}

} // namespace mb::lab::selection_detail
