// The executable migration flowchart (PRODUCT.md §7): nodes A–I, their checks, the checklist.
//
//   A[assess context needs] --> B{input > 32K?}
//   B -- yes --> C[keep regular mode]
//   B -- no --> D[cache warm-up] --> E[enable fast mode] --> F[monitor key metrics]
//   F --> G{latency SLO met?}
//   G -- yes --> H[migration done]
//   G -- no --> I[adjust batching parameters] --> F
//   rollback: F, G or I --> C when a trigger fires (hit rate below the floor at any pass,
//   a p99 above its SLO after the last allowed adjustment) or the user rolls back.
//
// The machine runs nothing: callers (GUI, CLI) run the prompt scan, the warm-up, the
// monitoring workload, and feed the results in (replayRun rebuilds the selection run's
// requests for them). Each node's check is a pure function. Plain values; a
// MigrationState is saved with its selection as JSON.
#pragma once

#include "lab/metrics.h"
#include "lab/requirements.h"
#include "lab/selection.h"
#include "lab/workload.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mb::lab {

enum class MigrationNode { A, B, C, D, E, F, G, H, I };
const char* nodeName(MigrationNode n);  // "A" ... "I"
const char* nodeTitle(MigrationNode n); // "assess context needs", ...
// The flowchart's edges, exactly: {from, to, label} with label "yes"/"no"/"".
struct MigrationEdge {
    MigrationNode from, to;
    const char* label;
};
const std::vector<MigrationEdge>& migrationEdges();

// A step that the current node does not allow (e.g. recording monitoring at node D).
class MigrationError : public std::logic_error {
public:
    using std::logic_error::logic_error;
};

// A: token lengths of a prompt corpus. Bins are powers of two: [0, 1], (1, 2], (2, 4], ...
// up to the bin holding the longest prompt; the cap's bin ends exactly at the cap when
// the cap is a power of two (32,768 is), so "over the cap" is the bins above it.
struct PromptHistogram {
    struct Bin {
        int64_t upTo = 0; // inclusive upper bound, tokens
        int64_t count = 0;
    };
    std::vector<Bin> bins;
    int64_t count = 0, overCap = 0, longest = 0, cap = kFastContextCap;
    double share = 0; // overCap / count
};
PromptHistogram promptLengthHistogram(const std::vector<int64_t>& lengths, int64_t cap = kFastContextCap);

// B: do inputs exceed the fast-mode cap beyond the tolerance? (the selection's context rule)
bool inputsExceedCap(const PromptHistogram& h, double tolerance);

// D: what warming up measured (migration_warmup.h runs it against a real session).
struct WarmupResult {
    double wallMs = 0;       // start (or priming) until the session was idle, measured by the caller
    double engineWarmupMs = 0; // the session's own warm-up figure (SessionStats::warmupMs)
    int64_t primedPrompts = 0;
    uint64_t cachedBytes = 0;  // KV bytes held after warm-up (the primed prefixes)
    bool reloadAttempted = false;
    bool reloadRefused = false; // a model update during warm-up was refused, as fast mode must
    std::string reloadMessage;
    // Of primedPrompts, those primed with their images (encoded first); and prompts with
    // images that were not primed because no vision encoder was given (their text alone
    // would cache blocks that no request with the image looks up).
    int64_t imagePrompts = 0;
    int64_t imagePromptsSkipped = 0;
};
// Passes when the warm-up finished and a model update attempted during it was refused.
// Returns "" when it passes, else one sentence saying why not.
std::string checkWarmup(const WarmupResult& w);

// F: one monitoring pass over a candidate's measured requests.
struct MonitorResult {
    int64_t runId = 0; // the run it was measured in, 0 when not stored
    double hitRate = 0;
    std::vector<SloCheck> slo; // every requirement bound against this pass
    std::vector<SloCheck> p99; // per SLO metric: its p99 against the metric's largest limit (shown, not a trigger)
    double queueP95Ms = 0, ttftP95Ms = 0;
    double meanPromptTokens = 0, requestsPerS = 0;
    int64_t requests = 0;
};
// From a run summary (lab::summarize of the monitoring run's records).
MonitorResult monitorFromSummary(const RunSummary& s, const Requirements& req, int64_t runId = 0);

// D and F replay the selection run's own prompts. The store keeps token counts, not
// prompts: compare records a prompt-file run as workload_json {"name": "file:PATH", ...}
// with its RunConfig (lab/run_config.h: the prompt file, max_tokens, primers); a synthetic
// run is rebuilt exactly from its spec and seed, a prompt file's through promptFileWorkload.
struct RunReplay {
    WorkloadSpec spec;                     // the run's; name "file:PATH" for the file read
    std::vector<WorkloadRequest> requests; // with the run's arrivals (and its warm-ups)
    std::vector<WorkloadRequest> primers;  // the run's unrecorded prefix primers, if it had any
    std::string promptFile;                // the file read, "" for a synthetic workload
    std::optional<int32_t> maxTokens;      // a prompt file: what its lines without max_tokens got
    std::string source;                    // one phrase, e.g. "the prompt file p.txt (6 prompts)"
};
// `fallbackPromptFile` (e.g. migrate --prompts) stands in when the run's recorded prompt
// file cannot be read here (a relative path is relative to where compare ran). Lines
// without max_tokens get the config's max_tokens, else the most output tokens any
// request of the run produced. Throws MigrationError, naming the file and what to do, when
// no readable file holds the run's prompts, or when the file's prompt count differs from
// the run's request count (then it is not the run's workload).
RunReplay replayRun(const StoredRun& run, const std::string& fallbackPromptFile,
                    const std::function<std::vector<int32_t>(const std::string&)>& tokenize,
                    const TokenSpace& tokens);

