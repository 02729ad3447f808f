// The migration flowchart's transitions and each node's check as a pure function.
#include "lab/migration.h"

#include "lab/comparison.h"
#include "lab/rng.h"
#include "lab/run_config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <sstream>

namespace mb::lab {

namespace {

using N = MigrationNode;

std::string num(double v, int decimals) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(decimals) << v;
    return s.str();
}

void require(const MigrationState& s, std::initializer_list<N> allowed, const char* step) {
    if (std::find(allowed.begin(), allowed.end(), s.node) != allowed.end()) return;
    throw MigrationError(std::string(step) + " is not a step of node " + nodeName(s.node) + " (" +
                         nodeTitle(s.node) + ")");
}

void enter(MigrationState& s, N node) {
    s.node = node;
    s.path.push_back(node);
}

const Distribution& distributionOf(const RunSummary& s, SloMetric m) {
    switch (m) {
    case SloMetric::TtftMs: return s.ttftMs;
    case SloMetric::E2eMs: return s.e2eMs;
    case SloMetric::TpotMs: return s.tpotMs;
    case SloMetric::ItlMs: return s.itlMs;
    }
    return s.ttftMs;
}

} // namespace

const char* nodeName(MigrationNode n) {
    static const char* kNames[] = {"A", "B", "C", "D", "E", "F", "G", "H", "I"};
    return kNames[static_cast<int>(n)];
}

const char* nodeTitle(MigrationNode n) {
    static const char* kTitles[] = {"assess context needs",  "input > 32K?",        "keep regular mode",
                                    "cache warm-up",         "enable fast mode",    "monitor key metrics",
                                    "latency SLO met?",      "migration done",      "adjust batching parameters"};
    return kTitles[static_cast<int>(n)];
}

const std::vector<MigrationEdge>& migrationEdges() {
    static const std::vector<MigrationEdge> kEdges = {
        {N::A, N::B, ""},   {N::B, N::C, "yes"}, {N::B, N::D, "no"}, {N::D, N::E, ""}, {N::E, N::F, ""},
        {N::F, N::G, ""},   {N::G, N::H, "yes"}, {N::G, N::I, "no"}, {N::I, N::F, ""},
    };
    return kEdges;
}

PromptHistogram promptLengthHistogram(const std::vector<int64_t>& lengths, int64_t cap) {
    PromptHistogram h;
    h.cap = cap;
    for (int64_t l : lengths) {
        h.longest = std::max(h.longest, l);
        h.overCap += l > cap ? 1 : 0;
    }
    h.count = static_cast<int64_t>(lengths.size());
    h.share = h.count > 0 ? static_cast<double>(h.overCap) / static_cast<double>(h.count) : 0.0;
    if (lengths.empty()) return h;
    for (int64_t upTo = 1;; upTo *= 2) {
        h.bins.push_back({upTo, 0});
        if (upTo >= h.longest) break;
    }
    for (int64_t l : lengths) {
        size_t bin = 0;
        while (h.bins[bin].upTo < l) ++bin;
        ++h.bins[bin].count;
    }
    return h;
}

bool inputsExceedCap(const PromptHistogram& h, double tolerance) {
    return h.share > tolerance;
}

std::string checkWarmup(const WarmupResult& w) {
    if (w.wallMs <= 0 && w.engineWarmupMs <= 0) return "the warm-up was not measured";
    if (!w.reloadAttempted) return "no model update was attempted during the warm-up";
    if (!w.reloadRefused) return "a model update was accepted during the warm-up; fast mode must refuse it";
    return {};
}

