// Node D of the migration flowchart, run for real: preload, prefix priming, a refused reload.
#pragma once

#include "engine/profile.h"
#include "engine/session.h"
#include "lab/migration.h"

#include <cstdint>
#include <string>
#include <vector>

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

} // namespace mb::lab