// G: every bound of the requirements met by the pass.
bool sloMet(const MonitorResult& m);

// I: new batching knobs from the measured queue and latency (docs/SELECTION.md):
// queueing ≥ half of TTFT p95 → double max_batch (≤ 64) and turn batching on, tokens
// per batch = max_batch × mean prompt rounded up to 256; otherwise the batch itself is
// slow → halve max_batch (≥ 1). max_wait_ms = min(current, max(0, (TTFT limit − TTFT
// p95) / 2)): never wait longer than half the remaining TTFT slack.
struct BatchingKnobs {
    bool dynamic = false;
    int32_t maxBatch = 1;
    int32_t maxBatchTokens = 2048;
    double maxWaitMs = 0;
    bool operator==(const BatchingKnobs&) const = default;
};
struct BatchingProposal {
    BatchingKnobs from, to;
    std::string reason; // the measured numbers it rests on
};
BatchingProposal proposeBatching(const BatchingKnobs& current, const MonitorResult& m, const Requirements& req);
// The knobs of a stored profile JSON (missing keys: the fast built-in's values).
BatchingKnobs batchingOfProfile(const std::string& profileJson);
// The stored profile JSON with `knobs` written over its batching keys (what steps D and F
// run); a text that is not a JSON object becomes {"base": "fast"} plus the knobs.
std::string profileWithBatching(const std::string& profileJson, const BatchingKnobs& knobs);

// Rollback triggers: hit rate below the floor, an SLO missed at its own percentile (a p95
// bound is checked at p95). At G a fired hit-rate trigger rolls back at once (even with
// every SLO met); a missed SLO is what batching may fix, so it loops through I and rolls
// back after the last allowed adjustment, or at once when no batching knob is left to move.
struct RollbackTrigger {
    double hitRateFloor = 0;
};
std::vector<std::string> firedTriggers(const RollbackTrigger& t, const MonitorResult& m);

struct Checklist {
    std::optional<bool> clientStreams; // unknown until the user answers
    std::string warmupPlan;
    std::vector<std::string> monitoringMetrics;
    std::string rollbackPlan;
    bool complete() const; // every item answered or filled
};

struct MigrationState {
    MigrationNode node = MigrationNode::A;
    std::vector<MigrationNode> path{MigrationNode::A}; // every node entered, in order
    int32_t adjustments = 0;    // I → F loops taken
    int32_t maxAdjustments = 3; // at G, a miss after this many loops rolls back
    bool rolledBack = false;
    std::string rollbackReason;
    double overCapTolerance = 0;
    // From the selection: why it recommends regular ("" when it does not; then A -> B -> C),
    // fast's effective context cap (min of profile cap and model context) and the stated
    // longest input, which node A checks; regular's measured SLO checks, quoted on rollback.
    std::string regularBecause;
    int64_t contextCap = kFastContextCap;
    std::optional<int64_t> statedMaxInput;
    std::vector<SloCheck> regularSlo;
    RollbackTrigger trigger;
    std::optional<PromptHistogram> histogram;
    std::optional<WarmupResult> warmup;
    std::vector<MonitorResult> monitoring;   // one per F pass
    std::vector<BatchingProposal> proposals; // one per I pass
    BatchingKnobs batching;                  // current knobs of the fast candidate
    Checklist checklist;
    std::string lastNote; // what the last step decided, one sentence

    bool finished() const { return node == MigrationNode::C || node == MigrationNode::H; }
};

// A walk-through for a selection: its requirements' tolerance and stated longest input, the
// selection's verdict (a regular recommendation walks A -> B -> C), fast's effective cap, the
// rollback floor from the measured fast hit rate, the fast candidate's batching knobs, and a
// checklist filled from the selection's monitoring list.
MigrationState startMigration(const SelectionResult& selection, const Requirements& req,
                              const std::string& fastProfileJson);

// The transitions. Each checks that the state is at the node it belongs to (else
// MigrationError) and moves along the flowchart's edges.
// A → B → C or D. Build `h` with s.contextCap; a stated longest input over the cap, or a
// selection that recommends regular, goes to C with the reason.
void assessContext(MigrationState& s, const PromptHistogram& h);
void recordWarmup(MigrationState& s, const WarmupResult& w);     // D → E (stays at D if the check fails)
void enableFast(MigrationState& s);                              // E → F
// F → G → H (every SLO met, no trigger fired), I or C
void recordMonitoring(MigrationState& s, const MonitorResult& m, const Requirements& req);
void applyBatching(MigrationState& s);                           // I → F with the last proposal's knobs
void rollBack(MigrationState& s, const std::string& reason);     // F, G or I → C

nlohmann::ordered_json toJson(const MigrationState& s);
// Throws MigrationError naming the key on a bad document.
MigrationState migrationFromJson(const nlohmann::json& j);

} // namespace mb::lab
