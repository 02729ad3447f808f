// The selection rules, the weighted score and the confidence (bootstrap or repeated runs).
#include "lab/selection.h"

#include "lab/metrics.h"
#include "lab/rng.h"
#include "lab/workload.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <map>
#include <sstream>

namespace mb::lab {

namespace {

// A request reduced to what the rules read.
struct Req {
    bool ok = false;
    bool reached = false; // reached the engine (every status but Rejected)
    bool truncated = false; // the fast-mode policy dropped prompt tokens
    double ttft = -1, e2e = -1, tpot = -1;
    std::vector<double> gaps; // inter-token gaps, ms
    double prompt = 0, cached = 0, output = 0;
};

// One mode's requests, pooled over the runs it was measured in.
struct Side {
    Mode mode = Mode::Fast;
    std::string label, profile;
    std::vector<Req> reqs;
    double durationS = 0;
    bool hotUpdates = false, customBatching = false;
    uint64_t kvBytesPeak = 0;
    int64_t contextCap = kFastContextCap;
};

std::string num(double v, int decimals) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(decimals) << v;
    return s.str();
}

std::string pct(double share) { return num(100.0 * share, 1) + "%"; }

nlohmann::json parsedOrEmpty(const std::string& text) {
    try {
        if (!text.empty()) return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception&) {
    }
    return nlohmann::json::object();
}

// A knob of a stored profile: its own value, else the built-in its mode starts from.
std::string knob(const nlohmann::json& profile, const char* key, Mode mode, const char* fastValue,
                 const char* regularValue) {
    if (profile.contains(key) && profile[key].is_string()) return profile[key].get<std::string>();
    return mode == Mode::Fast ? fastValue : regularValue;
}

Req reduce(const RequestRecord& r) {
    Req q;
    q.ok = r.status == RequestStatus::Ok;
    q.reached = r.status != RequestStatus::Rejected;
    q.truncated = r.truncatedTokens > 0;
    q.ttft = r.ttftMs();
    q.e2e = r.e2eMs();
    q.tpot = r.tpotMs();
    for (size_t i = 1; i < r.tokenTimesMs.size(); ++i)
        q.gaps.push_back(r.tokenTimesMs[i] - r.tokenTimesMs[i - 1]);
    q.prompt = static_cast<double>(r.promptTokens);
    q.cached = static_cast<double>(r.cachedTokens);
    q.output = static_cast<double>(r.outputTokens);
    return q;
}

double durationOf(const std::vector<RequestRecord>& records) {
    double first = -1, last = -1;
    for (const auto& r : records) {
        if (r.submittedMs >= 0 && (first < 0 || r.submittedMs < first)) first = r.submittedMs;
        last = std::max(last, r.finishedMs);
    }
    return first >= 0 && last > first ? (last - first) / 1000.0 : 0.0;
}

// The fast and regular sides of each run, checked.
std::vector<std::pair<Side, Side>> sidesOf(const std::vector<StoredRun>& runs) {
    if (runs.empty()) throw SelectionError("selection needs at least one run");
    for (size_t i = 0; i < runs.size(); ++i)
        for (size_t k = 0; k < i; ++k)
            if (runs[k].id == runs[i].id)
                throw SelectionError("run " + std::to_string(runs[i].id) +
                                     " is given more than once; repeats must be different runs");
    std::vector<std::pair<Side, Side>> out;
    for (const StoredRun& run : runs) {
        const StoredCandidate* found[2] = {nullptr, nullptr};
        std::string seen;
        for (const StoredCandidate& c : run.candidates) {
            const auto mode = modeOfProfile(c.info.profileJson);
            seen += (seen.empty() ? "" : ", ") + c.info.label + ":" +
                    (mode ? modeName(*mode) : "other");
            if (!mode) continue;
            const StoredCandidate*& slot = found[*mode == Mode::Fast ? 0 : 1];
            if (slot)
                throw SelectionError("run " + std::to_string(run.id) + " has more than one " +
                                     modeName(*mode) + " candidate (" + slot->info.label + ", " +
                                     c.info.label + ")");
            slot = &c;
        }
        if (!found[0] || !found[1])
            throw SelectionError("run " + std::to_string(run.id) +
                                 " needs one fast and one regular candidate (has " +
                                 (seen.empty() ? std::string("none") : seen) + ")");
        std::pair<Side, Side> sides;
        for (int k = 0; k < 2; ++k) {
            const StoredCandidate& c = *found[k];
            if (c.requests.empty())
                throw SelectionError("run " + std::to_string(run.id) + " candidate " + c.info.label +
                                     " has no stored requests");
            Side& s = k == 0 ? sides.first : sides.second;
            s.mode = k == 0 ? Mode::Fast : Mode::Regular;
            s.label = c.info.label;
            const nlohmann::json profile = parsedOrEmpty(c.info.profileJson);
            s.profile = profile.value("name", std::string(modeName(s.mode)));
            s.hotUpdates = knob(profile, "reload", s.mode, "after_warmup", "hot") == "hot";
            s.customBatching = knob(profile, "batching", s.mode, "off", "dynamic") == "dynamic";
            if (profile.contains("max_context") && profile["max_context"].is_number_integer())
                s.contextCap = profile["max_context"].get<int64_t>();
            for (const auto& r : c.requests) {
                s.reqs.push_back(reduce(r));
                s.kvBytesPeak = std::max(s.kvBytesPeak, r.kvBytesPeak);
            }
            s.durationS = durationOf(c.requests);
        }
        out.push_back(std::move(sides));
    }
    // Repeats must compare the same two candidates.
    for (const auto& [f, r] : out)
        if (f.profile != out.front().first.profile || r.profile != out.front().second.profile)
            throw SelectionError("runs " + std::to_string(runs.front().id) + " and others compare "
                                 "different profiles; repeats must be of the same two candidates");
    return out;
}

Side pooled(const std::vector<const Side*>& sides) {
    Side s = *sides.front();
    for (size_t i = 1; i < sides.size(); ++i) {
        s.reqs.insert(s.reqs.end(), sides[i]->reqs.begin(), sides[i]->reqs.end());
        s.durationS += sides[i]->durationS;
        s.kvBytesPeak = std::max(s.kvBytesPeak, sides[i]->kvBytesPeak);
    }
    return s;
}

// Measured facts of one side over a sample of its requests (indices, repeats allowed).
CandidateScore measure(const Side& side, const std::vector<size_t>& sample, const Requirements& req,
                       const std::optional<PriceSheet>& prices) {
    CandidateScore c;
    c.mode = side.mode;
    c.label = side.label;
    c.profile = side.profile;
    c.hotUpdates = side.hotUpdates;
    c.customBatching = side.customBatching;
    std::vector<double> ttft, e2e, tpot, itl;
    double ok = 0, prompt = 0, cached = 0, okPrompt = 0, okOutput = 0;
    for (size_t i : sample) {
        const Req& q = side.reqs[i];
        c.rejected += q.reached ? 0 : 1;
        c.failed += q.reached && !q.ok ? 1 : 0;
        c.truncated += q.truncated ? 1 : 0;
        if (q.reached) {
            prompt += q.prompt;
            cached += q.cached;
        }
        if (!q.ok) continue;
        ok += 1;
        okPrompt += q.prompt;
        okOutput += q.output;
        if (q.ttft >= 0) ttft.push_back(q.ttft);
        if (q.e2e >= 0) e2e.push_back(q.e2e);
        if (q.tpot >= 0) tpot.push_back(q.tpot);
        itl.insert(itl.end(), q.gaps.begin(), q.gaps.end());
    }
    const double n = static_cast<double>(sample.size());
    c.requests = static_cast<int64_t>(sample.size());
    c.okShare = n > 0 ? ok / n : 0;
    c.hitRate = prompt > 0 ? cached / prompt : 0;
    c.inputTokensPerRequest = ok > 0 ? okPrompt / ok : 0;
    c.outputTokensPerRequest = ok > 0 ? okOutput / ok : 0;
    // The sample stands for the whole run: its Ok count over the run's duration.
    c.requestsPerS = side.durationS > 0 ? ok * (static_cast<double>(side.reqs.size()) / n) / side.durationS : 0;

    const Distribution dist[] = {describe(std::move(ttft)), describe(std::move(e2e)),
                                 describe(std::move(tpot)), describe(std::move(itl))};
    double attainment = 0;
    c.meetsSlo = true;
    for (const SloEntry& e : req.slo) {
        const Distribution& d = dist[static_cast<int>(e.metric)];
        SloCheck check{e.key(), e.limitMs, statisticOf(d, e.stat), false};
        // No measurement (no Ok request defines the metric) cannot show the bound holds.
        check.met = d.count > 0 && check.measuredMs <= e.limitMs;
        check.measured = d.count > 0;
        c.meetsSlo = c.meetsSlo && check.met;
        attainment += d.count == 0 ? 0.0 : check.measuredMs <= 0 ? 1.0 : std::min(1.0, e.limitMs / check.measuredMs);
        c.slo.push_back(check);
    }
    c.latency = c.okShare * attainment / static_cast<double>(req.slo.size());

    if (prices) {
        Volume v;
        v.requests = req.monthly.requests.value_or(n);
        v.inputTokensPerRequest = req.monthly.inputTokensPerRequest.value_or(c.inputTokensPerRequest);
        v.outputTokensPerRequest = req.monthly.outputTokensPerRequest.value_or(c.outputTokensPerRequest);
        v.hitRate = c.hitRate;
        v.requestsPerS = c.requestsPerS;
        c.cost = projectMonthlyCost(*prices, v);
    }
    const int needs = int{req.needs.hotUpdates} + int{req.needs.customBatching};
    c.features = needs == 0 ? 1.0
                            : (double(req.needs.hotUpdates && c.hotUpdates) +
                               double(req.needs.customBatching && c.customBatching)) / needs;
    return c;
}

std::string sloText(const CandidateScore& c, SloMetric only, bool onlyThat) {
    std::string s;
    for (const auto& k : c.slo) {
        if (onlyThat && k.key.rfind(sloMetricName(only), 0) != 0) continue;
        s += (s.empty() ? "" : ", ") + k.key;
        if (!k.measured) // no statistic to compare: say why instead of a 0.0 ms
            s += c.okShare == 0 ? " not measured (no successful requests, limit " + num(k.limitMs, 0) + ")"
                                : " not measured (no successful request defines it, limit " + num(k.limitMs, 0) + ")";
        else
            s += " " + num(k.measuredMs, 1) + " ms " + (k.met ? "<= " : "> ") + num(k.limitMs, 0);
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

struct Decision {
    Mode mode = Mode::Regular;
    std::string decidedBy;
    std::vector<TraceEntry> trace;
    std::vector<std::string> conflicts;
    SelectionResult::Weights weights;
    std::vector<std::string> monitoring;
};

// Rules 1-4 in order, then the score. `fast` and `regular` get their cost and total scores.
Decision decide(const Requirements& req, bool havePrices, const InputLengths& in, CandidateScore& fast,
                CandidateScore& regular, uint64_t kvPeakFast) {
    Decision d;
    std::optional<Mode> decided;
    auto decide = [&](Mode m, const char* by) {
        if (decided) return false;
        decided = m;
        d.decidedBy = by;
        return true;
    };

    // 1. Context.
    const bool statedOver = req.inputs.maxTokens && *req.inputs.maxTokens > in.cap;
    const bool contextFires =
        in.share > req.inputs.overCapTolerance || (statedOver && req.inputs.overCapTolerance == 0);
    {
        std::string detail = std::to_string(in.overCap) + " of " + std::to_string(in.count) + " inputs (" +
                             pct(in.share) + ", from " +
                             (in.source == "prompt_file" ? in.promptFile : std::string("the runs' prompts")) +
                             ", longest " + std::to_string(in.longest) + " tokens) are longer than the fast-mode cap of " +
                             std::to_string(in.cap) + " tokens; tolerance " + pct(req.inputs.overCapTolerance);
        if (req.inputs.maxTokens)
            detail += "; stated max_tokens " + std::to_string(*req.inputs.maxTokens) +
                      (statedOver ? " is over the cap" : " is within the cap");
        detail += contextFires ? ": regular mode required." : ": fast mode can take every input.";
        if (contextFires) decide(Mode::Regular, "context");
        d.trace.push_back({"context", contextFires, detail});
    }

    // 2. Latency.
    {
        const auto minTtft = req.minTtftLimitMs();
        const bool strict = minTtft && *minTtft < kLatencyRuleTtftMs;
        const bool onlyFast = meets(fast, SloMetric::TtftMs) && !meets(regular, SloMetric::TtftMs);
        const bool fires = strict || onlyFast;
        std::string detail;
        if (!minTtft) detail = "no TTFT requirement";
        else
            detail = "TTFT requirement " + num(*minTtft, 0) + " ms is " +
                     (strict ? "under " : "not under ") + num(kLatencyRuleTtftMs, 0) + " ms; measured fast " +
                     sloText(fast, SloMetric::TtftMs, true) + "; regular " + sloText(regular, SloMetric::TtftMs, true) +
                     (onlyFast ? " (only fast meets it)" : "");
        detail += fires ? ": fast mode required" : ": no mode required";
        for (const CandidateScore* c : {&fast, &regular})
            if (const std::string caveat = dataCaveat(*c); !caveat.empty()) detail += "; caution: " + caveat;
        if (fires && !decide(Mode::Fast, "latency")) {
            detail += " (overridden: the context rule requires regular mode)";
            d.conflicts.push_back("latency requires fast mode but context requires regular mode; context wins");
        }
        d.trace.push_back({"latency", fires, detail + "."});
    }

    // Weights, normalised over the components that can be measured.
    const double wl = req.weights.latency, wc = havePrices ? req.weights.cost : 0.0, wf = req.weights.features;
    const double sum = wl + wc + wf > 0 ? wl + wc + wf : 1.0;
    d.weights = {wl / sum, wc / sum, wf / sum};

    // 3. Cost.
    {
        std::string detail;
        bool fires = false;
        if (!havePrices) {
            detail = "no price sheet: cost not measured";
        } else {
            const double cf = fast.cost->perMillionTokens, cr = regular.cost->perMillionTokens;
            const std::string cur = " " + fast.cost->currency;
            const double lo = std::min(cf, cr);
            fast.costScore = cf > 0 ? lo / cf : 1.0;
            regular.costScore = cr > 0 ? lo / cr : 1.0;
            detail = "cost per million tokens: fast " + num(cf, 4) + cur + " (hit rate " + pct(fast.hitRate) +
                     "), regular " + num(cr, 4) + cur + " (hit rate " + pct(regular.hitRate) + "); monthly fast " +
                     num(fast.cost->total, 2) + cur + ", regular " + num(regular.cost->total, 2) + cur;
            if (req.weights.cost <= req.weights.features) {
                detail += "; cost weight " + num(req.weights.cost, 2) + " does not exceed features weight " +
                          num(req.weights.features, 2);
            } else if (cf == cr) {
                detail += "; equal costs, no preference";
            } else {
                fires = true;
                // The cheaper of the candidates that meet every SLO (of both when neither does).
                Mode cheaper = cf < cr ? Mode::Fast : Mode::Regular;
                if (fast.meetsSlo != regular.meetsSlo) cheaper = fast.meetsSlo ? Mode::Fast : Mode::Regular;
                detail += "; cost weight " + num(req.weights.cost, 2) + " > features weight " +
                          num(req.weights.features, 2) + ": prefer " + modeName(cheaper) +
                          (fast.meetsSlo != regular.meetsSlo ? " (the only one meeting every SLO)" : "");
                if (!decide(cheaper, "cost"))
                    detail += " (not deciding: the " + d.decidedBy + " rule decided)";
            }
        }
        d.trace.push_back({"cost", fires, detail + "."});
    }

    // 4. Operations.
    {
        const double floor = kHitRateFloorShare * fast.hitRate;
        d.monitoring.push_back("prefix hit rate >= " + num(floor, 3) + " (measured " + num(fast.hitRate, 3) + ")");
        for (const auto& k : fast.slo)
            d.monitoring.push_back(k.key + " <= " + num(k.limitMs, 0) + " ms (measured " + num(k.measuredMs, 1) +
                                   " ms), with p99 of " + k.key.substr(0, k.key.find('.')) + " alerted");
        d.monitoring.push_back("KV cache memory (peak " + num(double(kvPeakFast) / 1048576.0, 1) + " MiB)");
        const bool fires = req.opsCapability == OpsCapability::Low;
        fast.opsPenalty = fires ? kLowOpsPenalty : 0.0;
        std::string list;
        for (const auto& m : d.monitoring) list += (list.empty() ? "" : "; ") + m;
        d.trace.push_back({"operations", fires,
                           std::string("operations capability ") + opsCapabilityName(req.opsCapability) +
                               (fires ? ": fast mode's score reduced by " + num(kLowOpsPenalty, 2) +
                                            "; must be monitored: "
                                      : ": no penalty; fast mode is monitored on: ") +
                               list + "."});
    }

    for (CandidateScore* c : {&fast, &regular})
        c->total = d.weights.latency * c->latency + d.weights.cost * c->costScore +
                   d.weights.features * c->features - c->opsPenalty;
    // Equal scores keep regular mode: the default that needs no migration.
    decide(fast.total > regular.total ? Mode::Fast : Mode::Regular, "score");
    d.mode = *decided;
    return d;
}

std::vector<size_t> allIndices(size_t n) {
    std::vector<size_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = i;
    return v;
}

InputLengths measureInputs(const Requirements& req, const SelectionOptions& opt,
                           const std::vector<StoredRun>& runs, int64_t cap) {
    InputLengths in;
    in.cap = cap;
    std::vector<int64_t> lengths;
    if (!req.inputs.promptFile.empty()) {
        if (!opt.tokenize)
            throw SelectionError("inputs.prompt_file needs a tokenizer (a model) to measure token lengths");
        std::filesystem::path p(req.inputs.promptFile);
        if (p.is_relative() && !opt.baseDirectory.empty()) p = std::filesystem::path(opt.baseDirectory) / p;
        in.source = "prompt_file";
        in.promptFile = p.string();
        for (const auto& w : loadPromptFile(in.promptFile, opt.tokenize, 1))
            lengths.push_back(static_cast<int64_t>(w.prompt.size()));
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
            for (const auto& [i, l] : byIndex) lengths.push_back(l);
        }
    }
    for (int64_t l : lengths) {
        in.overCap += l > cap ? 1 : 0;
        in.longest = std::max(in.longest, l);
    }
    in.count = static_cast<int64_t>(lengths.size());
    in.share = in.count > 0 ? static_cast<double>(in.overCap) / static_cast<double>(in.count) : 0.0;
    return in;
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
        const nlohmann::json config = parsedOrEmpty(r.info.configJson);
        if (config.contains("prompts") && config["prompts"].is_string()) w["prompt_file"] = config["prompts"];
        return w;
    };
    std::vector<std::string> out;
    if (runs.empty()) return out;
    const nlohmann::json first = workloadOf(runs.front());
    for (size_t i = 1; i < runs.size(); ++i) {
        const nlohmann::json w = workloadOf(runs[i]);
        if (w == first) continue;
        std::string keys;
        for (const auto& [k, v] : w.items())
            if (!first.contains(k) || first[k] != v) keys += (keys.empty() ? "" : ", ") + k;
        for (const auto& [k, v] : first.items())
            if (!w.contains(k)) keys += (keys.empty() ? "" : ", ") + k;
        out.push_back("run " + std::to_string(runs[i].id) + " has a different workload from run " +
                      std::to_string(runs.front().id) + " (" + keys + " differ); repeats should replay one workload");
    }
    return out;
}

const char* modeName(Mode m) {
    return m == Mode::Fast ? "fast" : "regular";
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

SelectionResult select(const Requirements& req, const std::optional<PriceSheet>& prices,
                       const std::vector<StoredRun>& runs, const SelectionOptions& opt) {
    const auto perRun = sidesOf(runs);
    std::vector<const Side*> fastSides, regularSides;
    for (const auto& [f, r] : perRun) {
        fastSides.push_back(&f);
        regularSides.push_back(&r);
    }
    const Side fast = pooled(fastSides), regular = pooled(regularSides);

    SelectionResult result;
    for (const auto& run : runs) result.runIds.push_back(run.id);
    result.inputs = measureInputs(req, opt, runs, fast.contextCap);

    // One decision over a sample of each side's requests.
    auto decideOn = [&](const Side& f, const std::vector<size_t>& fs, const Side& r, const std::vector<size_t>& rs,
                        CandidateScore* fastOut, CandidateScore* regularOut) {
        CandidateScore cf = measure(f, fs, req, prices), cr = measure(r, rs, req, prices);
        Decision d = decide(req, prices.has_value(), result.inputs, cf, cr, f.kvBytesPeak);
        if (fastOut) *fastOut = cf;
        if (regularOut) *regularOut = cr;
        return d;
    };
    CandidateScore cf, cr;
    Decision main = decideOn(fast, allIndices(fast.reqs.size()), regular, allIndices(regular.reqs.size()), &cf, &cr);
    result.recommendation = main.mode;
    result.decidedBy = main.decidedBy;
    result.trace = main.trace;
    result.conflicts = main.conflicts;
    result.weights = main.weights;
    result.monitoring = main.monitoring;
    auto margin = [&](const CandidateScore& f, const CandidateScore& r) {
        return main.mode == Mode::Fast ? f.total - r.total : r.total - f.total;
    };
    result.noise.scoreMargin = margin(cf, cr);
    result.scores = {cf, cr};

    // Replicates: each run on its own, or bootstrap resamples of the pooled requests.
    std::vector<double> margins;
    auto tally = [&](const Decision& d, const CandidateScore& f, const CandidateScore& r) {
        ++result.noise.replicates;
        result.noise.agreeing += d.mode == main.mode ? 1 : 0;
        margins.push_back(margin(f, r));
    };
    if (perRun.size() > 1) {
        result.noise.method = "repeated_runs";
        for (const auto& [f, r] : perRun) {
            CandidateScore sf, sr;
            const Decision d = decideOn(f, allIndices(f.reqs.size()), r, allIndices(r.reqs.size()), &sf, &sr);
            tally(d, sf, sr);
        }
        const RepeatedMetric m = repeated(margins);
        result.noise.ci95Low = m.ci95Low;
        result.noise.ci95High = m.ci95High;
    } else {
        result.noise.method = "bootstrap";
        result.noise.seed = opt.seed;
        Rng rng(opt.seed);
        auto resample = [&](size_t n) {
            std::vector<size_t> v(n);
            for (auto& i : v) i = static_cast<size_t>(rng.uniformInt(0, static_cast<int64_t>(n)));
            return v;
        };
        for (int b = 0; b < std::max(1, opt.bootstrapReplicates); ++b) {
            CandidateScore sf, sr;
            const auto fi = resample(fast.reqs.size());
            const auto ri = resample(regular.reqs.size());
            const Decision d = decideOn(fast, fi, regular, ri, &sf, &sr);
            tally(d, sf, sr);
        }
        // 2.5th and 97.5th percentiles of the replicate margins.
        std::sort(margins.begin(), margins.end());
        auto at = [&](double q) {
            const double pos = q * static_cast<double>(margins.size() - 1);
            const auto lo = static_cast<size_t>(std::floor(pos));
            const size_t hi = std::min(lo + 1, margins.size() - 1);
            return margins[lo] + (margins[hi] - margins[lo]) * (pos - static_cast<double>(lo));
        };
        result.noise.ci95Low = at(0.025);
        result.noise.ci95High = at(0.975);
    }
    result.confidence = static_cast<double>(result.noise.agreeing) / static_cast<double>(result.noise.replicates);
    result.marginWithinNoise =
        result.confidence < kClearConfidence || (result.decidedBy == "score" && result.noise.ci95Low <= 0);
    return result;
}

} // namespace mb::lab