MonitorResult monitorFromSummary(const RunSummary& s, const Requirements& req, int64_t runId) {
    MonitorResult m;
    m.runId = runId;
    m.hitRate = s.hitRate;
    m.queueP95Ms = s.queueMs.p95;
    m.ttftP95Ms = s.ttftMs.p95;
    m.meanPromptTokens = s.promptTokens.mean;
    m.requestsPerS = s.requestsPerS;
    m.requests = s.requests;
    for (const SloEntry& e : req.slo) {
        const Distribution& d = distributionOf(s, e.metric);
        const double v = statisticOf(d, e.stat);
        m.slo.push_back({e.key(), e.limitMs, v, d.count > 0 && v <= e.limitMs, d.count > 0});
    }
    for (SloMetric metric : {SloMetric::TtftMs, SloMetric::E2eMs, SloMetric::TpotMs, SloMetric::ItlMs}) {
        double limit = -1;
        for (const SloEntry& e : req.slo)
            if (e.metric == metric) limit = std::max(limit, e.limitMs);
        if (limit < 0) continue;
        const Distribution& d = distributionOf(s, metric);
        m.p99.push_back(
            {std::string(sloMetricName(metric)) + ".p99", limit, d.p99, d.count > 0 && d.p99 <= limit, d.count > 0});
    }
    return m;
}

RunReplay replayRun(const StoredRun& run, const std::string& fallbackPromptFile,
                    const std::function<std::vector<int32_t>(const std::string&)>& tokenize,
                    const TokenSpace& tokens) {
    const std::string runName = "run " + std::to_string(run.id);
    RunReplay r;
    try {
        r.spec = parseWorkloadSpec(nlohmann::json::parse(run.info.workloadJson));
    } catch (const std::exception& e) {
        throw MigrationError(runName + ": its stored workload cannot be read back: " + e.what());
    }
    if (!run.info.configJson.empty() && !nlohmann::json::accept(run.info.configJson))
        throw MigrationError(runName + ": its stored configuration cannot be read back: not JSON");
    const RunConfig config = runConfigFromText(run.info.configJson);
    const bool primed = config.primers > 0;
    std::string recorded = config.promptFile;
    if (recorded.empty() && r.spec.name.rfind("file:", 0) == 0) recorded = r.spec.name.substr(5);

    if (recorded.empty()) { // synthetic: the same spec and token space give the same requests
        r.requests = buildWorkload(r.spec, tokens);
        r.source = "the run's " + r.spec.name + " workload (seed " + std::to_string(r.spec.seed) + ")";
    } else {
        std::error_code ec;
        std::string file = recorded;
        if (!std::filesystem::is_regular_file(file, ec)) {
            if (fallbackPromptFile.empty())
                throw MigrationError(runName + " was made from the prompt file " + recorded +
                                     ", which cannot be read from here (a relative path is relative to where "
                                     "compare ran); give --prompts FILE with the same prompts");
            file = fallbackPromptFile;
        }
        size_t stored = 0; // the run's requests: the prompt file's prompts
        int64_t longestOutput = 0;
        for (const auto& c : run.candidates) {
            stored = std::max(stored, c.requests.size());
            for (const auto& q : c.requests) longestOutput = std::max(longestOutput, q.outputTokens);
        }
        int32_t maxTokens = 64; // compare's --max-tokens default
        if (config.maxTokens)
            maxTokens = *config.maxTokens;
        else if (longestOutput > 0)
            maxTokens = static_cast<int32_t>(std::min<int64_t>(longestOutput, 1 << 20));
        std::vector<WorkloadRequest> prompts;
        try {
            prompts = loadPromptFile(file, tokenize, maxTokens);
        } catch (const std::runtime_error& e) {
            throw MigrationError(runName + "'s prompts: " + e.what());
        }
        if (stored > 0 && prompts.size() != stored)
            throw MigrationError(file + " holds " + std::to_string(prompts.size()) + " prompts but " + runName +
                                 " made " + std::to_string(stored) + " requests from " + recorded +
                                 ": not the run's prompts; give --prompts FILE with the same prompts");
        if (prompts.empty()) throw MigrationError(runName + "'s prompt file " + file + " holds no prompts");
        const size_t count = prompts.size();
        r.requests = promptFileWorkload(r.spec, std::move(prompts)); // compare's arrivals and warm-ups
        r.promptFile = file;
        r.maxTokens = maxTokens;
        r.spec.name = "file:" + file;
        r.source = "the prompt file " + file + " (" + std::to_string(count) + " prompts" +
                   (file == recorded ? "" : ", standing in for the run's " + recorded) + ")";
    }
    if (primed && r.spec.sharedPrefix.groups > 0) r.primers = prefixPrimers(r.requests, r.spec.sharedPrefix.prefixTokens);
    return r;
}

