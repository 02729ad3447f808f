// VisionEncoder: decode, preprocess and encode under one lock, timed.
#include "server/vision_encoder.h"

#include "engine/image.h"

#include <chrono>

namespace mb::server {

VisionEncoder::VisionEncoder(std::shared_ptr<const engine::ClipModel> clip, int threads, const engine::Device& device)
    : m_clip(std::move(clip)), m_pool(threads), m_encoder(engine::makeImageEncoder(*m_clip, m_pool, device)) {}

VisionEncoder::Encoded VisionEncoder::encode(std::span<const uint8_t> bytes, const std::string& name) {
    std::lock_guard g(m_mutex);
    const auto t0 = std::chrono::steady_clock::now();
    Encoded out;
    out.rows = m_encoder->encodeImage(engine::decodeImage(bytes, name));
    out.encodeSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
}

} // namespace mb::server
