// The selection framework (PRODUCT.md §6): feasibility first, four rules in order, a headroom score.
//
// Inputs are recorded runs (StoredRun with requests, e.g. db::RunStore::getRun(id)); each
// run must hold one fast and one regular candidate, told apart by their stored profile
// JSON ("base", else "name"). Several runs of the same two candidates are repeats: the
// decision pools their requests and the confidence comes from a seeded bootstrap over the
// runs; one run gets no confidence figure (a within-run bootstrap only flags ties) and a
// warning. Runs that are points of a load sweep (their configuration's "sweep", written by
// compare --sweep) do not enter the decision: they give each mode's capacity (lab/capacity.h).
// docs/SELECTION.md has every formula.
#pragma once

#include "lab/capacity.h"
#include "lab/cost_model.h"
#include "lab/metrics.h"
#include "lab/precision_check.h"
#include "lab/requirements.h"
#include "lab/selection_basics.h"
#include "lab/stored_run.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mb::lab {

// Fast mode's default context cap (PRODUCT.md §1); a stored fast profile's max_context
// overrides it. An input is "over the cap" when it has MORE tokens than this.
inline constexpr int64_t kFastContextCap = 32768;
// Rule 2: a TTFT requirement strictly under this requires fast mode.
inline constexpr double kLatencyRuleTtftMs = 3000;
// Rule 4: subtracted from fast mode's score (scale [0, 1]) with low operations capability.
inline constexpr double kLowOpsPenalty = 0.15;
// Monitoring floor for the prefix hit rate: this share of the measured rate.
inline constexpr double kHitRateFloorShare = 0.8;
// A recommendation is "within the noise" below this confidence.
inline constexpr double kClearConfidence = 0.95;
// Latency score: a bound's score falls from 1 to 0 as measured/limit goes from
// 1/kHeadroomSpan to kHeadroomSpan (0.5 at the limit), linearly in log(measured/limit).
inline constexpr double kHeadroomSpan = 100;
// Weighted totals closer than this are a tie ("no clear winner").
inline constexpr double kTieMargin = 0.02;
// Dominance: better on every measured metric by at least this ratio (worse / better).
inline constexpr double kDominanceMinRatio = 1.05;

// What the selection concluded. Only Recommended names a mode to deploy; the other two
// keep SelectionResult::recommendation at Regular (the channel that needs no migration).
enum class Verdict { Recommended, NoClearWinner, NoneFeasible };
const char* verdictName(Verdict v); // "recommended", "no_clear_winner", "none_feasible"

// The context cap the engine enforces (Session::contextLimit): min(profile max_context,
// model context − 1); the profile cap alone when the model's context is unknown (<= 0).
int64_t effectiveContextCap(int64_t profileCap, int64_t modelContext);


struct TraceEntry {
    std::string rule; // "feasibility", "quality", "context", "latency", "cost", "operations"
    bool fired = false;
    std::string detail; // one sentence with the measured numbers
};

// A figure measured in every run: mean, 95% interval and coefficient of variation across runs.
struct RunSpread {
    std::string key; // "ttft_ms.p95", "requests_per_s"
    int64_t runs = 0;
    double mean = 0, ci95Low = 0, ci95High = 0, cv = 0;
};

struct CandidateScore {
    Mode mode = Mode::Fast;
    std::string label;   // the candidate's label in the (first) run
    std::string profile; // profile name
    std::vector<SloCheck> slo;
    bool meetsSlo = false;
    double okShare = 0;    // Ok requests / requests
    // Requests measured, and of them: rejected, failed otherwise (error, cancelled), and
    // truncated (the fast-mode policy dropped prompt tokens).
    int64_t requests = 0, rejected = 0, failed = 0, truncated = 0;
    double hitRate = 0;    // Σ cached / Σ prompt tokens of requests that reached the engine
    double requestsPerS = 0;
    double inputTokensPerRequest = 0, outputTokensPerRequest = 0; // measured means (Ok)
    std::optional<CostProjection> cost; // with a price sheet
    // The same month at 0% and 100% cache hits (reference rows beside the measured rate).
    std::optional<CostProjection> costNoHits, costAllHits;
    bool hotUpdates = false, customBatching = false; // what the profile supports
    std::string precision; // the profile's precision ("mixed", "native", ...)
    // Its precision A/B against the model's F32 output (the first run that measured one).
    std::optional<PrecisionCheck> quality;
    // Context: the effective cap, and the workload's inputs (stated or measured) over it.
    int64_t contextCap = 0, profileCap = 0, modelContext = 0; // modelContext 0: unknown
    int64_t inputsOverCap = 0, inputs = 0;
    // Feasibility: every SLO bound met and the inputs fit; `gaps` says what failed, with
    // its size ("TTFT p95 68.5 ms vs 20 ms: 3.4× over"), `remedies` what could close it.
    bool feasible = false;
    std::vector<std::string> gaps, remedies;
    std::vector<RunSpread> spread; // across runs (empty with one run)
    // Components in [0, 1] and the weighted total (after the operations penalty).
    double latency = 0, costScore = 0, features = 0, opsPenalty = 0, total = 0;
};