bool sloMet(const MonitorResult& m) {
    return std::all_of(m.slo.begin(), m.slo.end(), [](const SloCheck& c) { return c.met; });
}

BatchingKnobs batchingOfProfile(const std::string& profileJson) {
    BatchingKnobs k; // the fast built-in: off, 1, 2048, 0
    try {
        const auto j = nlohmann::json::parse(profileJson);
        if (j.contains("batching") && j["batching"].is_string()) k.dynamic = j["batching"] == "dynamic";
        if (j.contains("max_batch") && j["max_batch"].is_number_integer()) k.maxBatch = j["max_batch"].get<int32_t>();
        if (j.contains("max_batch_tokens") && j["max_batch_tokens"].is_number_integer())
            k.maxBatchTokens = j["max_batch_tokens"].get<int32_t>();
        if (j.contains("max_wait_ms") && j["max_wait_ms"].is_number()) k.maxWaitMs = j["max_wait_ms"].get<double>();
    } catch (const nlohmann::json::exception&) {
    }
    return k;
}

std::string profileWithBatching(const std::string& profileJson, const BatchingKnobs& k) {
    nlohmann::json p;
    try {
        p = nlohmann::json::parse(profileJson);
    } catch (const nlohmann::json::exception&) {
    }
    if (!p.is_object()) p = nlohmann::json{{"base", "fast"}};
    p["batching"] = k.dynamic ? "dynamic" : "off";
    p["max_batch"] = k.maxBatch;
    p["max_batch_tokens"] = k.maxBatchTokens;
    p["max_wait_ms"] = k.maxWaitMs;
    return p.dump();
}

BatchingProposal proposeBatching(const BatchingKnobs& cur, const MonitorResult& m, const Requirements& req) {
    BatchingProposal p{cur, cur, {}};
    const double queueShare = m.ttftP95Ms > 0 ? m.queueP95Ms / m.ttftP95Ms : 0.0;
    std::string why = "queue p95 " + num(m.queueP95Ms, 1) + " ms is " + num(100 * queueShare, 0) +
                      "% of TTFT p95 " + num(m.ttftP95Ms, 1) + " ms";
    if (queueShare >= 0.5) {
        // Requests wait for a slot: serve more of them per iteration.
        p.to.maxBatch = std::min(64, std::max(2, cur.maxBatch * 2));
        p.to.dynamic = true;
        const double tokens = std::ceil(p.to.maxBatch * std::max(1.0, m.meanPromptTokens) / 256.0) * 256.0;
        p.to.maxBatchTokens = std::max(cur.maxBatchTokens, static_cast<int32_t>(std::min(tokens, 1048576.0)));
        why += ": requests queue, so batch more of them";
    } else {
        // Little queueing: the iterations themselves are slow; smaller batches cut per-token time.
        p.to.maxBatch = std::max(1, cur.maxBatch / 2);
        p.to.dynamic = cur.dynamic && p.to.maxBatch > 1;
        why += ": little queueing, so smaller batches for faster iterations";
    }
    if (const auto limit = req.minTtftLimitMs()) {
        const double slack = *limit - m.ttftP95Ms;
        p.to.maxWaitMs = std::min(cur.maxWaitMs, std::max(0.0, slack / 2));
        why += "; TTFT slack " + num(slack, 1) + " ms bounds max_wait_ms";
    }
    p.reason = why + ".";
    return p;
}

