// The interface every image-encoder backend implements (CPU: ClipModel::encode; CUDA: CudaClip), and its factory.
#pragma once

#include "engine/clip_model.h"
#include "engine/devices.h"
#include "engine/image.h"

#include <memory>
#include <vector>

namespace mb::kernels {
class ThreadPool;
}

namespace mb::engine {

// One caller's encoder of images into language-model input rows with one mmproj: the CLIP ViT
// and the llava projector on one device. Uses (does not own) the ClipModel, which must outlive
// it. One thread at a time (the CUDA one sets its device on the calling thread at every call).
class ImageEncoder {
public:
    virtual ~ImageEncoder() = default;

    // chw: 3 x imageSize x imageSize floats from clipPreprocess. Returns imageTokens() x
    // embeddingWidth() floats, token-major, as ClipModel::encode does. Throws
    // kernels::cuda::CudaError on a CUDA failure.
    virtual std::vector<float> encode(const float* chw) = 0;
    // Preprocess + encode.
    std::vector<float> encodeImage(const RgbImage& img);

    virtual const ClipModel& model() const = 0;
    virtual Device device() const = 0;
};

// The encoder for `device`: the CPU pass on `pool` (used, not owned), or CudaClip on cuda:N
// (weights uploaded now, as F32). Throws std::invalid_argument when the build has no CUDA
// backend or the device does not exist; the device must come from resolveDevice(), the same
// choice the language model's backend gets (makeForwardBackend).
std::unique_ptr<ImageEncoder> makeImageEncoder(const ClipModel& clip, kernels::ThreadPool& pool, const Device& device);

} // namespace mb::engine
