// Capacity at the team's volume (PRODUCT.md §6): a load sweep's goodput knee per mode, the
// replicas the month's peak needs, and the autoscaling thresholds to set.
//
// A sweep is a series of stored runs of the same two candidates, each at one load level
// (lab/sweep.h runs them; each run's configuration carries "sweep": {kind, level, index}).
// Every formula is in docs/SELECTION.md, "Capacity":
//   point meets   every SLO bound holds at its own statistic, and at most 1% of the
//                 requests were rejected or failed
//   knee          the highest-load point such that it and every lower-load point meet
//   per replica   C = the knee's achieved requests/s (Ok requests / the run's duration)
//   mean rate     m = monthly.requests / (30 × 86,400 s);  peak p = m × monthly.peak_to_mean (3)
//   replicas      R = ceil(p / C) (maxReplicas), Rmin = ceil(m / C) (minReplicas), both >= 1
//   utilisation   p / (R × C) at the peak, m / (Rmin × C) at the mean
//   scale out     queue depth q_out = max(1, p90 of the knee's per-second waiting);
//                 KV use: the knee's peak share of the KV pool (when the pool size is known);
//                 TTFT p95: the knee's measured TTFT p95
//   scale in      q_in = p90 of the waiting at the highest-load point at or under half the
//                 knee's load, kept under q_out (else q_out / 2)
//   hardware      R × 720 h a month × accelerator_hour (provisioned for the peak: an upper
//                 bound; an autoscaler between Rmin and R spends less)
// No Qt; pure functions of the stored runs and the requirements.
#pragma once

#include "lab/requirements.h"
#include "lab/selection_basics.h"
#include "lab/stored_run.h"
#include "lab/sweep_tag.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mb::lab {

// A sweep point meets the SLOs only with at most this share of rejected or failed requests.
inline constexpr double kSweepMaxFailedShare = 0.01;
// Scale-in is read at the highest load at or under this share of the knee's.
inline constexpr double kScaleInLoadShare = 0.5;

// The sweep tag of the run's configuration (RunConfig::sweep); nullopt for an ordinary run.
// Throws SelectionError naming the run for a malformed tag.
std::optional<SweepTag> sweepTagOf(const StoredRun& run);

// One candidate at one level of the sweep.
struct SweepPoint {
    int64_t runId = 0;
    double level = 0;        // as SweepTag::level (a probe: its achieved requests/s)
    bool probe = false;
    double load = 0;         // what the knee is ordered by: offered requests/s (rates), in flight
    double achievedPerS = 0; // Ok requests / the run's duration
    double goodputPerS = 0;  // requests whose own figures meet every bound, / the duration
    std::vector<SloCheck> slo;
    double failedShare = 0;  // rejected + failed, of the requests
    bool meets = false;
    std::string miss;        // why it does not meet ("ttft_ms.p95 812 ms vs 500 ms"); "" when it does
    double queueDepthP90 = 0; // p90 of the per-second maximum of waiting requests
    double ttftP95Ms = 0;
    std::optional<double> kvShare; // peak KV bytes / the pool's bytes, when the pool size is stored
};

struct ModeCapacity {
    Mode mode = Mode::Fast;
    SweepKind kind = SweepKind::Concurrency;
    std::vector<SweepPoint> points; // by load, ascending
    std::optional<size_t> knee;     // index into points; nullopt: no point met the SLOs
    double perReplicaPerS = 0;      // the knee's achieved requests/s
    // The team's volume (monthly.requests stated and a knee found); otherwise `notSized` says why.
    bool sized = false;
    std::string notSized;
    double peakToMean = 3, meanPerS = 0, peakPerS = 0;
    int replicas = 0, minReplicas = 0;  // for the peak, for the mean
    double utilisationPeak = 0, utilisationMean = 0;
    // Thresholds (with a knee).
    double scaleOutQueueDepth = 0, scaleInQueueDepth = 0, scaleOutTtftP95Ms = 0;
    std::optional<double> scaleOutKvShare;
    std::vector<int64_t> runIds;
};

// Capacity of each mode over the sweep runs (each a run with a SweepTag and one fast and one
// regular candidate), fast first; empty without sweep runs. Throws SelectionError when the
// sweep mixes kinds or a run cannot be read.
std::vector<ModeCapacity> capacityOf(const Requirements& req, const std::vector<StoredRun>& sweepRuns);

// One sentence per mode for texts and reports ("fast: knee at concurrency 4 (11.8 requests/s per
// replica); the month's peak 3.5 requests/s needs 1 replica at 30% utilisation").
std::string capacitySentence(const ModeCapacity& c);
// Lines of the formulas with this mode's figures (docs/SELECTION.md, "Capacity").
std::vector<std::string> capacityFormulaLines(const ModeCapacity& c);

nlohmann::ordered_json toJson(const ModeCapacity& c);
ModeCapacity modeCapacityFromJson(const nlohmann::json& j); // toJson's output back

} // namespace mb::lab
