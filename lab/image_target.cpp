// ImageTarget: a FIFO image encoder in front of the embedded engine (see image_target.h).
#include "lab/image_target.h"

#include "engine/image_encoder.h"
#include "engine/prompt_images.h"
#include "kernels/cpu/thread_pool.h"
#include "lab/workload_images.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace mb::lab {

namespace {

int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Decoded files kept for a run at most (beyond it, a file is decoded again when encoded).
constexpr size_t kDecodedBudgetBytes = size_t{512} << 20;

} // namespace

ImageTarget::ImageTarget(std::unique_ptr<Target> inner, std::shared_ptr<const engine::ClipModel> clip,
                         int64_t modelDim, int threads, const engine::Device& device)
    : m_inner(std::move(inner)), m_clip(std::move(clip)), m_dim(modelDim),
      m_pool(std::make_unique<kernels::ThreadPool>(std::max(1, threads))) {
    m_clip->checkEmbeddingWidth(modelDim);
    m_encoder = engine::makeImageEncoder(*m_clip, *m_pool, device);
    m_thread = std::thread([this] { encoderLoop(); });
}

ImageTarget::~ImageTarget() {
    std::deque<Job> left;
    {
        std::lock_guard g(m_mutex);
        m_stop = true;
        left.swap(m_queue);
    }
    m_changed.notify_all();
    m_thread.join();
    for (const Job& job : left) finishEarly(job, engine::FinishStatus::Cancelled, "");
    m_inner.reset(); // its last events still find this object whole
}

void ImageTarget::prepare(const std::vector<WorkloadRequest>& requests) {
    size_t held = 0;
    for (const WorkloadRequest& r : requests)
        for (const WorkloadImage& im : r.images) {
            if (im.synthetic()) {
                (void)syntheticImage(im); // throws for an impossible size now, not mid-run
                continue;
            }
            {
                std::lock_guard g(m_mutex);
                if (m_decoded.count(im.path)) continue;
            }
            auto img = std::make_shared<const engine::RgbImage>(engine::loadImage(im.path));
            if (held + img->rgb.size() > kDecodedBudgetBytes) continue; // checked; decoded again later
            held += img->rgb.size();
            std::lock_guard g(m_mutex);
            m_decoded.emplace(im.path, std::move(img));
        }
}

uint64_t ImageTarget::submit(engine::InferenceRequest request, engine::EventSink sink) {
    return m_inner->submit(std::move(request), std::move(sink));
}

uint64_t ImageTarget::submitImages(engine::InferenceRequest request, std::vector<WorkloadImage> images,
                                   engine::EventSink sink) {
    if (images.empty()) return submit(std::move(request), std::move(sink));
    uint64_t id = 0;
    {
        std::lock_guard g(m_mutex);
        id = kOwnBit | m_nextId++;
        m_queue.push_back(Job{id, std::move(request), std::move(images), std::move(sink)});
    }
    m_changed.notify_all();
    return id;
}

bool ImageTarget::cancel(uint64_t id) {
    if (!(id & kOwnBit)) return m_inner->cancel(id);
    uint64_t inner = 0;
    {
        std::lock_guard g(m_mutex);
        const bool queued = std::any_of(m_queue.begin(), m_queue.end(), [id](const Job& j) { return j.id == id; });
        const auto it = m_innerIds.find(id);
        if (queued || m_current == id || (it != m_innerIds.end() && it->second == 0)) {
            m_cancelled.insert(id); // the encoder, or handOn, ends it
            return true;
        }
        if (it == m_innerIds.end()) return false;
        inner = it->second;
    }
    return m_inner->cancel(inner);
}

engine::SessionStats ImageTarget::stats() const {
    engine::SessionStats s = m_inner->stats();
    std::lock_guard g(m_mutex);
    s.waiting += static_cast<int64_t>(m_queue.size()) + (m_current ? 1 : 0);
    return s;
}

void ImageTarget::waitIdle() {
    {
        std::unique_lock lock(m_mutex);
        m_changed.wait(lock, [this] { return m_queue.empty() && m_current == 0; });
    }
    m_inner->waitIdle();
}

std::shared_ptr<const engine::RgbImage> ImageTarget::pixels(const WorkloadImage& im) {
    if (im.synthetic()) return std::make_shared<const engine::RgbImage>(syntheticImage(im));
    {
        std::lock_guard g(m_mutex);
        if (const auto it = m_decoded.find(im.path); it != m_decoded.end()) return it->second;
    }
    return std::make_shared<const engine::RgbImage>(engine::loadImage(im.path));
}

