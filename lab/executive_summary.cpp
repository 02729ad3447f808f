// The executive summary: verdict, confidence, the deciding numbers and what would change them, from
// a SelectionResult.
#include "lab/executive_summary.h"

#include "lab/selection_internal.h"

#include <algorithm>
#include <cctype>
#include <cmath>

namespace mb::lab {

using namespace selection_detail;

namespace {

const CandidateScore* scoreOf(const SelectionResult& r, Mode m) {
    for (const auto& s : r.scores)
        if (s.mode == m) return &s;
    return nullptr;
}

Mode other(Mode m) {
    return m == Mode::Fast ? Mode::Regular : Mode::Fast;
}

// A clause as a sentence: capital first letter, one full stop.
std::string sentence(std::string s) {
    if (s.empty()) return s;
    s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
    if (s.back() != '.') s += '.';
    return s;
}

// Cents, or as many places as a bill under one unit needs to show two significant digits.
std::string money(double v, const std::string& currency) {
    const int places = v != 0 && std::fabs(v) < 1
                           ? std::min(8, 1 + static_cast<int>(std::ceil(-std::log10(std::fabs(v)))))
                           : 2;
    return grouped(v, std::max(2, places)) + " " + currency;
}

double ratio(const SloCheck& k) {
    return k.limitMs > 0 ? k.measuredMs / k.limitMs : 0.0;
}

bool isTtft(const SloCheck& k) {
    return k.key.rfind(sloMetricName(SloMetric::TtftMs), 0) == 0;
}

// The measured bound closest to (or furthest over) its limit; nullptr without one.
const SloCheck* tightest(const CandidateScore& c, bool ttftOnly = false) {
    const SloCheck* best = nullptr;
    for (const auto& k : c.slo)
        if (k.measured && k.limitMs > 0 && (!ttftOnly || isTtft(k)) &&
            (!best || ratio(k) > ratio(*best)))
            best = &k;
    return best;
}

const SloCheck* checkOf(const CandidateScore& c, const std::string& key) {
    for (const auto& k : c.slo)
        if (k.key == key) return &k;
    return nullptr;
}

// "fast TTFT p95" "380 ms" vs "≤ 2,000 ms (5.3× under)".
DecidingNumber sloNumber(const CandidateScore& c, const SloCheck& k) {
    DecidingNumber n{std::string(modeName(c.mode)) + " " + boundText(k.key), "not measured",
                     "≤ " + ms(k.limitMs)};
    if (!k.measured) return n;
    n.value = measuredText(c, k);
    if (k.measuredMs > 0 && k.limitMs > 0)
        n.against += k.met ? " (" + ratioText(k.limitMs / k.measuredMs) + " under)"
                           : " (" + ratioText(ratio(k)) + " over)";
    return n;
}

// The bill of `first` against the other's, with the currency and how far apart they are.
std::optional<DecidingNumber> costNumber(const SelectionResult& r, Mode first) {
    const CandidateScore *a = scoreOf(r, first), *b = scoreOf(r, other(first));
    if (!a || !b || !a->cost || !b->cost) return std::nullopt;
    const double hi = std::max(a->cost->total, b->cost->total),
                 lo = std::min(a->cost->total, b->cost->total);
    return DecidingNumber{
        std::string(modeName(first)) + " monthly bill", money(a->cost->total, a->cost->currency),
        std::string(modeName(other(first))) + " " + money(b->cost->total, b->cost->currency) +
            " (" + pct(hi > 0 ? (hi - lo) / hi : 0.0) + " apart)"};
}

DecidingNumber scoreMarginNumber(const SelectionResult& r) {
    DecidingNumber n{"weighted score margin", num(std::fabs(r.noise.scoreMargin), 3),
                     "the " + num(kTieMargin, 2) + " tie margin"};
    if (r.noise.replicates > 0)
        n.against += " (95% interval " + num(r.noise.ci95Low, 3) + " to " +
                     num(r.noise.ci95High, 3) + " over " + std::to_string(r.noise.replicates) +
                     " " + (r.noise.method == "runs" ? "run" : "request") + " bootstraps)";
    return n;
}

// The component that contributes most to `w`'s lead over `l`: {name, weight, w's, l's}.
struct Lead {
    const char* name = "";
    double weight = 0, winner = 0, loser = 0;
    double contribution() const { return weight * (winner - loser); }
};
Lead largestLead(const SelectionResult& r, const CandidateScore& w, const CandidateScore& l) {
    const Lead leads[] = {{"latency", r.weights.latency, w.latency, l.latency},
                          {"cost", r.weights.cost, w.costScore, l.costScore},
                          {"features", r.weights.features, w.features, l.features}};
    return *std::max_element(std::begin(leads), std::end(leads), [](const Lead& a, const Lead& b) {
        return a.contribution() < b.contribution();
    });
}

// The loser's worst gap as a number: its most-missed bound, else its context overflow.
std::optional<DecidingNumber> gapNumber(const CandidateScore& c) {
    const SloCheck* worst = nullptr;
    for (const auto& k : c.slo)
        if (!k.met && (!worst || (k.measured && (!worst->measured || ratio(k) > ratio(*worst)))))
            worst = &k;
    if (worst) return sloNumber(c, *worst);
    if (c.inputsOverCap > 0)
        return DecidingNumber{std::string(modeName(c.mode)) + " inputs over its context cap",
                              std::to_string(c.inputsOverCap) + " of " + std::to_string(c.inputs),
                              "a cap of " + grouped(static_cast<double>(c.contextCap), 0) +
                                  " tokens"};
    if (!c.gaps.empty()) return DecidingNumber{c.gaps.front(), "", ""};
    return std::nullopt;
}

// The winner's own margin: its bound with the least headroom crossing its limit would make it
// infeasible.
void winnerBound(const CandidateScore& w, std::vector<std::string>& out) {
    if (const SloCheck* k = tightest(w))
        out.push_back(std::string(modeName(w.mode)) + "'s " + boundText(k->key) + " rising above " +
                      ms(k->limitMs) + " (measured " + measuredText(w, *k) +
                      ", its bound with the least headroom) would make " + modeName(w.mode) +
                      " infeasible");
}

void latencyDecision(const CandidateScore& f, const CandidateScore* g,
                     std::vector<DecidingNumber>& primary, std::vector<DecidingNumber>& secondary,
                     std::vector<std::string>& change) {
    const SloCheck* limit = nullptr; // the smallest TTFT limit: the latency rule reads it
    for (const auto& k : f.slo)
        if (isTtft(k) && (!limit || k.limitMs < limit->limitMs)) limit = &k;
    const bool strict = limit && limit->limitMs < kLatencyRuleTtftMs;
    if (strict)
        primary.push_back(
            {"TTFT requirement", ms(limit->limitMs),
             "< " + ms(kLatencyRuleTtftMs) + ", below which the latency rule requires fast mode"});
    if (const SloCheck* k = tightest(f, true)) {
        primary.push_back(sloNumber(f, *k));
        if (g)
            if (const SloCheck* gk = checkOf(*g, k->key)) secondary.push_back(sloNumber(*g, *gk));
    }
    if (!strict || !g) return;
    // Unfired, the rule needs a requirement of at least 3 s that regular also meets on every
    // TTFT bound: at least regular's slowest measured TTFT statistic.
    double needed = kLatencyRuleTtftMs;
    const SloCheck* gt = nullptr;
    for (const auto& k : g->slo)
        if (isTtft(k) && k.measured && (!gt || k.measuredMs > gt->measuredMs)) gt = &k;
    if (gt) needed = std::max(needed, std::ceil(gt->measuredMs));
    change.push_back(
        "a TTFT requirement of " + ms(needed) + " or more (the latency rule fires under " +
        ms(kLatencyRuleTtftMs) +
        (gt ? "; regular measured " + boundText(gt->key) + " " + measuredText(*g, *gt)
            : std::string()) +
        ") would leave the latency rule unfired: the cost rule or the weighted score would decide");
}

void contextDecision(const SelectionResult& r, std::vector<DecidingNumber>& primary,
                     std::vector<std::string>& change) {
    const InputLengths& in = r.inputs;
    const std::string cap = "fast's cap of " + grouped(static_cast<double>(in.cap), 0) + " tokens";
    if (in.overCap > 0) {
        primary.push_back({"inputs longer than fast's context cap",
                           std::to_string(in.overCap) + " of " + std::to_string(in.count) + " (" +
                               pct(in.share) + ")",
                           cap});
        change.push_back("an over-cap tolerance of at least " + pct(in.share) +
                         " (the measured share), or a fast profile and model whose context holds "
                         "the longest input (" +
                         grouped(static_cast<double>(in.longest), 0) +
                         " tokens), would let fast mode take the inputs");
    } else {
        change.push_back("a stated inputs.max_tokens within " + cap +
                         ", or a fast profile and model with a longer context, would let fast mode "
                         "take the inputs");
    }
    primary.push_back(
        {"longest input", grouped(static_cast<double>(in.longest), 0) + " tokens", cap});
}

void costDecision(const SelectionResult& r, const CandidateScore& w,
                  std::vector<std::string>& change) {
    const CandidateScore* l = scoreOf(r, other(w.mode));
    if (!l || !w.cost || !l->cost) return;
    const double hi = std::max(w.cost->total, l->cost->total),
                 lo = std::min(w.cost->total, l->cost->total);
    const std::string apart = pct(hi > 0 ? (hi - lo) / hi : 0.0);
    change.push_back("the bills are " + apart + " apart: a cost materiality threshold above " +
                     apart + ", or a cost weight not above the features weight (as used " +
                     num(r.weights.cost, 2) + " and " + num(r.weights.features, 2) +
                     "), would leave cost to the weighted score");
}

// What a tied score leaves: dominance decides when a candidate dominates (conclude in
// selection.cpp).
std::string tieOutcome(const SelectionResult& r) {
    return r.dominant ? "dominance would decide (for " + std::string(modeName(*r.dominant)) + ")"
                      : std::string("no clear winner");
}

void scoreDecision(const SelectionResult& r, const CandidateScore& w, const CandidateScore& l,
                   std::vector<DecidingNumber>& primary, std::vector<std::string>& change) {
    primary.push_back(scoreMarginNumber(r));
    const Lead lead = largestLead(r, w, l);
    if (lead.contribution() > 0)
        primary.push_back({std::string(modeName(w.mode)) + " " + lead.name + " score",
                           num(lead.winner, 3),
                           std::string(modeName(l.mode)) + " " + num(lead.loser, 3) + " (weight " +
                               num(lead.weight, 2) + ", the largest part of the lead)"});
    const double margin = std::fabs(r.noise.scoreMargin);
    if (lead.weight > 0 && margin > kTieMargin) {
        const double drop = (margin - kTieMargin) / lead.weight;
        if (drop <= lead.winner)
            change.push_back(std::string(modeName(w.mode)) + "'s " + lead.name +
                             " score falling by more than " + num(drop, 3) + " (from " +
                             num(lead.winner, 3) + " to under " + num(lead.winner - drop, 3) +
                             ") would bring the margin under the " + num(kTieMargin, 2) +
                             " tie margin: " + tieOutcome(r));
    }
    if (r.confidence)
        change.push_back(
            "a confidence under " + num(kClearConfidence, 2) + " (now " + num(*r.confidence, 3) +
            ") in the bootstrap over the runs would leave the score undecided: " + tieOutcome(r));
    else
        change.push_back(
            "repeating the comparison (compare --repeat 3) would measure the run-to-run noise: the "
            "margin could then prove to be within it");
    // The operations penalty, when it is what turned the score.
    const CandidateScore& fast = w.mode == Mode::Fast ? w : l;
    const CandidateScore& regular = w.mode == Mode::Fast ? l : w;
    if (w.mode == Mode::Regular && fast.opsPenalty > 0 &&
        fast.total + fast.opsPenalty > regular.total + kTieMargin)
        change.push_back("medium or high operations capability (no " + num(fast.opsPenalty, 2) +
                         " penalty on fast) would give fast " +
                         num(fast.total + fast.opsPenalty, 3) + " against regular " +
                         num(regular.total, 3) + ": fast would win the score");
}

void dominanceDecision(const SelectionResult& r, const CandidateScore& w, const CandidateScore& l,
                       std::vector<DecidingNumber>& primary, std::vector<std::string>& change) {
    // The SLO figures both measured show the ratios dominance read.
    for (const auto& k : w.slo)
        if (const SloCheck* lk = checkOf(l, k.key);
            k.measured && k.measuredMs > 0 && lk && lk->measured) {
            primary.push_back(
                {std::string(modeName(w.mode)) + " " + boundText(k.key), measuredText(w, k),
                 std::string(modeName(l.mode)) + " " + measuredText(l, *lk) + " (" +
                     ratioText(lk->measuredMs / k.measuredMs) + " " + modeName(w.mode) + "'s)"});
            break;
        }
    primary.push_back(scoreMarginNumber(r));
    change.push_back(std::string(modeName(l.mode)) + " coming within " +
                     num(kDominanceMinRatio, 2) + "× of " + modeName(w.mode) +
                     " on any measured p50 or p95 latency would leave no clear winner, as the "
                     "weighted scores tie");
    change.push_back("weighted scores " + num(kTieMargin, 2) +
                     " or more apart would let the score decide instead");
}

void noneFeasible(const SelectionResult& r, std::vector<DecidingNumber>& primary,
                  std::vector<std::string>& change) {
    for (const auto& c : r.scores) {
        if (const auto n = gapNumber(c)) primary.push_back(*n);
        int sloGaps = 0;
        std::string bounds;
        for (const auto& k : c.slo)
            if (!k.met && k.measured) {
                ++sloGaps;
                bounds +=
                    (bounds.empty() ? "" : ", ") + boundText(k.key) + " ≤ " + ms(k.measuredMs);
            }
        if (sloGaps > 0 && static_cast<size_t>(sloGaps) == c.gaps.size())
            change.push_back("bounds at " + std::string(modeName(c.mode)) +
                             "'s measured figures (" + bounds + ") would make " + modeName(c.mode) +
                             " feasible");
        for (const auto& m : c.remedies)
            change.push_back("for " + std::string(modeName(c.mode)) + ": " + m);
    }
}

void noClearWinner(const SelectionResult& r, std::vector<DecidingNumber>& primary,
                   std::vector<DecidingNumber>& secondary, std::vector<std::string>& change) {
    primary.push_back(scoreMarginNumber(r));
    for (const auto& c : r.scores)
        if (const SloCheck* k = tightest(c)) secondary.push_back(sloNumber(c, *k));
    const std::string prefix = "to separate them: ";
    for (const auto& t : r.tieReasons)
        if (t.rfind(prefix, 0) == 0) change.push_back(t.substr(prefix.size()));
}

std::string verdictLine(const SelectionResult& r) {
    if (r.verdict == Verdict::NoneFeasible) {
        std::string misses;
        for (const auto& c : r.scores)
            misses += (misses.empty() ? " (" : ", ") + std::string(modeName(c.mode)) + " has " +
                      std::to_string(c.gaps.size()) + " gap" + (c.gaps.size() == 1 ? "" : "s");
        return "None feasible: neither candidate meets the requirements" +
               (misses.empty() ? "" : misses + ")") + "; deploy neither until a gap is closed.";
    }
    if (r.verdict == Verdict::NoClearWinner) {
        std::string line = "No clear winner: neither mode is recommended, and regular mode, which "
                           "needs no migration, "
                           "stays";
        if (!r.tieReasons.empty()) line += "; " + r.tieReasons.front();
        for (const auto& t : r.tieReasons)
            if (t.rfind("to separate them: ", 0) != 0 && &t != &r.tieReasons.front())
                line += "; " + t;
        return line + ".";
    }
    const std::string mode = modeName(r.recommendation);
    std::string by = r.decidedBy == "score"       ? "the weighted score"
                     : r.decidedBy == "dominance" ? "dominance (" + r.dominance + ")"
                     : r.decidedBy == "feasibility"
                         ? "feasibility: only " + mode + " mode meets every requirement"
                         : "the " + r.decidedBy + " rule";
    return "Recommendation: " +
           std::string(r.recommendation == Mode::Fast ? "deploy fast" : "run regular") + " mode" +
           (r.decidedBy.empty() ? "" : ", decided by " + by) + ".";
}

} // namespace

std::string DecidingNumber::text() const {
    std::string s = label;
    if (!value.empty()) s += " " + value;
    if (!against.empty()) s += " vs " + against;
    return s;
}

ExecutiveSummary executiveSummary(const SelectionResult& r) {
    ExecutiveSummary s;
    s.verdict = r.verdict;
    if (r.verdict == Verdict::Recommended) s.recommendation = r.recommendation;
    s.verdictLine = verdictLine(r);
    s.confidence = r.confidence;
    s.confidenceLine =
        sentence(r.basis.empty() ? std::string("no confidence figure was recorded") : r.basis);

    std::vector<DecidingNumber> primary, secondary;
    std::optional<DecidingNumber> cost;
    const CandidateScore* w =
        r.verdict == Verdict::Recommended ? scoreOf(r, r.recommendation) : nullptr;
    const CandidateScore* l = w ? scoreOf(r, other(w->mode)) : nullptr;
    if (r.verdict == Verdict::NoneFeasible) {
        noneFeasible(r, primary, s.wouldChange);
    } else if (r.verdict == Verdict::NoClearWinner) {
        noClearWinner(r, primary, secondary, s.wouldChange);
        cost = costNumber(r, Mode::Fast);
    } else if (w) {
        cost = costNumber(r, w->mode);
        if (r.decidedBy == "latency") {
            latencyDecision(*w, l, primary, secondary, s.wouldChange);
        } else if (r.decidedBy == "context") {
            contextDecision(r, primary, s.wouldChange);
        } else if (r.decidedBy == "feasibility" && l) {
            if (const auto n = gapNumber(*l)) primary.push_back(*n);
            for (const auto& m : l->remedies)
                s.wouldChange.push_back("for " + std::string(modeName(l->mode)) + ": " + m);
        } else if (r.decidedBy == "cost") {
            if (cost) primary.push_back(*cost), cost.reset();
            costDecision(r, *w, s.wouldChange);
        } else if (r.decidedBy == "dominance" && l) {
            dominanceDecision(r, *w, *l, primary, s.wouldChange);
        } else if (l) {
            scoreDecision(r, *w, *l, primary, s.wouldChange);
        }
        if (const SloCheck* k = tightest(*w)) secondary.push_back(sloNumber(*w, *k));
        winnerBound(*w, s.wouldChange);
    }
    // The deciding rule's own figures, then the month's bill, then the rest, up to three, once
    // each.
    std::vector<DecidingNumber> all = primary;
    if (cost) all.push_back(*cost);
    all.insert(all.end(), secondary.begin(), secondary.end());
    for (auto& n : all) {
        if (s.numbers.size() >= kMaxDecidingNumbers) break;
        const bool seen = std::any_of(s.numbers.begin(), s.numbers.end(),
                                      [&](const DecidingNumber& x) { return x.label == n.label; });
        if (!seen) s.numbers.push_back(std::move(n));
    }
    for (auto& c : s.wouldChange) c = sentence(c);
    return s;
}

nlohmann::ordered_json toJson(const ExecutiveSummary& s) {
    nlohmann::ordered_json j;
    j["verdict"] = verdictName(s.verdict);
    j["recommendation"] =
        s.recommendation ? nlohmann::ordered_json(modeName(*s.recommendation)) : nullptr;
    j["verdict_line"] = s.verdictLine;
    j["confidence"] = s.confidence ? nlohmann::ordered_json(*s.confidence) : nullptr;
    j["confidence_line"] = s.confidenceLine;
    auto numbers = nlohmann::ordered_json::array();
    for (const auto& n : s.numbers)
        numbers.push_back({{"label", n.label}, {"value", n.value}, {"against", n.against}});
    j["numbers"] = numbers;
    j["would_change"] = s.wouldChange;
    return j;
}

} // namespace mb::lab
