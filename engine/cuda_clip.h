// The CLIP ViT encoder and llava projector on a CUDA device: weights resident as F32, products on cuBLAS.
//
// Built only with MODEBENCH_HAVE_CUDA; no CUDA types here (kernels/cuda/device_buffer.h is
// plain C++). Computes what ClipModel::encode (engine/clip_forward.cpp) computes, in the same
// order of steps: patch embedding, class token and positions, pre-LN, blocksRun pre-norm blocks
// (non-causal attention, the file's FFN activation), optional post-LN, the class token dropped,
// mm.2(GELU(mm.0(x))).
#pragma once

#include "engine/image_encoder.h"
#include "kernels/cuda/device_buffer.h"

#include <memory>
#include <vector>

namespace mb::engine {

struct ClipLinear; // engine/clip_weights.h
struct ClipNorm;

// Owns the device copy of the mmproj's tensors (uploaded in the constructor, F32: about twice
// the bytes of an F16 file), a stream, a cuBLAS handle and the activations of one image. Uses
// (does not own) the ClipModel. One thread at a time; every call sets the device on the calling
// thread. Throws kernels::cuda::CudaError on any CUDA failure.
class CudaClip final : public ImageEncoder {
public:
    CudaClip(const ClipModel& clip, int deviceIndex);
    ~CudaClip() override;

    std::vector<float> encode(const float* chw) override;
    const ClipModel& model() const override { return m_clip; }
    Device device() const override { return {Device::Kind::Cuda, m_deviceIndex}; }

    uint64_t deviceWeightBytes() const { return m_weightBytes; }

private:
    struct Linear {
        const float* w = nullptr; // (out, in)
        const float* b = nullptr; // (out) or null
        int64_t out = 0, in = 0;
    };
    struct Norm {
        const float* w = nullptr; // (width)
        const float* b = nullptr;
    };
    struct Block {
        Norm ln1, ln2;
        Linear q, k, v, o, fc1, fc2;
    };
    const float* upload(const std::vector<float>& v); // null for an empty vector
    Linear upload(const ClipLinear& l);
    Norm upload(const ClipNorm& n);
    // y (n, l.out) = x (n, l.in) · W^T + b.
    void linear(const Linear& l, const float* x, int64_t n, float* y);
    void runBlock(const Block& b, int64_t n);

    const ClipModel& m_clip;
    int m_deviceIndex;
    std::unique_ptr<kernels::cuda::StreamOwner> m_stream;
    std::unique_ptr<kernels::cuda::BlasHandle> m_blas;

    std::vector<kernels::cuda::DeviceBuffer> m_owned;
    uint64_t m_weightBytes = 0;
    Linear m_patch, m_mm0, m_mm2;
    const float* m_class = nullptr; // (hidden)
    const float* m_pos = nullptr;   // (patches + 1, hidden)
    Norm m_preLn, m_postLn;         // m_postLn.w null when the file has none
    std::vector<Block> m_blocks;    // the blocksRun blocks that run

    // One image's activations, F32 row-major; n = patches + 1 tokens.
    kernels::cuda::DeviceBuffer m_chw;    // (3, S, S)
    kernels::cuda::DeviceBuffer m_cols;   // (patches, 3 P P)
    kernels::cuda::DeviceBuffer m_x, m_xb, m_q, m_k, m_v, m_att; // (n, hidden)
    kernels::cuda::DeviceBuffer m_ff;     // (n, ffn)
    kernels::cuda::DeviceBuffer m_scores; // (heads, n, n)
    kernels::cuda::DeviceBuffer m_mid;    // (patches, projectorHidden)
    kernels::cuda::DeviceBuffer m_out;    // (patches, projectionWidth)
};

} // namespace mb::engine
