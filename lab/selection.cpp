// The selection: the workload's inputs, one decision on the pooled runs, its noise, and the headline.
#include "lab/selection.h"

#include "lab/metrics.h"
#include "lab/rng.h"
#include "lab/run_config.h"
#include "lab/selection_internal.h"
#include "lab/workload.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

namespace mb::lab {

using namespace selection_detail;

namespace {

Workload workloadOf(const Requirements& req, const SelectionOptions& opt, const std::vector<StoredRun>& runs,
                    const Side& fast, const Side& regular) {
    Workload w;
    InputLengths& in = w.fastInputs;
    if (!req.inputs.promptFile.empty()) {
        if (!opt.tokenize)
            throw SelectionError("inputs.prompt_file needs a tokenizer (a model) to measure token lengths");
        std::filesystem::path p(req.inputs.promptFile);
        if (p.is_relative() && !opt.baseDirectory.empty()) p = std::filesystem::path(opt.baseDirectory) / p;
        in.source = "prompt_file";
        in.promptFile = p.string();
        for (const auto& wr : loadPromptFile(in.promptFile, opt.tokenize, 1))
            w.lengths.push_back(static_cast<int64_t>(wr.prompt.size()));
    } else {
        in.source = "runs";
        // A prompt's length before truncation, the longest any candidate saw per workload index.
        for (const auto& run : runs) {
            std::map<uint64_t, int64_t> byIndex;
            for (const auto& c : run.candidates)
                for (const auto& r : c.requests) {
                    int64_t& l = byIndex[r.id];
                    l = std::max(l, r.promptTokens + r.truncatedTokens);
                }
            for (const auto& [i, l] : byIndex) w.lengths.push_back(l);
        }
    }
    in.profileCap = fast.profileCap;
    in.modelContext = fast.modelContext;
    in.cap = effectiveContextCap(fast.profileCap, fast.modelContext);
    double total = 0;
    for (int64_t l : w.lengths) {
        in.overCap += l > in.cap ? 1 : 0;
        in.longest = std::max(in.longest, l);
        total += static_cast<double>(l);
    }
    in.count = static_cast<int64_t>(w.lengths.size());
    in.share = in.count > 0 ? static_cast<double>(in.overCap) / static_cast<double>(in.count) : 0.0;
    in.meanTokens = in.count > 0 ? total / static_cast<double>(in.count) : 0.0;
    double ok = 0, output = 0;
    for (const Side* s : {&fast, &regular})
        for (const Req& q : s->reqs)
            if (q.ok) {
                ok += 1;
                output += q.output;
            }
    w.outputTokensPerRequest = ok > 0 ? output / ok : 0.0;
    return w;
}

double percentile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    const double pos = q * static_cast<double>(v.size() - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}

// Index ranges of each run's requests inside a pooled side (runs in order).
std::vector<std::pair<size_t, size_t>> runRanges(const std::vector<std::pair<Side, Side>>& perRun, bool fast) {
    std::vector<std::pair<size_t, size_t>> out;
    size_t at = 0;
    for (const auto& [f, r] : perRun) {
        const size_t n = (fast ? f : r).reqs.size();
        out.emplace_back(at, at + n);
        at += n;
    }
    return out;
}

// One bootstrap draw over runs: as many run indices as there are runs, with replacement. Both
// sides take the same runs: a run measured its two candidates side by side.
std::vector<size_t> drawRuns(size_t runs, Rng& rng) {
    std::vector<size_t> out(runs);
    for (auto& i : out) i = static_cast<size_t>(rng.uniformInt(0, static_cast<int64_t>(runs)));
    return out;
}

// The pooled side's request indices of the drawn runs.
std::vector<size_t> requestsOf(const std::vector<size_t>& picks, const std::vector<std::pair<size_t, size_t>>& ranges) {
    std::vector<size_t> out;
    for (size_t k : picks)
        for (size_t i = ranges[k].first; i < ranges[k].second; ++i) out.push_back(i);
    return out;
}

// One bootstrap draw over the requests of a single run.
std::vector<size_t> drawRequests(size_t n, Rng& rng) {
    std::vector<size_t> out(n);
    for (auto& i : out) i = static_cast<size_t>(rng.uniformInt(0, static_cast<int64_t>(n)));
    return out;
}

// A CV above kHighVarianceCv across runs warns, for every figure of either candidate.
void warnOnVariation(SelectionResult& result) {
    for (const CandidateScore& c : result.scores)
        for (const RunSpread& x : c.spread) {
            if (x.cv <= kHighVarianceCv) continue;
            const bool isMs = x.key != "requests_per_s";
            auto fmt = [&](double v) { return isMs ? ms(v) : num(v, 2) + "/s"; };
            result.warnings.push_back(std::string(modeName(c.mode)) + " " + (isMs ? boundText(x.key) : x.key) +
                                      " varies across the " + std::to_string(x.runs) + " runs: CV " + pct(x.cv) +
                                      " > " + pct(kHighVarianceCv) + " (mean " + fmt(x.mean) + ", 95% interval " +
                                      fmt(x.ci95Low) + " to " + fmt(x.ci95High) + ")");
        }
}

// The tie: why, then what would separate the candidates.
std::vector<std::string> tieReasons(const SelectionResult& r, size_t runs, bool havePrices) {
    const CandidateScore &f = r.score(Mode::Fast), &g = r.score(Mode::Regular);
    std::string why = "weighted scores fast " + num(f.total, 3) + " and regular " + num(g.total, 3) + " (margin " +
                      num(std::fabs(f.total - g.total), 3);
    if (std::fabs(f.total - g.total) < kTieMargin) why += ", under the " + num(kTieMargin, 2) + " tie margin";
    if (r.noise.replicates > 0 && r.noise.ci95Low <= 0)
        why += ", and its 95% interval " + num(r.noise.ci95Low, 3) + " to " + num(r.noise.ci95High, 3) + " over " +
               (r.noise.method == "runs" ? "run" : "request") + " bootstraps reaches 0";
    std::vector<std::string> out{why + ")"};
    if (r.dominance.empty()) out.push_back("neither candidate is better on every measured metric");
    if (runs < 2) out.push_back("to separate them: repeat each candidate (compare --repeat 3) to measure run-to-run noise");
    if (!havePrices) out.push_back("to separate them: a price sheet, so that the month's cost enters the score");
    out.push_back("to separate them: a run at the production load and prompt lengths, where queueing and the prefix "
                  "cache tell the modes apart");
    return out;
}

// Verdict, confidence, basis and headline from the pooled decision and its replicates.
void conclude(SelectionResult& r, size_t runs, bool havePrices) {
    bool byScore = r.decidedBy == "score";
    const double share =
        r.noise.replicates > 0 ? static_cast<double>(r.noise.agreeing) / static_cast<double>(r.noise.replicates) : 0;
    const std::string agree = std::to_string(r.noise.agreeing) + " of " + std::to_string(r.noise.replicates) + " " +
                              (r.noise.method == "runs" ? "bootstraps over the " + std::to_string(runs) + " runs"
                                                        : std::string("request bootstraps within the one run"));
    if (r.verdict == Verdict::Recommended && byScore &&
        (std::fabs(r.noise.scoreMargin) < kTieMargin || r.noise.ci95Low <= 0 ||
         (runs > 1 && share < kClearConfidence))) {
        if (r.dominant) { // the scores cannot tell them apart, the measurements can
            r.recommendation = *r.dominant;
            r.decidedBy = "dominance";
            r.ruleMargin = r.dominance + "; the weighted scores tie at " + r.ruleMargin;
        } else {
            r.verdict = Verdict::NoClearWinner;
        }
    }
    byScore = r.decidedBy == "score";
    if (r.verdict != Verdict::Recommended) r.recommendation = Mode::Regular;
    r.marginWithinNoise =
        r.verdict == Verdict::NoClearWinner || ((byScore || r.decidedBy == "dominance") && runs < 2);
    if (r.verdict == Verdict::Recommended && byScore && runs > 1) r.confidence = share;

    if (r.verdict == Verdict::NoneFeasible) {
        r.basis = "no confidence figure: no candidate meets the requirements";
        r.headline = "none feasible: " + r.ruleMargin;
        return;
    }
    if (r.verdict == Verdict::NoClearWinner) {
        r.tieReasons = tieReasons(r, runs, havePrices);
        r.basis = "no confidence figure: no mode is recommended, the scores do not separate the candidates";
        r.headline = "no clear winner: " + r.tieReasons.front();
        return;
    }
    const std::string mode = modeName(r.recommendation);
    if (!byScore) {
        r.basis = r.decidedBy == "dominance"
                      ? "no confidence figure: dominance decided, and it reports the ratio on every metric"
                      : "no confidence figure: the " + r.decidedBy +
                            " rule decided, and a rule reports the margin of the measured value from its threshold";
        if (runs > 1 && r.decidedBy != "dominance") r.basis += "; " + agree + " give the same mode";
        r.headline = mode + " mode, decided by " +
                     (r.decidedBy == "dominance" ? std::string("dominance") : "the " + r.decidedBy + " rule") + ": " +
                     r.ruleMargin;
    } else if (runs > 1) {
        r.basis = "confidence " + num(share, 3) + ": " + agree + " agree; score margin " + num(r.noise.scoreMargin, 3) +
                  ", 95% interval " + num(r.noise.ci95Low, 3) + " to " + num(r.noise.ci95High, 3);
        r.headline = mode + " mode, decided by the weighted score: " + r.ruleMargin + "; confidence " + num(share, 3);
    } else {
        r.basis = "no confidence figure: one run per candidate measures no run-to-run noise (" + agree + " agree)";
        r.headline = mode + " mode, decided by the weighted score: " + r.ruleMargin;
    }
    if (r.dominant == r.recommendation && r.decidedBy != "dominance") r.headline += "; " + r.dominance;
}

} // namespace

double statisticOf(const Distribution& d, SloStat s) {
    switch (s) {
    case SloStat::P50: return d.p50;
    case SloStat::P90: return d.p90;
    case SloStat::P95: return d.p95;
    case SloStat::P99: return d.p99;
    case SloStat::P999: return d.p999;
    case SloStat::Mean: return d.mean;
    case SloStat::Max: return d.max;
    }
    return 0;
}

int64_t effectiveContextCap(int64_t profileCap, int64_t modelContext) {
    return modelContext > 0 ? std::min(profileCap, modelContext - 1) : profileCap;
}

std::string dataCaveat(const CandidateScore& c) {
    if (c.requests <= 0) return {};
    const int64_t ok = c.requests - c.rejected - c.failed;
    const std::string of = " of " + std::to_string(c.requests) + " requests";
    std::string s;
    if (2 * ok < c.requests)
        s = std::string(modeName(c.mode)) + " had " + std::to_string(ok) + of + " succeed (" +
            std::to_string(c.rejected) + " rejected, " + std::to_string(c.failed) + " failed), so its figures rest on " +
            (ok == 0 ? "no request" : "few requests");
    if (2 * c.truncated > c.requests)
        s += (s.empty() ? std::string(modeName(c.mode)) + " had " : std::string(", and ")) +
             std::to_string(c.truncated) + of + " truncated to its context cap";
    return s;
}

std::vector<std::string> workloadMismatches(const std::vector<StoredRun>& runs) {
    // What a run replayed: its workload spec, and the prompt file a prompt-file run read.
    auto workloadOf = [](const StoredRun& r) {
        nlohmann::json w = parsedOrEmpty(r.info.workloadJson);
        if (const std::string file = runConfigFromText(r.info.configJson).promptFile; !file.empty())
            w["prompt_file"] = file;
        return w;
    };
    std::vector<std::string> out;
    // Sweep points replay the workload at other loads by design: only the deciding runs are repeats.
    std::vector<const StoredRun*> repeats;
    for (const StoredRun& r : runs)
        if (const RunConfig c = runConfigFromText(r.info.configJson); !c.sweep && !c.extra.contains("sweep"))
            repeats.push_back(&r);
    if (repeats.empty()) return out;
    const nlohmann::json first = workloadOf(*repeats.front());
    for (size_t i = 1; i < repeats.size(); ++i) {
        const StoredRun& run = *repeats[i];
        const nlohmann::json w = workloadOf(run);
        if (w == first) continue;
        std::string keys;
        for (const auto& [k, v] : w.items())
            if (!first.contains(k) || first[k] != v) keys += (keys.empty() ? "" : ", ") + k;
        for (const auto& [k, v] : first.items())
            if (!w.contains(k)) keys += (keys.empty() ? "" : ", ") + k;
        out.push_back("run " + std::to_string(run.id) + " has a different workload from run " +
                      std::to_string(repeats.front()->id) + " (" + keys + " differ); repeats should replay one workload");
    }
    return out;
}

const char* modeName(Mode m) { return m == Mode::Fast ? "fast" : "regular"; }

const char* verdictName(Verdict v) {
    switch (v) {
    case Verdict::Recommended: return "recommended";
    case Verdict::NoClearWinner: return "no_clear_winner";
    case Verdict::NoneFeasible: return "none_feasible";
    }
    return "?";
}

std::optional<Mode> modeOfProfile(const std::string& profileJson) {
    const nlohmann::json p = parsedOrEmpty(profileJson);
    for (const char* key : {"base", "name"})
        if (p.contains(key) && p[key].is_string()) {
            const std::string v = p[key].get<std::string>();
            if (v == "fast") return Mode::Fast;
            if (v == "regular") return Mode::Regular;
        }
    return std::nullopt;
}

const CandidateScore& SelectionResult::score(Mode m) const {
    for (const auto& s : scores)
        if (s.mode == m) return s;
    throw std::out_of_range(std::string("no ") + modeName(m) + " candidate in the selection");
}

namespace {

// The runs that decide, and the points of a load sweep (capacity only).
std::pair<std::vector<StoredRun>, std::vector<StoredRun>> splitSweep(const std::vector<StoredRun>& all) {
    std::vector<StoredRun> runs, sweep;
    for (const StoredRun& r : all) (sweepTagOf(r) ? sweep : runs).push_back(r);
    if (runs.empty() && !sweep.empty())
        throw SelectionError("every run given is a point of a load sweep (compare --sweep); give the comparison "
                             "run(s) to decide on as well: the sweep only sizes the capacity");
    return {std::move(runs), std::move(sweep)};
}

} // namespace

SelectionResult select(const Requirements& req, const std::optional<PriceSheet>& prices,
                       const std::vector<StoredRun>& allRuns, const SelectionOptions& opt) {
    for (size_t i = 0; i < allRuns.size(); ++i) // a sweep point given twice, too
        for (size_t k = 0; k < i; ++k)
            if (allRuns[k].id == allRuns[i].id)
                throw SelectionError("run " + std::to_string(allRuns[i].id) +
                                     " is given more than once; repeats must be different runs");
    const auto [runs, sweepRuns] = splitSweep(allRuns);
    const auto perRun = sidesOf(runs);
    std::vector<const Side*> fastSides, regularSides;
    for (const auto& [f, r] : perRun) {
        fastSides.push_back(&f);
        regularSides.push_back(&r);
    }
    const Side fast = pooled(fastSides), regular = pooled(regularSides);
    Workload w = workloadOf(req, opt, runs, fast, regular);

    SelectionResult result;
    for (const auto& run : allRuns) result.runIds.push_back(run.id);
    result.capacity = capacityOf(req, sweepRuns);
    for (const ModeCapacity& c : result.capacity)
        if (c.sized) (c.mode == Mode::Fast ? w.fastReplicas : w.regularReplicas) = c.replicas;
    result.inputs = w.fastInputs;
    result.prices = prices;

    // One decision over a sample of each pooled side's requests.
    auto decideOn = [&](const std::vector<size_t>& fs, const std::vector<size_t>& rs, CandidateScore& cf,
                        CandidateScore& cr) {
        cf = measure(fast, fs, req, prices, w);
        cr = measure(regular, rs, req, prices, w);
        return decide(req, prices.has_value(), result.inputs, cf, cr, fast.kvBytesPeak);
    };
    // The pooled decision, with each figure's spread across runs in its sentences.
    CandidateScore cf = measure(fast, allIndices(fast.reqs.size()), req, prices, w,
                                spreadOf(Mode::Fast, perRun, req, prices, w));
    CandidateScore cr = measure(regular, allIndices(regular.reqs.size()), req, prices, w,
                                spreadOf(Mode::Regular, perRun, req, prices, w));
    const Decision main = decide(req, prices.has_value(), result.inputs, cf, cr, fast.kvBytesPeak);
    result.verdict = main.verdict;
    result.recommendation = main.mode;
    result.decidedBy = main.decidedBy;
    result.ruleMargin = main.ruleMargin;
    result.trace = main.trace;
    result.conflicts = main.conflicts;
    result.weights = main.weights;
    result.monitoring = main.monitoring;
    const bool fastWins = main.verdict == Verdict::Recommended && main.mode == Mode::Fast;
    auto margin = [&](const CandidateScore& f, const CandidateScore& r) {
        return fastWins || main.verdict != Verdict::Recommended ? f.total - r.total : r.total - f.total;
    };
    auto sameOutcome = [&](const Decision& d) {
        return d.verdict == Verdict::NoneFeasible ? main.verdict == Verdict::NoneFeasible
                                                  : main.verdict != Verdict::NoneFeasible && d.mode == main.mode;
    };
    result.noise.scoreMargin = margin(cf, cr);
    result.scores = {cf, cr};
    const Dominance dominance = dominanceOf(fast, regular, perRun);
    result.dominance = dominance.sentence;
    result.dominant = dominance.mode;

    // Replicates: bootstrap over runs when there are several, over requests of the one run otherwise.
    std::vector<double> margins;
    Rng rng(opt.seed);
    result.noise.seed = opt.seed;
    result.noise.method = perRun.size() > 1 ? "runs" : "requests";
    const auto fastRanges = runRanges(perRun, true), regularRanges = runRanges(perRun, false);
    for (int b = 0; b < std::max(1, opt.bootstrapReplicates); ++b) {
        std::vector<size_t> fi, ri;
        if (perRun.size() > 1) {
            const auto picks = drawRuns(perRun.size(), rng);
            fi = requestsOf(picks, fastRanges);
            ri = requestsOf(picks, regularRanges);
        } else {
            fi = drawRequests(fast.reqs.size(), rng);
            ri = drawRequests(regular.reqs.size(), rng);
        }
        CandidateScore sf, sr;
        const Decision d = decideOn(fi, ri, sf, sr);
        ++result.noise.replicates;
        result.noise.agreeing += sameOutcome(d) ? 1 : 0;
        margins.push_back(margin(sf, sr));
    }
    result.noise.ci95Low = percentile(margins, 0.025);
    result.noise.ci95High = percentile(margins, 0.975);

    if (perRun.size() > 1) warnOnVariation(result);
    else
        result.warnings.insert(result.warnings.begin(),
                               "the selection rests on one run per candidate: run-to-run variation is not measured, "
                               "so no confidence figure is given; repeat the comparison (compare --repeat 3) and pass "
                               "every run to select");
    if (prices && !req.monthly.requests)
        result.warnings.push_back("monthly.requests is not stated: the month is costed as the runs' own " +
                                  std::to_string(cf.requests) +
                                  " requests; state the team's volume in the requirements' monthly.requests");
    conclude(result, perRun.size(), prices.has_value());
    return result;
}

} // namespace mb::lab