double placeImages(engine::InferenceRequest& request, const std::vector<WorkloadImage>& images,
                   engine::ImageEncoder& encoder, int64_t dim, const PixelsFn& pixels) {
    if (!request.images.empty()) throw std::invalid_argument("the request already has image embeddings");
    const int64_t at = request.prompt.empty() ? 0 : 1; // right after BOS
    int64_t pos = at;
    double ms = 0;
    for (size_t k = 0; k < images.size(); ++k) {
        try {
            const auto img = pixels(images[k]); // decoding and drawing are not encoding
            const auto t0 = std::chrono::steady_clock::now();
            std::vector<float> rows = encoder.encodeImage(*img);
            ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
            engine::PromptImage placed = engine::makePromptImage(std::move(rows), dim);
            placed.position = pos;
            pos += placed.count;
            request.images.push_back(std::move(placed));
        } catch (const std::exception& e) {
            throw std::runtime_error("image " + std::to_string(k + 1) + " of " + std::to_string(images.size()) + " (" +
                                     images[k].describe() + "): " + e.what());
        }
    }
    // Placeholder slots; the session writes their ids (engine/prompt_images.h).
    request.prompt.insert(request.prompt.begin() + at, static_cast<size_t>(pos - at), 0);
    return ms;
}

double ImageTarget::encodeInto(Job& job) {
    return placeImages(job.request, job.images, *m_encoder, m_dim,
                       [this](const WorkloadImage& im) { return pixels(im); });
}

void ImageTarget::finishEarly(const Job& job, engine::FinishStatus status, const std::string& error) {
    engine::RequestEvent e;
    e.id = job.id;
    e.kind = engine::EventKind::Finished;
    e.timeNs = nowNs();
    e.status = status;
    e.error = error;
    e.promptTokens = static_cast<int64_t>(job.request.prompt.size());
    e.images = static_cast<int64_t>(job.images.size());
    job.sink(e);
}

void ImageTarget::handOn(Job job, double encodeMs) {
    const uint64_t own = job.id;
    bool cancelled = false;
    {
        std::lock_guard g(m_mutex);
        m_current = 0;
        cancelled = m_cancelled.erase(own) > 0;
        if (!cancelled) m_innerIds[own] = 0; // cancel() now marks it for the lines below
    }
    m_changed.notify_all();
    if (cancelled) return finishEarly(job, engine::FinishStatus::Cancelled, "");
    const auto images = static_cast<int64_t>(job.images.size());
    engine::EventSink wrapped = [this, own, images, encodeMs, sink = std::move(job.sink)](const engine::RequestEvent& e) {
        engine::RequestEvent out = e;
        out.id = own;
        if (e.kind == engine::EventKind::Finished) {
            out.images = images;
            out.encodeMs = encodeMs;
            std::lock_guard g(m_mutex);
            m_innerIds.erase(own);
        }
        sink(out);
    };
    const uint64_t inner = m_inner->submit(std::move(job.request), std::move(wrapped));
    bool cancelNow = false;
    {
        std::lock_guard g(m_mutex);
        if (const auto it = m_innerIds.find(own); it != m_innerIds.end()) { // not finished already
            it->second = inner;
            cancelNow = m_cancelled.erase(own) > 0;
        }
    }
    if (cancelNow) m_inner->cancel(inner);
}

void ImageTarget::encoderLoop() {
    for (;;) {
        Job job;
        bool cancelled = false;
        {
            std::unique_lock lock(m_mutex);
            m_changed.wait(lock, [this] { return m_stop || !m_queue.empty(); });
            if (m_stop) return; // the destructor ends what is queued
            job = std::move(m_queue.front());
            m_queue.pop_front();
            m_current = job.id;
            cancelled = m_cancelled.erase(job.id) > 0;
        }
        double ms = 0;
        std::string error;
        if (!cancelled) {
            try {
                ms = encodeInto(job);
            } catch (const std::exception& e) {
                error = e.what();
            }
        }
        if (cancelled || !error.empty()) {
            finishEarly(job, cancelled ? engine::FinishStatus::Cancelled : engine::FinishStatus::Error, error);
            {
                std::lock_guard g(m_mutex);
                m_current = 0;
                m_cancelled.erase(job.id);
            }
            m_changed.notify_all();
            continue;
        }
        handOn(std::move(job), ms);
    }
}

} // namespace mb::lab
