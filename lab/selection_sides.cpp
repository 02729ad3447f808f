// Stored runs turned into the fast and regular sides the rules read, and one side measured.
#include "lab/selection_internal.h"

#include "engine/profile.h"
#include "lab/metrics.h"

#include <algorithm>

namespace mb::lab::selection_detail {

namespace {

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
    q.queue = r.queueMs();
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

Side sideOf(const StoredCandidate& c, Mode mode) {
    Side s;
    s.mode = mode;
    s.label = c.info.label;
    const nlohmann::json profile = parsedOrEmpty(c.info.profileJson);
    s.profile = profile.value("name", std::string(modeName(s.mode)));
    s.precision = knob(profile, "precision", mode, "mixed", "native");
    s.hotUpdates = knob(profile, "reload", s.mode, "after_warmup", "hot") == "hot";
    s.customBatching = knob(profile, "batching", s.mode, "off", "dynamic") == "dynamic";
    // The built-in caps (PRODUCT.md §1) when the stored profile does not say.
    s.profileCap = (mode == Mode::Fast ? engine::Profile::fast() : engine::Profile::regular()).maxContext;
    if (profile.contains("max_context") && profile["max_context"].is_number_integer())
        s.profileCap = profile["max_context"].get<int64_t>();
    const nlohmann::json shape = parsedOrEmpty(c.info.shapeJson);
    if (shape.contains("context_length") && shape["context_length"].is_number_integer())
        s.modelContext = shape["context_length"].get<int64_t>();
    for (const auto& r : c.requests) {
        s.reqs.push_back(reduce(r));
        s.kvBytesPeak = std::max(s.kvBytesPeak, r.kvBytesPeak);
    }
    s.durationS = durationOf(c.requests);
    s.quality = precisionCheckFromSummaryText(c.summaryJson);
    return s;
}

} // namespace

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
            seen += (seen.empty() ? "" : ", ") + c.info.label + ":" + (mode ? modeName(*mode) : "other");
            if (!mode) continue;
            const StoredCandidate*& slot = found[*mode == Mode::Fast ? 0 : 1];
            if (slot)
                throw SelectionError("run " + std::to_string(run.id) + " has more than one " + modeName(*mode) +
                                     " candidate (" + slot->info.label + ", " + c.info.label + ")");
            slot = &c;
        }
        if (!found[0] || !found[1])
            throw SelectionError("run " + std::to_string(run.id) + " needs one fast and one regular candidate (has " +
                                 (seen.empty() ? std::string("none") : seen) + ")");
        for (const StoredCandidate* c : found)
            if (c->requests.empty())
                throw SelectionError("run " + std::to_string(run.id) + " candidate " + c->info.label +
                                     " has no stored requests");
        out.emplace_back(sideOf(*found[0], Mode::Fast), sideOf(*found[1], Mode::Regular));
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
        if (!s.quality) s.quality = sides[i]->quality;
    }
    return s;
}

std::vector<size_t> allIndices(size_t n) {
    std::vector<size_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = i;
    return v;
}

CandidateScore measure(const Side& side, const std::vector<size_t>& sample, const Requirements& req,
                       const std::optional<PriceSheet>& prices, const Workload& workload, std::vector<RunSpread> spread) {
    CandidateScore c;
    c.spread = std::move(spread);
    c.mode = side.mode;
    c.label = side.label;
    c.profile = side.profile;
    c.precision = side.precision;
    c.quality = side.quality;
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
    c.requestsPerS =
        side.durationS > 0 ? ok * (static_cast<double>(side.reqs.size()) / n) / side.durationS : 0;

    const Distribution dist[] = {describe(std::move(ttft)), describe(std::move(e2e)), describe(std::move(tpot)),
                                 describe(std::move(itl))};
    double headroom = 0;
    c.meetsSlo = true;
    for (const SloEntry& e : req.slo) {
        const Distribution& d = dist[static_cast<int>(e.metric)];
        SloCheck check{e.key(), e.limitMs, statisticOf(d, e.stat), false};
        // No measurement (no Ok request defines the metric) cannot show the bound holds.
        check.measured = d.count > 0;
        check.met = check.measured && check.measuredMs <= e.limitMs;
        check.headroom = check.measured ? headroomScore(check.measuredMs, e.limitMs) : 0.0;
        c.meetsSlo = c.meetsSlo && check.met;
        headroom += check.headroom;
        c.slo.push_back(check);
    }
    c.latency = c.okShare * headroom / static_cast<double>(req.slo.size());

    if (prices) {
        // Both candidates are costed on the same month: the team's inputs at full length
        // (not fast's truncated prompts) and the same outputs; only the hit rate is theirs.
        Volume v;
        v.requests = req.monthly.requests.value_or(n);
        v.inputTokensPerRequest = req.monthly.inputTokensPerRequest.value_or(workload.fastInputs.meanTokens);
        v.outputTokensPerRequest = req.monthly.outputTokensPerRequest.value_or(workload.outputTokensPerRequest);
        v.hitRate = c.hitRate;
        v.requestsPerS = c.requestsPerS;
        v.replicas = side.mode == Mode::Fast ? workload.fastReplicas : workload.regularReplicas;
        c.cost = projectMonthlyCost(*prices, v);
        v.hitRate = 0;
        c.costNoHits = projectMonthlyCost(*prices, v);
        v.hitRate = 1;
        c.costAllHits = projectMonthlyCost(*prices, v);
    }
    checkFeasibility(c, side, req, workload);
    c.features = featuresScore(c, req);
    return c;
}

std::vector<RunSpread> spreadOf(Mode mode, const std::vector<std::pair<Side, Side>>& perRun, const Requirements& req,
                                const std::optional<PriceSheet>& prices, const Workload& w) {
    std::vector<RunSpread> out;
    if (perRun.size() < 2) return out;
    std::vector<std::string> keys;
    for (const SloEntry& e : req.slo) keys.push_back(e.key());
    keys.push_back("requests_per_s");
    std::vector<std::vector<double>> values(keys.size());
    for (const auto& [f, r] : perRun) {
        const Side& s = mode == Mode::Fast ? f : r;
        const CandidateScore one = measure(s, allIndices(s.reqs.size()), req, prices, w);
        for (size_t i = 0; i < one.slo.size(); ++i)
            if (one.slo[i].measured) values[i].push_back(one.slo[i].measuredMs);
        values.back().push_back(one.requestsPerS);
    }
    for (size_t i = 0; i < keys.size(); ++i) {
        if (values[i].size() < 2) continue;
        const RepeatedMetric m = repeated(values[i]);
        // Latencies and rates are never negative: a wide interval of few runs stops at 0.
        out.push_back({keys[i], static_cast<int64_t>(values[i].size()), m.mean, std::max(0.0, m.ci95Low), m.ci95High,
                       m.cv});
    }
    return out;
}

} // namespace mb::lab::selection_detail
