// A llava-style CLIP ViT vision encoder with its MLP projector, loaded from an "mmproj" GGUF
// (general.architecture = clip, as llama.cpp's convert_image_encoder_to_gguf.py writes it).
//
// Block convention: like llama.cpp c392e509's clip.cpp, encode() runs only the first
// clip.vision.block_count - 1 stored blocks (see ClipHParams::blocksRun and
// docs/ARCHITECTURE.md "Image input"): the goldens come from that code, so numbers match.
#pragma once

#include "engine/clip_preprocess.h"
#include "engine/image.h"
#include "kernels/clip_math.h"

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mb::kernels {
class ThreadPool;
}

namespace mb::engine {

// Any problem with an mmproj file or its use. what() is one line naming the file.
class ClipError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Hyperparameters from the clip.* / clip.vision.* keys, checked against the tensor shapes.
struct ClipHParams {
    int imageSize = 0;      // clip.vision.image_size, px (input is imageSize x imageSize)
    int patchSize = 0;      // clip.vision.patch_size, px (conv kernel and stride)
    int hidden = 0;         // clip.vision.embedding_length (128 tiny, 1024 ViT-L)
    int ffn = 0;            // clip.vision.feed_forward_length
    int heads = 0;          // clip.vision.attention.head_count
    float eps = 1e-5f;      // clip.vision.attention.layer_norm_epsilon
    int blockCount = 0;     // clip.vision.block_count: blocks stored in the file
    int blocksRun = 0;      // blocks encode() runs: blockCount - 1 (llama.cpp c392e509)
    bool useGelu = false;   // clip.use_gelu: tanh-GELU in the FFN, else quick-GELU
    bool useSilu = false;   // clip.use_silu (optional): SiLU in the FFN when not useGelu
    int projectorHidden = 0; // mm.0 output width
    int projectionWidth = 0; // mm.2 output width = the language model's n_embd
    std::array<float, 3> mean{};
    std::array<float, 3> std{};

    int gridSide() const { return imageSize / patchSize; }        // patches per side
    int patches() const { return gridSide() * gridSide(); }        // image tokens
    int headDim() const { return hidden / heads; }
    // The encoder FFN's activation: tanh-GELU when useGelu, else SiLU when useSilu, else quick-GELU.
    kernels::clip::Activation activation() const {
        using A = kernels::clip::Activation;
        return useGelu ? A::GeluTanh : useSilu ? A::Silu : A::QuickGelu;
    }
};

struct ClipWeights; // engine/clip_weights.h: every tensor converted to F32

// Loaded once, then immutable: encode() may run on several threads at once with distinct
// pools. Weights are held as F32 (F16 tensors are converted at load).
class ClipModel {
public:
    // Loads and checks an mmproj file: architecture clip, vision encoder only, llava MLP
    // projector, every required key and tensor with its shape, F32 or F16 tensors.
    // Throws ClipError ("mmproj PATH: ...") on anything else; the file is not kept open.
    static ClipModel load(const std::string& path);

    ClipModel(ClipModel&&) noexcept;
    ClipModel& operator=(ClipModel&&) noexcept;
    ~ClipModel();

    const ClipHParams& hparams() const { return m_hp; }
    const std::string& path() const { return m_path; }
    int imageSize() const { return m_hp.imageSize; }
    int patchSize() const { return m_hp.patchSize; }
    // Tokens one image becomes: (imageSize / patchSize)^2.
    int imageTokens() const { return m_hp.patches(); }
    // Features per image token (mm.2.bias length); must equal the language model's n_embd.
    int embeddingWidth() const { return m_hp.projectionWidth; }
    ClipPreprocessParams preprocessParams() const;

    // Throws ClipError "mmproj X projects to 256 features but the model's embedding width is 4096"
    // unless embeddingWidth() == nEmbd.
    void checkEmbeddingWidth(int64_t nEmbd) const;

    // chw: 3 x imageSize x imageSize floats from clipPreprocess. Returns imageTokens() x
    // embeddingWidth() floats, token-major (patch index = py * gridSide + px).
    std::vector<float> encode(const float* chw, kernels::ThreadPool& pool) const;
    // The same on a one-thread pool made for the call.
    std::vector<float> encode(const float* chw) const;
    // Preprocess + encode.
    std::vector<float> encodeImage(const RgbImage& img, kernels::ThreadPool& pool) const;

    // The tensors as F32 (engine/clip_weights.h), for other encoder backends (CudaClip).
    const ClipWeights& weights() const { return *m_w; }

private:
    ClipModel();
    std::string m_path;
    ClipHParams m_hp;
    std::unique_ptr<ClipWeights> m_w;
};

} // namespace mb::engine
