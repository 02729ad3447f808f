// Node D of the migration flowchart, run for real: preload, prefix priming, a refused reload.
#pragma once

#include "engine/profile.h"
#include "engine/session.h"
#include "lab/migration.h"
#include "lab/stored_run.h"
#include "lab/workload.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mb::engine {
class ClipModel;
}

namespace mb::lab {

// Primes `prompts` into `session`'s prefix cache, attempts a reload of `reloadModelPath`
// while the warm-up window is open (fast mode must refuse it with ReloadError), and
// waits until the session is idle. wallMs counts from the call to idle. Blocks; call it
// off the UI thread (the GUI's engine thread). A reload that is accepted is reported,
// not hidden: reloadRefused is false and the session swaps models.
WarmupResult warmUp(engine::Session& session, std::vector<std::vector<int32_t>> prompts,
                    const std::string& reloadModelPath);

// Starts a session of `modelPath` under `profile` (preload profiles load and warm at
// once), then warmUp() with the same model as the attempted update. wallMs includes the
// start. Throws what Session::start throws.
WarmupResult runWarmup(const std::string& modelPath, const engine::Profile& profile,
                       std::vector<std::vector<int32_t>> prompts, const engine::SessionOptions& options = {});

// warmUp for a run's own requests (WorkloadRequest::prompt and ::images; the rest is
// ignored). A request with images is primed with them, encoded by the vision encoder of
// `mmprojPath` (on `threads` threads) and laid out as the run's ImageTarget lays them out
// (placeImages), so its blocks are keyed as the request's will be; the encoding counts in
// wallMs. Without an mmproj such requests are skipped (imagePromptsSkipped): their text
// alone would cache blocks that no request with the image looks up. Throws what
// ClipModel::load throws, and for an image that cannot be read or encoded.
WarmupResult warmUp(engine::Session& session, const std::vector<WorkloadRequest>& prompts,
                    const std::string& mmprojPath, const std::string& reloadModelPath, int threads = 1);
// runWarmup for a run's own requests, as the warmUp above.
WarmupResult runWarmup(const std::string& modelPath, const engine::Profile& profile,
                       const std::vector<WorkloadRequest>& prompts, const std::string& mmprojPath,
                       const engine::SessionOptions& options = {});

// The prompts node D primes from a run: its prefix primers (one per shared-prefix group)
// when it had them, else every measured request.
std::vector<WorkloadRequest> warmupPrompts(const RunReplay& replay);

// The vision encoder (mmproj) the run's candidate `label` ran with (RunConfig::Side::mmproj);
// "" when it had none or the run did not record it.
std::string candidateMmproj(const StoredRun& run, const std::string& label);

} // namespace mb::lab
