// A target with a vision encoder: encodes a request's images on a thread of its own, then hands the request on.
#pragma once

#include "engine/clip_model.h"
#include "engine/devices.h"
#include "engine/image_encoder.h"
#include "lab/target.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace mb::kernels {
class ThreadPool;
}
namespace mb::engine {
class ImageEncoder;
}

namespace mb::lab {

// Encodes `images` with `clip` on `pool` and lays them out in `request` as a serving engine
// with llava's layout does: placeholder slots right after the prompt's first token (BOS),
// the images in order, each a PromptImage at its position (the session writes the slots'
// ids). `pixels` gives an image's pixels (decoded or drawn; not timed). Returns the encode
// time in ms. Throws std::runtime_error naming the image that fails, and
// std::invalid_argument when the request already has image embeddings.
using PixelsFn = std::function<std::shared_ptr<const engine::RgbImage>(const WorkloadImage&)>;
double placeImages(engine::InferenceRequest& request, const std::vector<WorkloadImage>& images,
                   engine::ImageEncoder& encoder, int64_t dim, const PixelsFn& pixels);

// Wraps the embedded engine's target. A request with images waits in the encoder's queue
// (FIFO, one image encoder per candidate, as a serving engine runs its vision tower),
// is encoded there (preprocess, CLIP ViT, projector: `encodeMs`), gets its images' tokens
// right after its first prompt token (BOS) and goes to the inner target. Its TTFT thus
// counts the wait for the encoder and the encoding; the Finished event carries `images`
// and `encodeMs`. Requests without images go straight through.
//
// Ids: those of requests with images have the top bit set; the others are the inner
// target's. Events carry the id submit() returned.
//
// Threads: submit/cancel/stats/waitIdle from any thread; the encoder thread calls sinks for
// requests it ends (cancelled while queued, an image that fails) and the inner target's
// thread the rest. The destructor cancels what is queued and joins the encoder.
class ImageTarget final : public Target {
public:
    // `clip` must project to the inner model's width (ClipModel::checkEmbeddingWidth).
    // `threads`: the encoder's thread pool (the candidate's --threads); `device`: where the
    // encoder runs (the candidate's, as its session's; engine::makeImageEncoder).
    ImageTarget(std::unique_ptr<Target> inner, std::shared_ptr<const engine::ClipModel> clip, int64_t modelDim,
                int threads, const engine::Device& device = {});
    ~ImageTarget() override;

    // Decodes every file image of `requests` once, kept for the target's life, so a bad file
    // fails before the run starts: throws engine::ImageError naming it. Synthetic images
    // are drawn when encoded.
    void prepare(const std::vector<WorkloadRequest>& requests);

    uint64_t submit(engine::InferenceRequest request, engine::EventSink sink) override;
    uint64_t submitImages(engine::InferenceRequest request, std::vector<WorkloadImage> images,
                          engine::EventSink sink) override;
    bool cancel(uint64_t id) override;
    // The inner target's, with requests waiting for (or in) the encoder counted as waiting.
    engine::SessionStats stats() const override;
    void waitIdle() override;
    std::string describe() const override { return m_inner->describe(); }

    const engine::ClipModel& clip() const { return *m_clip; }

private:
    struct Job {
        uint64_t id = 0;
        engine::InferenceRequest request;
        std::vector<WorkloadImage> images;
        engine::EventSink sink;
    };
    static constexpr uint64_t kOwnBit = uint64_t{1} << 63;

    void encoderLoop();
    // Encodes the job's images into its request; returns the encode time in ms. Throws
    // (engine::ImageError, engine::ClipError, std::bad_alloc...) for an image that fails.
    double encodeInto(Job& job);
    void finishEarly(const Job& job, engine::FinishStatus status, const std::string& error);
    void handOn(Job job, double encodeMs);
    std::shared_ptr<const engine::RgbImage> pixels(const WorkloadImage& im);

    std::unique_ptr<Target> m_inner;
    std::shared_ptr<const engine::ClipModel> m_clip;
    int64_t m_dim = 0;
    std::unique_ptr<kernels::ThreadPool> m_pool;
    std::unique_ptr<engine::ImageEncoder> m_encoder; // used by the encoder thread only

    mutable std::mutex m_mutex;
    std::condition_variable m_changed;
    std::deque<Job> m_queue;
    uint64_t m_current = 0;            // the job the encoder thread holds, else 0
    bool m_stop = false;
    uint64_t m_nextId = 1;
    std::set<uint64_t> m_cancelled;    // own ids cancelled before they reached the inner target
    std::unordered_map<uint64_t, uint64_t> m_innerIds; // own id → inner id (0 while being submitted)
    std::map<std::string, std::shared_ptr<const engine::RgbImage>> m_decoded; // by path
    std::thread m_thread;
};

} // namespace mb::lab
