// Running node D against an engine session: timing the warm-up and the refused model update.
#include "lab/migration_warmup.h"

#include <chrono>

namespace mb::lab {

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

WarmupResult warmUpFrom(engine::Session& session, std::vector<std::vector<int32_t>> prompts,
                        const std::string& reloadModelPath, std::chrono::steady_clock::time_point t0) {
    WarmupResult r;
    r.primedPrompts = static_cast<int64_t>(prompts.size());
    // primePrefixes opens the warm-up window before it returns, so the reload below
    // falls inside it deterministically.
    session.primePrefixes(std::move(prompts));
    r.reloadAttempted = true;
    try {
        session.reload(reloadModelPath);
        r.reloadMessage = "reload accepted during the warm-up";
    } catch (const engine::ReloadError& e) {
        r.reloadRefused = true;
        r.reloadMessage = e.what();
    }
    session.waitIdle();
    r.wallMs = msSince(t0);
    const engine::SessionStats stats = session.stats();
    r.engineWarmupMs = stats.warmupMs;
    r.cachedBytes = stats.kvBytesInUse;
    return r;
}

} // namespace

WarmupResult warmUp(engine::Session& session, std::vector<std::vector<int32_t>> prompts,
                    const std::string& reloadModelPath) {
    return warmUpFrom(session, std::move(prompts), reloadModelPath, std::chrono::steady_clock::now());
}

WarmupResult runWarmup(const std::string& modelPath, const engine::Profile& profile,
                       std::vector<std::vector<int32_t>> prompts, const engine::SessionOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto session = engine::Session::start(modelPath, profile, options);
    return warmUpFrom(*session, std::move(prompts), modelPath, t0);
}

} // namespace mb::lab
