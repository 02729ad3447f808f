// Running node D against an engine session: timing the warm-up and the refused model update.
#include "lab/migration_warmup.h"

#include "engine/clip_model.h"
#include "kernels/cpu/thread_pool.h"
#include "lab/image_target.h"
#include "lab/run_config.h"
#include "lab/workload_images.h"

#include <algorithm>
#include <chrono>
#include <memory>

namespace mb::lab {

namespace {

double msSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

WarmupResult warmUpFrom(engine::Session& session, std::vector<engine::InferenceRequest> prompts,
                        const std::string& reloadModelPath, std::chrono::steady_clock::time_point t0) {
    WarmupResult r;
    r.primedPrompts = static_cast<int64_t>(prompts.size());
    r.imagePrompts = std::count_if(prompts.begin(), prompts.end(), [](const auto& p) { return !p.images.empty(); });
    // primePrompts opens the warm-up window before it returns, so the reload below
    // falls inside it deterministically.
    session.primePrompts(std::move(prompts));
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

std::vector<engine::InferenceRequest> requestsOf(std::vector<std::vector<int32_t>> prompts) {
    std::vector<engine::InferenceRequest> out(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) out[i].prompt = std::move(prompts[i]);
    return out;
}

std::shared_ptr<const engine::RgbImage> pixelsOf(const WorkloadImage& im) {
    return std::make_shared<const engine::RgbImage>(im.synthetic() ? syntheticImage(im) : engine::loadImage(im.path));
}

// The requests' prompts, with their images encoded and placed (placeImages); those with
// images but no mmproj to encode them are left out and counted in `skipped`.
std::vector<engine::InferenceRequest> withImages(const std::vector<WorkloadRequest>& prompts,
                                                 const std::string& mmprojPath, int64_t dim, int threads,
                                                 int64_t& skipped) {
    std::unique_ptr<engine::ClipModel> clip;
    std::unique_ptr<kernels::ThreadPool> pool;
    // Encoded on the CPU. A session on CUDA keys its requests' image blocks by the CUDA
    // encoder's rows, which may differ in the last bits: there only the blocks before the
    // first image would be primed.
    std::unique_ptr<engine::ImageEncoder> encoder;
    std::vector<engine::InferenceRequest> requests;
    for (const WorkloadRequest& w : prompts) {
        engine::InferenceRequest r;
        r.prompt = w.prompt;
        if (!w.images.empty()) {
            if (mmprojPath.empty()) {
                ++skipped;
                continue;
            }
            if (!clip) {
                clip = std::make_unique<engine::ClipModel>(engine::ClipModel::load(mmprojPath));
                clip->checkEmbeddingWidth(dim);
                pool = std::make_unique<kernels::ThreadPool>(std::max(1, threads));
                encoder = engine::makeImageEncoder(*clip, *pool, engine::Device{});
            }
            placeImages(r, w.images, *encoder, dim, pixelsOf);
        }
        requests.push_back(std::move(r));
    }
    return requests;
}

WarmupResult warmUpWith(engine::Session& session, const std::vector<WorkloadRequest>& prompts,
                        const std::string& mmprojPath, const std::string& reloadModelPath, int threads,
                        std::chrono::steady_clock::time_point t0) {
    int64_t skipped = 0;
    std::vector<engine::InferenceRequest> requests =
        withImages(prompts, mmprojPath, session.config().dim, threads, skipped);
    WarmupResult r = warmUpFrom(session, std::move(requests), reloadModelPath, t0);
    r.imagePromptsSkipped = skipped;
    return r;
}

} // namespace

WarmupResult warmUp(engine::Session& session, std::vector<std::vector<int32_t>> prompts,
                    const std::string& reloadModelPath) {
    return warmUpFrom(session, requestsOf(std::move(prompts)), reloadModelPath, std::chrono::steady_clock::now());
}

WarmupResult runWarmup(const std::string& modelPath, const engine::Profile& profile,
                       std::vector<std::vector<int32_t>> prompts, const engine::SessionOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto session = engine::Session::start(modelPath, profile, options);
    return warmUpFrom(*session, requestsOf(std::move(prompts)), modelPath, t0);
}

WarmupResult warmUp(engine::Session& session, const std::vector<WorkloadRequest>& prompts,
                    const std::string& mmprojPath, const std::string& reloadModelPath, int threads) {
    return warmUpWith(session, prompts, mmprojPath, reloadModelPath, threads, std::chrono::steady_clock::now());
}

WarmupResult runWarmup(const std::string& modelPath, const engine::Profile& profile,
                       const std::vector<WorkloadRequest>& prompts, const std::string& mmprojPath,
                       const engine::SessionOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto session = engine::Session::start(modelPath, profile, options);
    return warmUpWith(*session, prompts, mmprojPath, modelPath, options.threads, t0);
}

std::vector<WorkloadRequest> warmupPrompts(const RunReplay& replay) {
    if (!replay.primers.empty()) return replay.primers;
    std::vector<WorkloadRequest> out;
    for (const WorkloadRequest& q : replay.requests)
        if (!q.warmup) out.push_back(q);
    return out;
}

std::string candidateMmproj(const StoredRun& run, const std::string& label) {
    const RunConfig config = runConfigFromText(run.info.configJson);
    for (const RunConfig::Side& side : config.candidates)
        if (side.label == label) return side.mmproj;
    return {};
}

} // namespace mb::lab