// Where the context rule's share came from; `cap` is fast's effective cap.
struct InputLengths {
    std::string source; // "prompt_file" or "runs"
    std::string promptFile;
    int64_t count = 0, overCap = 0, longest = 0, cap = kFastContextCap;
    double share = 0;      // overCap / count
    double meanTokens = 0; // mean input length: the month's traffic when monthly does not state it
    int64_t profileCap = kFastContextCap, modelContext = 0; // cap = effectiveContextCap(these)
};

struct SelectionResult {
    Verdict verdict = Verdict::Recommended;
    Mode recommendation = Mode::Regular; // meaningful when verdict == Recommended
    std::string decidedBy; // "feasibility", "context", "latency", "cost", "score" or "dominance"
    // One line for every front end: the verdict, the deciding rule and its margin
    // ("fast mode, by the latency rule: TTFT p95 2,410 ms vs < 3,000 ms").
    std::string headline;
    std::string ruleMargin; // the deciding rule's measured value against its threshold
    // Share of run-bootstrap replicates that give the same mode; only for a score decision
    // over several runs (a rule reports its margin instead; one run measures no run noise).
    std::optional<double> confidence;
    std::string basis;       // one sentence on where the confidence (or its absence) comes from
    bool marginWithinNoise = true; // a tie, or a score decision whose run noise was not measured
    std::string dominance;   // "fast is better on all 8 measured metrics (...), by 4.1–12×, ..."; "" if none
    std::optional<Mode> dominant; // the mode that sentence names; it breaks a tie of the scores
    std::vector<std::string> tieReasons; // with NoClearWinner: why, then what would separate them
    std::vector<std::string> warnings;   // one run per candidate, high CV across runs
    struct Noise {
        std::string method; // "runs" (bootstrap over runs) or "requests" (within one run)
        int64_t replicates = 0, agreeing = 0;
        uint64_t seed = 0;
        double scoreMargin = 0; // winner's total − the other's (fast − regular without a winner)
        double ci95Low = 0, ci95High = 0;
    } noise;
    std::vector<TraceEntry> trace;      // feasibility, quality (the precisions and the floor), then the four rules, in order
    std::vector<std::string> conflicts; // e.g. context and latency both fired
    std::vector<CandidateScore> scores; // fast first, then regular
    struct Weights {
        double latency = 0, cost = 0, features = 0; // normalised, as used
    } weights;
    InputLengths inputs;
    std::optional<PriceSheet> prices; // the sheet the costs used (report formulas)
    // Each mode's capacity from the sweep runs among the inputs (fast first; empty without a sweep).
    std::vector<ModeCapacity> capacity;
    std::vector<std::string> monitoring; // what a fast deployment must watch
    std::vector<int64_t> runIds;

    const CandidateScore& score(Mode m) const; // throws std::out_of_range without it
};

struct SelectionOptions {
    // Turns a prompt of requirements.inputs.prompt_file into token ids; required when the
    // requirements name a prompt file (the CLI and GUI pass a model's tokenizer).
    std::function<std::vector<int32_t>(const std::string&)> tokenize;
    // Relative prompt files are read from here ("" = the working directory).
    std::string baseDirectory;
    int bootstrapReplicates = 200; // over runs (several) or requests (one run)
    uint64_t seed = 42;
};

// Sentences on a candidate whose figures rest on little: most of its requests failed or
// were rejected, or most were truncated ("" when neither). The latency rule's detail
// carries them, and the CLI prints them beside the recommendation.
std::string dataCaveat(const CandidateScore& c);

// Applies the rules to runs loaded with their requests; sweep points among them size the
// capacity instead. Throws SelectionError for runs that cannot be compared (a run given twice
// among them, only sweep points), and what loadPromptFile throws for a bad prompt file.
SelectionResult select(const Requirements& requirements, const std::optional<PriceSheet>& prices,
                       const std::vector<StoredRun>& runs, const SelectionOptions& options = {});

// Repeats should replay one workload: a sentence per run whose stored workload (spec, or
// prompt file) differs from the first run's; empty when they agree.
std::vector<std::string> workloadMismatches(const std::vector<StoredRun>& runs);

// The statistic an SLO bound names, read from a distribution.
double statisticOf(const Distribution& d, SloStat s);

// Which mode a stored profile JSON belongs to ("base", else "name"); nullopt for neither.
std::optional<Mode> modeOfProfile(const std::string& profileJson);

// {"verdict", "recommendation" (null unless recommended), "decided_by", "headline",
//  "rule_margin", "confidence" (null when none), "basis", "margin_within_noise", "dominance",
//  "tie_reasons", "warnings", "noise", "trace", "conflicts", "scores": {"fast": {...},
//  "regular": {...}, "weights"}, "cost": {"fast", "regular"} (null without prices), "inputs",
//  "monitoring", "run_ids"}
nlohmann::ordered_json toJson(const SelectionResult& r);
// Reads toJson's output back (stored selections); throws SelectionError on a bad document.
SelectionResult selectionResultFromJson(const nlohmann::json& j);

} // namespace mb::lab
