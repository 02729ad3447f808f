// The CPU image encoder (ClipModel's own pass) and the factory that picks an encoder by device.
#include "engine/image_encoder.h"

#include "engine/clip_preprocess.h"

#include <stdexcept>
#include <string>

#ifdef MODEBENCH_HAVE_CUDA
#include "engine/cuda_clip.h"
#endif

namespace mb::engine {

namespace {

// ClipModel::encode (engine/clip_forward.cpp) on the caller's pool.
class CpuImageEncoder final : public ImageEncoder {
public:
    CpuImageEncoder(const ClipModel& clip, kernels::ThreadPool& pool) : m_clip(clip), m_pool(pool) {}
    std::vector<float> encode(const float* chw) override { return m_clip.encode(chw, m_pool); }
    const ClipModel& model() const override { return m_clip; }
    Device device() const override { return {}; }

private:
    const ClipModel& m_clip;
    kernels::ThreadPool& m_pool;
};

} // namespace

std::vector<float> ImageEncoder::encodeImage(const RgbImage& img) {
    const std::vector<float> chw = clipPreprocess(img, model().preprocessParams());
    return encode(chw.data());
}

std::unique_ptr<ImageEncoder> makeImageEncoder(const ClipModel& clip, kernels::ThreadPool& pool, const Device& device) {
    if (device.kind == Device::Kind::Cpu) return std::make_unique<CpuImageEncoder>(clip, pool);
#ifdef MODEBENCH_HAVE_CUDA
    return std::make_unique<CudaClip>(clip, device.index);
#else
    throw std::invalid_argument(device.id() + ": this build has no CUDA backend");
#endif
}

} // namespace mb::engine
