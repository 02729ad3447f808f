// What the selection's files share (not installed, not for callers): requests reduced to what the rules read.
//
// selection_sides.cpp turns stored runs into Sides and measures them; selection_feasibility.cpp
// checks each candidate against every SLO and its context cap; selection_scoring.cpp holds
// the headroom, features and dominance formulas; selection_rules.cpp applies the rules in
// order; selection.cpp repeats the decision over runs or requests and writes the headline.
#pragma once

#include "lab/selection.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mb::lab::selection_detail {

// A request reduced to what the rules read.
struct Req {
    bool ok = false;
    bool reached = false;   // reached the engine (every status but Rejected)
    bool truncated = false; // the fast-mode policy dropped prompt tokens
    double ttft = -1, e2e = -1, tpot = -1, queue = -1;
    std::vector<double> gaps; // inter-token gaps, ms
    double prompt = 0, cached = 0, output = 0;
};

// One mode's requests, pooled over the runs it was measured in.
struct Side {
    Mode mode = Mode::Fast;
    std::string label, profile, precision;
    std::vector<Req> reqs;
    double durationS = 0;
    bool hotUpdates = false, customBatching = false;
    uint64_t kvBytesPeak = 0;
    int64_t profileCap = kFastContextCap;
    int64_t modelContext = 0; // the model's own context (shape "context_length"); 0 unknown
    std::optional<PrecisionCheck> quality; // the candidate summary's precision A/B
};

// The workload both candidates are judged on: input lengths (stated prompt file, else the
// runs' prompts before truncation) and the month's traffic.
struct Workload {
    std::vector<int64_t> lengths;
    InputLengths fastInputs; // the context rule's view (fast's effective cap)
    double outputTokensPerRequest = 0; // pooled measured mean over both candidates' Ok requests
    // Replicas a capacity sweep sized for the month's peak (0: no sweep, or not sized): the
    // hardware cost is then replicas × 720 h × accelerator_hour.
    int fastReplicas = 0, regularReplicas = 0;
};

// The fast and regular sides of each run, checked (SelectionError when they cannot be compared).
std::vector<std::pair<Side, Side>> sidesOf(const std::vector<StoredRun>& runs);
Side pooled(const std::vector<const Side*>& sides);
std::vector<size_t> allIndices(size_t n);

// Measured facts of one side over a sample of its requests (indices, repeats allowed): SLO
// checks with their headroom, counts, the month's cost on the shared traffic, features.
// `spread` (the side's figures across runs, for the pooled measurement of several runs)
// travels into the gaps' text as "± half the 95% interval".
CandidateScore measure(const Side& side, const std::vector<size_t>& sample, const Requirements& req,
                       const std::optional<PriceSheet>& prices, const Workload& workload,
                       std::vector<RunSpread> spread = {});
// Each SLO statistic and requests_per_s of one mode across the runs (empty for one run).
std::vector<RunSpread> spreadOf(Mode mode, const std::vector<std::pair<Side, Side>>& perRun, const Requirements& req,
                                const std::optional<PriceSheet>& prices, const Workload& workload);

// Feasibility (selection_feasibility.cpp): fills contextCap, inputsOverCap, feasible, gaps, remedies.
void checkFeasibility(CandidateScore& c, const Side& side, const Requirements& req, const Workload& workload);
// Whether the stated or measured inputs exceed this cap beyond the tolerance.
bool inputsOverTolerance(int64_t overCap, int64_t count, int64_t cap, const Requirements& req);

// "greedy agreement 0.972, mean KL 0.0031 nats, perplexity ratio 1.004 (mixed vs f32, 8 prompts)".
std::string qualityText(const PrecisionCheck& q);
double perplexityRatio(const PrecisionCheck& q); // candidate / reference; 0 without a reference
// Every bound of the requirements' quality floor met by c's precision A/B (true without a floor).
bool meetsQualityFloor(const CandidateScore& c, const Requirements& req);

// Scores (selection_scoring.cpp).
double headroomScore(double measuredMs, double limitMs);
double featuresScore(const CandidateScore& c, const Requirements& req);
// Which candidate is better on every measured metric, and the sentence ("fast is better on
// all 8 measured metrics (...), by 4.1–12×, ..."), over the pooled sides; with several runs the
// winner must also be better on every metric in every run. nullopt and "" when neither is.
struct Dominance {
    std::optional<Mode> mode;
    std::string sentence;
};
Dominance dominanceOf(const Side& fast, const Side& regular, const std::vector<std::pair<Side, Side>>& perRun);

// One decision: feasibility, then rules 1-4, then the score (selection_rules.cpp).
struct Decision {
    Verdict verdict = Verdict::Recommended;
    Mode mode = Mode::Regular;
    std::string decidedBy;
    std::string ruleMargin;
    std::vector<TraceEntry> trace;
    std::vector<std::string> conflicts;
    SelectionResult::Weights weights;
    std::vector<std::string> monitoring;
};
Decision decide(const Requirements& req, bool havePrices, const InputLengths& in, CandidateScore& fast,
                CandidateScore& regular, uint64_t kvPeakFast);

// A stored JSON text parsed, or an empty object when it is empty or not JSON.
nlohmann::json parsedOrEmpty(const std::string& text);

// Text helpers shared by the selection's files.
std::string num(double v, int decimals);
std::string pct(double share);
std::string grouped(double v, int decimals); // 2410 -> "2,410"
std::string ms(double v);                    // "68.5 ms", "2,410 ms"
// A check's measured value, with "± h" (half its 95% interval across runs) when c.spread has it.
std::string measuredText(const CandidateScore& c, const SloCheck& k);
std::string ratioText(double r);             // "3.4×"
std::string boundText(const std::string& key); // "ttft_ms.p95" -> "TTFT p95"

} // namespace mb::lab::selection_detail
