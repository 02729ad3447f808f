// Feasibility before any ranking: each candidate against every SLO bound and its effective context cap.
#include "lab/selection_internal.h"

#include <algorithm>

namespace mb::lab::selection_detail {

namespace {

// Gaps over this ratio are rarely closed by serving knobs alone.
constexpr double kKnobReachableRatio = 10;
// Queueing at least this share of TTFT: the candidate waits more than it computes.
constexpr double kQueueBoundShare = 0.5;

std::string capText(const CandidateScore& c) {
    std::string s = "its cap of " + grouped(static_cast<double>(c.contextCap), 0) + " tokens";
    if (c.modelContext > 0)
        s += " (min of profile max_context " + grouped(static_cast<double>(c.profileCap), 0) + " and model context " +
             grouped(static_cast<double>(c.modelContext), 0) + " − 1)";
    return s;
}

// Mean queueing over mean TTFT of the side's Ok requests: where the first token's time goes.
double queueShareOfTtft(const Side& side) {
    double queue = 0, ttft = 0;
    for (const Req& q : side.reqs)
        if (q.ok && q.ttft > 0 && q.queue >= 0) {
            queue += q.queue;
            ttft += q.ttft;
        }
    return ttft > 0 ? queue / ttft : 0;
}

std::vector<std::string> latencyRemedies(const CandidateScore& c, const Side& side, double worstRatio) {
    std::vector<std::string> out;
    const double queued = queueShareOfTtft(side);
    if (queued >= kQueueBoundShare)
        out.push_back("more replicas or a bounded queue: queueing is " + pct(queued) + " of " + modeName(c.mode) +
                      "'s TTFT");
    if (c.customBatching)
        out.push_back("batching knobs (a smaller max_wait_ms or max_batch, a prefill_chunk that fits the prompts)");
    else if (queued >= kQueueBoundShare)
        out.push_back("a small max_batch (batching is off, so queued requests wait for each other)");
    if (c.precision != "int8" && c.precision != "q4_0")
        out.push_back("another precision (" + std::string(modeName(c.mode)) + " runs " + c.precision +
                      "; int8 or q4_0 move fewer weight bytes per token)");
    out.push_back(worstRatio > kKnobReachableRatio
                      ? "a faster device or a smaller model: a gap over " + ratioText(kKnobReachableRatio) +
                            " is rarely closed by knobs alone"
                      : "a faster device");
    return out;
}

// The quality floor's gaps: each bound the precision A/B misses, or its absence.
void qualityGaps(CandidateScore& c, const Requirements& req) {
    const auto& f = req.quality;
    if (meetsQualityFloor(c, req)) return;
    const std::string who = modeName(c.mode);
    if (!c.quality) {
        c.gaps.push_back(who + " quality not measured: the requirements set a quality floor and no run measured " + who +
                         "'s precision A/B");
        c.remedies.push_back("compare --precision-check 8 (the precision A/B against the model's F32 output)");
        return;
    }
    const PrecisionCheck& q = *c.quality;
    bool missed = false;
    if (f.minAgreement && q.agreement < *f.minAgreement) {
        c.gaps.push_back(who + " greedy agreement " + num(q.agreement, 3) + " vs ≥ " + num(*f.minAgreement, 3));
        missed = true;
    }
    if (f.maxMeanKl && q.meanKl > *f.maxMeanKl) {
        c.gaps.push_back(who + " mean KL " + num(q.meanKl, 4) + " nats vs ≤ " + num(*f.maxMeanKl, 4));
        missed = true;
    }
    if (f.maxPerplexityRatio && perplexityRatio(q) > *f.maxPerplexityRatio) {
        c.gaps.push_back(who + " perplexity ratio " + num(perplexityRatio(q), 3) + " vs ≤ " +
                         num(*f.maxPerplexityRatio, 3));
        missed = true;
    }
    if (missed)
        c.remedies.push_back("a higher precision (" + who + " runs " + c.precision +
                             "; f16 or f32 weights keep closer to the F32 output)");
}

} // namespace

bool meetsQualityFloor(const CandidateScore& c, const Requirements& req) {
    const auto& f = req.quality;
    if (!f.any()) return true;
    if (!c.quality) return false;
    const PrecisionCheck& q = *c.quality;
    return !(f.minAgreement && q.agreement < *f.minAgreement) && !(f.maxMeanKl && q.meanKl > *f.maxMeanKl) &&
           !(f.maxPerplexityRatio && perplexityRatio(q) > *f.maxPerplexityRatio);
}

std::string qualityText(const PrecisionCheck& q) {
    return "greedy agreement " + num(q.agreement, 3) + ", mean KL " + num(q.meanKl, 4) + " nats, perplexity ratio " +
           num(perplexityRatio(q), 3) + " (" + (q.precision.empty() ? std::string("native") : q.precision) + " vs " +
           q.reference + ", " + std::to_string(q.prompts) + " prompts)";
}

double perplexityRatio(const PrecisionCheck& q) {
    return q.referencePerplexity > 0 ? q.candidatePerplexity / q.referencePerplexity : 0.0;
}

bool inputsOverTolerance(int64_t overCap, int64_t count, int64_t cap, const Requirements& req) {
    const double share = count > 0 ? static_cast<double>(overCap) / static_cast<double>(count) : 0.0;
    const bool statedOver = req.inputs.maxTokens && *req.inputs.maxTokens > cap;
    return share > req.inputs.overCapTolerance || (statedOver && req.inputs.overCapTolerance == 0);
}

void checkFeasibility(CandidateScore& c, const Side& side, const Requirements& req, const Workload& w) {
    const std::string who = modeName(c.mode);
    c.profileCap = side.profileCap;
    c.modelContext = side.modelContext;
    c.contextCap = effectiveContextCap(side.profileCap, side.modelContext);
    c.inputs = static_cast<int64_t>(w.lengths.size());
    c.inputsOverCap = std::count_if(w.lengths.begin(), w.lengths.end(), [&](int64_t l) { return l > c.contextCap; });
    c.gaps.clear();
    c.remedies.clear();

    double worst = 0;
    for (const SloCheck& k : c.slo) {
        if (k.met) continue;
        if (!k.measured) {
            c.gaps.push_back(who + " " + boundText(k.key) + " not measured (no successful request defines it; limit " +
                             ms(k.limitMs) + ")");
            continue;
        }
        const double ratio = k.measuredMs / k.limitMs;
        worst = std::max(worst, ratio);
        c.gaps.push_back(who + " " + boundText(k.key) + " " + measuredText(c, k) + " vs " + ms(k.limitMs) + ": " +
                         ratioText(ratio) + " over");
    }
    if (worst > 0) c.remedies = latencyRemedies(c, side, worst);

    if (inputsOverTolerance(c.inputsOverCap, c.inputs, c.contextCap, req)) {
        const double share = c.inputs > 0 ? static_cast<double>(c.inputsOverCap) / static_cast<double>(c.inputs) : 0;
        std::string gap = who + (c.mode == Mode::Fast ? " truncates " : " rejects ") + std::to_string(c.inputsOverCap) +
                          " of " + std::to_string(c.inputs) + " inputs (" + pct(share) + ") longer than " + capText(c) +
                          "; tolerance " + pct(req.inputs.overCapTolerance);
        if (req.inputs.maxTokens && *req.inputs.maxTokens > c.contextCap)
            gap += "; the stated max_tokens " + grouped(static_cast<double>(*req.inputs.maxTokens), 0) +
                   " is over the cap";
        c.gaps.push_back(gap);
        const bool modelBound = c.modelContext > 0 && c.contextCap < c.profileCap;
        c.remedies.push_back(modelBound ? "a model with a longer context (this one takes " +
                                              grouped(static_cast<double>(c.modelContext), 0) + " tokens)"
                                        : "a larger max_context in the " + who + " profile");
    }
    qualityGaps(c, req);
    c.feasible = c.gaps.empty();
}

} // namespace mb::lab::selection_detail
