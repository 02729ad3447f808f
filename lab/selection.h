// The selection framework (PRODUCT.md §6): four rules in order, a weighted score, a confidence.
//
// Inputs are recorded runs (StoredRun with requests, e.g. db::RunStore::getRun(id)); each
// run must hold one fast and one regular candidate, told apart by their stored profile
// JSON ("base", else "name"). Several runs of the same two candidates are repeats: the
// decision pools their requests and the confidence comes from the per-run decisions; one
// run gets a seeded bootstrap over its requests. docs/SELECTION.md has every formula.
#pragma once

#include "lab/cost_model.h"
#include "lab/metrics.h"
#include "lab/requirements.h"
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

enum class Mode { Fast, Regular };
const char* modeName(Mode m); // "fast", "regular"

// Runs that cannot be compared (no fast or no regular candidate, no stored requests, a
// prompt file that cannot be read). One line.
class SelectionError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct TraceEntry {
    std::string rule; // "context", "latency", "cost", "operations"
    bool fired = false;
    std::string detail; // one sentence with the measured numbers
};

struct SloCheck {
    std::string key; // "ttft_ms.p95"
    double limitMs = 0;
    double measuredMs = 0; // the statistic over the candidate's Ok requests
    bool met = false;
    bool measured = true; // false when no Ok request defines the metric (measuredMs is then 0)
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
    bool hotUpdates = false, customBatching = false; // what the profile supports
    // Components in [0, 1] and the weighted total (after the operations penalty).
    double latency = 0, costScore = 0, features = 0, opsPenalty = 0, total = 0;
};

// Where the context rule's share came from.
struct InputLengths {
    std::string source; // "prompt_file" or "runs"
    std::string promptFile;
    int64_t count = 0, overCap = 0, longest = 0, cap = kFastContextCap;
    double share = 0; // overCap / count
};

struct SelectionResult {
    Mode recommendation = Mode::Regular;
    std::string decidedBy; // "context", "latency", "cost" or "score"
    double confidence = 0; // share of replicates (bootstrap or runs) giving the same mode
    bool marginWithinNoise = true;
    struct Noise {
        std::string method; // "bootstrap" or "repeated_runs"
        int64_t replicates = 0, agreeing = 0;
        uint64_t seed = 0;  // bootstrap only
        double scoreMargin = 0; // winner's total − the other's, on the pooled data
        double ci95Low = 0, ci95High = 0;
    } noise;
    std::vector<TraceEntry> trace;      // the four rules, in order
    std::vector<std::string> conflicts; // e.g. context and latency both fired
    std::vector<CandidateScore> scores; // fast first, then regular
    struct Weights {
        double latency = 0, cost = 0, features = 0; // normalised, as used
    } weights;
    InputLengths inputs;
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
    int bootstrapReplicates = 200;
    uint64_t seed = 42;
};

// Sentences on a candidate whose figures rest on little: most of its requests failed or
// were rejected, or most were truncated ("" when neither). The latency rule's detail
// carries them, and the CLI prints them beside the recommendation.
std::string dataCaveat(const CandidateScore& c);

// Applies the rules to runs loaded with their requests. Throws SelectionError for runs
// that cannot be compared (a run given twice among them), and what loadPromptFile throws
// for a bad prompt file.
SelectionResult select(const Requirements& requirements, const std::optional<PriceSheet>& prices,
                       const std::vector<StoredRun>& runs, const SelectionOptions& options = {});

// Repeats should replay one workload: a sentence per run whose stored workload (spec, or
// prompt file) differs from the first run's; empty when they agree.
std::vector<std::string> workloadMismatches(const std::vector<StoredRun>& runs);

// The statistic an SLO bound names, read from a distribution.
double statisticOf(const Distribution& d, SloStat s);

// Which mode a stored profile JSON belongs to ("base", else "name"); nullopt for neither.
std::optional<Mode> modeOfProfile(const std::string& profileJson);

// {"recommendation", "decided_by", "confidence", "margin_within_noise", "noise", "trace",
//  "conflicts", "scores": {"fast": {...}, "regular": {...}, "weights"}, "cost": {"fast",
//  "regular"} (null without prices), "inputs", "monitoring", "run_ids"}
nlohmann::ordered_json toJson(const SelectionResult& r);
// Reads toJson's output back (stored selections); throws SelectionError on a bad document.
SelectionResult selectionResultFromJson(const nlohmann::json& j);

} // namespace mb::lab
