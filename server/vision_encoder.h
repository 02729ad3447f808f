// The server's vision encoder: images decoded and encoded on the request's thread, one at a time, on one shared pool.
#pragma once

#include "engine/clip_model.h"
#include "engine/devices.h"
#include "engine/image_encoder.h"
#include "kernels/cpu/thread_pool.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace mb::server {

// Thread-safe. Decoding and encoding are serialised by a mutex: one image at a time uses the
// pool's threads (the pool takes one job at a time) and at most one decoded image is held
// (up to engine::kMaxImagePixels x 3 bytes), so concurrent image requests queue here, on
// their HTTP worker threads, before they reach the session.
class VisionEncoder {
public:
    // threads: the pool's size (serve's --threads); device: where the encoder runs (serve's
    // --device, as the session's). Throws std::runtime_error when the threads cannot start,
    // std::invalid_argument for a device this build or machine does not have.
    VisionEncoder(std::shared_ptr<const engine::ClipModel> clip, int threads, const engine::Device& device = {});

    int imageTokens() const { return m_clip->imageTokens(); }        // positions per image
    int embeddingWidth() const { return m_clip->embeddingWidth(); }  // floats per position

    struct Encoded {
        std::vector<float> rows;  // imageTokens() x embeddingWidth(), token-major
        double encodeSeconds = 0; // decoding + preprocessing + encoder + projector, waiting excluded
    };
    // Decodes `bytes` (PNG or JPEG; engine::ImageError with `name` otherwise), then encodes.
    Encoded encode(std::span<const uint8_t> bytes, const std::string& name);

private:
    std::shared_ptr<const engine::ClipModel> m_clip;
    std::mutex m_mutex; // guards m_pool and m_encoder
    kernels::ThreadPool m_pool;
    std::unique_ptr<engine::ImageEncoder> m_encoder;
};

} // namespace mb::server
