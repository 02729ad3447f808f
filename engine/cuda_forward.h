// The forward pass of every architecture on a CUDA device: weights resident in device memory, K/V in device mirrors
// of the caches.
//
// Built only with MODEBENCH_HAVE_CUDA; no CUDA types here (kernels/cuda/device_buffer.h is
// plain C++). The engine's scheduling, block manager and prefix cache stay on the host and
// are shared with the CPU backend: a KvCache created with KvStorage::Device gets a device
// mirror of the same geometry on first use, and the block ids the KvBlockManager hands out
// index it exactly as they index host storage.
//
// What a layer computes comes from the model's ModelConfig and LayerWeights, as on the CPU
// (engine/forward.cpp): NORM or NEOX RoPE with frequency factors and linear scaling, Q/K/V
// biases, per-head Q/K norms, SiLU or GELU-tanh gating, embedding and query scales, post-norms,
// attention and final soft-caps, sliding-window layers, fused QKV and gate/up tensors.
// Compiled and host-tested; see docs/CUDA.md for what has run on a device.
#pragma once

#include "engine/forward_backend.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/cuda/device_buffer.h"

#include <array>
#include <memory>
#include <vector>

namespace mb::engine {

// Owns the device copy of the weights (uploaded in the constructor), a stream, a cuBLAS
// handle, activations for maxChunk tokens and, with options.graphs, the captured decode
// step. Uses (does not own) the model. One thread at a time; every call sets the device on
// the calling thread. Throws kernels::cuda::CudaError on any CUDA failure.
class CudaForward final : public ForwardBackend {
public:
    CudaForward(const LlamaModel& model, const ForwardOptions& options, int deviceIndex);
    ~CudaForward() override;

    void run(const ForwardBatch& batch, float* logits) override;

    const LlamaModel& model() const override { return m_model; }
    KvStorage kvStorage() const override { return KvStorage::Device; }
    Device device() const override { return {Device::Kind::Cuda, m_deviceIndex}; }

    uint64_t deviceWeightBytes() const { return m_weightBytes; }
    // Decode steps served by replaying the captured graph, and captures made (tests).
    uint64_t graphReplays() const { return m_graphReplays; }
    uint64_t graphCaptures() const { return m_graphCaptures; }

private:
    static constexpr int32_t kMaxSplits = 32; // attention splits for a single decode token

    struct Layer {
        std::array<kernels::cuda::DeviceMatrix, 7> proj; // kProjections order (kProjQ, ...)
        // kLayerVectors order (kVecAttnNorm, ...): device F32, null where the model has none.
        std::array<const float*, kLayerVectorCount> vec{};
    };

    // Set-up and staging (cuda_forward.cpp).
    kernels::cuda::DeviceMatrix upload(const kernels::WeightMatrix& w);
    std::array<kernels::cuda::DeviceMatrix, 7> uploadProjections(const LayerWeights& w);
    const float* uploadFloats(const std::vector<float>& v); // null for an empty vector
    void ensureMeta(size_t tokens, size_t seqs, size_t tableEntries);
    void stageChunk(const ForwardBatch& batch, size_t begin, size_t end);
    void stageInputRows(const ForwardBatch& batch, size_t begin, size_t end, int32_t* rowOf);
    kernels::cuda::PagedKv pagedKv(int32_t layer) const;
    kernels::cuda::EmbedArgs embedArgs() const;

    // The pass over the staged chunk (cuda_layer.cpp), one named step per stage of
    // Forward::layer. enqueueChunk enqueues all of it for n tokens; the logits of the wanted
    // rows (m_wantRows) go to m_logits.
    void enqueueChunk(int64_t n);
    void layer(int32_t l, int64_t n);
    void normInput(const float* weight, int64_t n); // [x += delta]; xb = norm(x)
    void projectQkv(const Layer& w, int64_t n);
    void rotateAndWriteKv(int32_t l, int64_t n);
    void attend(int32_t l, int64_t n);
    void ffn(const Layer& w, int64_t n);
    void residual(const float* postNorm, int64_t n); // delta = [post-norm] delta, added by the next normInput
    void outputLogits(int64_t n);
    void product(const kernels::cuda::DeviceMatrix& w, const float* x, int64_t n, float* y);

    const LlamaModel& m_model;
    ForwardOptions m_options;
    int m_deviceIndex;
    std::unique_ptr<kernels::cuda::StreamOwner> m_stream;
    std::unique_ptr<kernels::cuda::BlasHandle> m_blas;

    // Weights.
    std::vector<kernels::cuda::DeviceBuffer> m_owned;
    std::vector<Layer> m_layers;
    kernels::cuda::DeviceMatrix m_embedding, m_output;
    const float* m_outputNorm = nullptr;
    const float* m_ropeCos = nullptr; // (positions, ropeDim/2) when options.rope is set
    const float* m_ropeSin = nullptr;
    const float* m_ropeFactors = nullptr; // (ropeDim/2) rope_freqs.weight, when the model has them
    uint64_t m_weightBytes = 0;
    int64_t m_f16ScratchElems = 0; // largest non-F16 matrix, expanded for cuBLAS

    // Activations, (maxChunk, width) F32 row-major on the device.
    kernels::cuda::DeviceBuffer m_x, m_xb, m_delta, m_q, m_k, m_v, m_att, m_hb, m_hb2, m_partial, m_logits;
    kernels::cuda::DeviceBuffer m_inputRows; // (maxChunk, dim) F32: the chunk's input embeddings, packed
    std::vector<float> m_inputStage;         // their host staging (allocated on first use)
    kernels::cuda::DeviceBuffer m_xHalf;  // (maxChunk, max cols) __half, prefill products
    kernels::cuda::DeviceBuffer m_wHalf;  // a non-F16 weight matrix expanded to __half (lazily)
    int64_t m_partialTokens = 0;          // tokens x splits the attention scratch holds

    // Batch description: one host staging area copied to one device buffer per chunk.
    // Layout: keys[seqCap], values[seqCap] (pointers), then int32 ids[tokCap], pos[tokCap],
    // seq[tokCap], rowOf[tokCap] (input row or -1), cacheBlocks[seqCap], tableStart[seqCap],
    // tables[tableCap].
    std::vector<unsigned char> m_stage;
    kernels::cuda::DeviceBuffer m_meta;
    size_t m_tokCap = 0, m_seqCap = 0, m_tableCap = 0;
    std::vector<int64_t> m_wantRows; // chunk-relative rows whose logits are wanted
    int32_t m_blockSize = 0;         // of the staged caches
    bool m_oneSequence = false;      // the staged chunk is one sequence at consecutive positions
    bool m_pendingResidual = false;  // m_delta still has to be added to m_x (enqueueChunk)

    kernels::cuda::Graph m_graph; // the batch-1 decode step (options.graphs)
    uint64_t m_graphReplays = 0, m_graphCaptures = 0;
};

} // namespace mb::engine