std::vector<std::string> firedTriggers(const RollbackTrigger& t, const MonitorResult& m) {
    std::vector<std::string> fired;
    if (t.hitRateFloor > 0 && m.hitRate < t.hitRateFloor)
        fired.push_back("prefix hit rate " + num(m.hitRate, 3) + " is below the floor " + num(t.hitRateFloor, 3));
    for (const auto& c : m.slo) // each bound at its own percentile
        if (!c.met)
            fired.push_back(c.measured ? c.key + " " + num(c.measuredMs, 1) + " ms is above the SLO " +
                                             num(c.limitMs, 0) + " ms"
                                       : c.key + " has no successful request to measure (SLO " +
                                             num(c.limitMs, 0) + " ms)");
    return fired;
}

bool Checklist::complete() const {
    return clientStreams.has_value() && !warmupPlan.empty() && !monitoringMetrics.empty() && !rollbackPlan.empty();
}

MigrationState startMigration(const SelectionResult& sel, const Requirements& req, const std::string& fastProfileJson) {
    MigrationState s;
    s.overCapTolerance = req.inputs.overCapTolerance;
    s.statedMaxInput = req.inputs.maxTokens;
    if (sel.verdict == Verdict::Recommended && sel.recommendation == Mode::Regular)
        s.regularBecause = "the selection recommends regular mode (" + sel.headline + ")";
    for (const auto& c : sel.scores) {
        if (c.mode == Mode::Fast) {
            s.trigger.hitRateFloor = kHitRateFloorShare * c.hitRate;
            if (c.contextCap > 0) s.contextCap = c.contextCap;
        } else {
            s.regularSlo = c.slo;
        }
    }
    s.batching = batchingOfProfile(fastProfileJson);
    s.checklist.monitoringMetrics = sel.monitoring;
    s.checklist.warmupPlan = "preload the weights and prime the shared prefixes before taking traffic; "
                             "schedule model updates after the warm-up window";
    s.checklist.rollbackPlan = "keep regular mode deployed as the fallback channel; route traffic back to it "
                               "when the prefix hit rate falls below " + num(s.trigger.hitRateFloor, 3) +
                               " or a p99 exceeds its SLO";
    s.lastNote = "start: assess the context needs of the prompts";
    return s;
}

void assessContext(MigrationState& s, const PromptHistogram& h) {
    require(s, {N::A}, "assessing the context needs");
    s.histogram = h;
    enter(s, N::B);
    const std::string counts = std::to_string(h.overCap) + " of " + std::to_string(h.count) + " prompts (" +
                               num(100 * h.share, 1) + "%) exceed " + std::to_string(h.cap) + " tokens";
    if (!s.regularBecause.empty()) {
        enter(s, N::C);
        s.lastNote = s.regularBecause + "; " + counts + ": keep regular mode";
    } else if (s.statedMaxInput && *s.statedMaxInput > s.contextCap) {
        enter(s, N::C);
        s.lastNote = "the stated longest input, " + std::to_string(*s.statedMaxInput) +
                     " tokens, exceeds fast mode's effective cap of " + std::to_string(s.contextCap) + " (" + counts +
                     "): keep regular mode";
    } else if (inputsExceedCap(h, s.overCapTolerance)) {
        enter(s, N::C);
        s.lastNote = counts + ", over the tolerance: keep regular mode";
    } else {
        enter(s, N::D);
        s.lastNote = counts + ": warm the cache up next";
    }
}

void recordWarmup(MigrationState& s, const WarmupResult& w) {
    require(s, {N::D}, "recording the warm-up");
    s.warmup = w;
    if (const std::string why = checkWarmup(w); !why.empty()) {
        s.lastNote = "warm-up check failed: " + why;
        return;
    }
    std::string images;
    if (w.imagePrompts > 0) images = ", " + std::to_string(w.imagePrompts) + " of them with their images encoded";
    if (w.imagePromptsSkipped > 0)
        images += "; " + std::to_string(w.imagePromptsSkipped) +
                  " prompts with images were not primed (no vision encoder given: text alone caches no block "
                  "those requests look up)";
    s.checklist.warmupPlan = "preload and prime " + std::to_string(w.primedPrompts) + " prefixes" + images +
                             " (measured " + num(w.wallMs, 0) + " ms) before taking traffic; model updates are refused "
                             "during the warm-up, so schedule them after it";
    enter(s, N::E);
    s.lastNote = "warm-up took " + num(w.wallMs, 0) + " ms and refused the model update: enable fast mode";
}

void enableFast(MigrationState& s) {
    require(s, {N::E}, "enabling fast mode");
    enter(s, N::F);
    s.lastNote = "fast mode enabled: run the monitoring workload";
}

void recordMonitoring(MigrationState& s, const MonitorResult& m, const Requirements& req) {
    require(s, {N::F}, "recording a monitoring pass");
    s.monitoring.push_back(m);
    enter(s, N::G);
    const auto fired = firedTriggers(s.trigger, m);
    const bool coldCache = s.trigger.hitRateFloor > 0 && m.hitRate < s.trigger.hitRateFloor;
    // The rollback plan's triggers hold at every pass: a cold cache rolls back even when the
    // SLOs are met (batching cannot fix it); a p99 over its SLO counts as a miss.
    if (coldCache) return rollBack(s, fired.front() + " (batching cannot fix a cold cache)");
    if (sloMet(m) && fired.empty()) {
        enter(s, N::H);
        s.lastNote = "every SLO met and no rollback trigger fired (hit rate " + num(m.hitRate, 3) +
                     "): migration done";
        return;
    }
    if (s.adjustments >= s.maxAdjustments) {
        std::string why = (sloMet(m) ? "rollback trigger still fired after " : "SLO still missed after ") +
                          std::to_string(s.adjustments) + " batching adjustments";
        for (const auto& f : fired) why += "; " + f;
        return rollBack(s, why);
    }
    BatchingProposal next = proposeBatching(s.batching, m, req);
    if (next.to == next.from) {
        std::string why = "no batching knob left to move (" + next.reason + ")";
        for (const auto& f : fired) why += "; " + f;
        return rollBack(s, why + "; the SLO needs another precision or a faster device");
    }
    s.proposals.push_back(std::move(next));
    enter(s, N::I);
    std::string why = "SLO missed";
    if (sloMet(m)) {
        why = "every SLO met, but a rollback trigger fired";
        for (const auto& f : fired) why += "; " + f;
    }
    s.lastNote = why + ": " + s.proposals.back().reason;
}

void applyBatching(MigrationState& s) {
    require(s, {N::I}, "applying batching parameters");
    s.batching = s.proposals.back().to;
    ++s.adjustments;
    enter(s, N::F);
    s.lastNote = "batching set to max_batch " + std::to_string(s.batching.maxBatch) + ", max_batch_tokens " +
                 std::to_string(s.batching.maxBatchTokens) + ", max_wait_ms " + num(s.batching.maxWaitMs, 1) +
                 ": monitor again";
}

void rollBack(MigrationState& s, const std::string& reason) {
    require(s, {N::F, N::G, N::I}, "rolling back");
    s.rolledBack = true;
    s.rollbackReason = reason;
    // Regular's own figures against the same bounds, so the fallback is not mistaken for a fix.
    std::string regular;
    for (const auto& c : s.regularSlo)
        if (c.measured)
            regular += (regular.empty() ? "" : ", ") + c.key + " " + num(c.measuredMs, 1) + " ms vs " +
                       num(c.limitMs, 0) + " ms" + (c.met ? "" : " (missed)");
    const bool regularMisses = std::any_of(s.regularSlo.begin(), s.regularSlo.end(),
                                           [](const SloCheck& c) { return c.measured && !c.met; });
    if (!regular.empty())
        s.rollbackReason += "; regular mode measured " + regular +
                            (regularMisses ? ": it also misses this SLO" : ": it meets this SLO");
    enter(s, N::C);
    s.lastNote = "rolled back to regular mode: " + s.rollbackReason;
}

} // namespace mb::lab
