// The forward pass on the CPU for every architecture: a batch of tokens in, K/V written to the cache, logits out.
#pragma once

#include "engine/forward_backend.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace mb::engine {

// Per-caller compute state: scratch buffers sized for `maxChunk` tokens, allocated in the
// constructor and reused, so a decode step allocates nothing. Uses (does not own) the
// model and the thread pool. One thread at a time.
//
// Weight matrices of the types the kernel table multiplies as panels (AVX-512: F32, F16, Q8_0,
// Q4_0, Q4_K, Q6_K; AVX2: Q8_0, Q4_0; kernels::panelBytesFor) are multiplied from the model's
// 16-row panels (LlamaModel::cpuPanels, made by the first Forward over the model and shared)
// when options.panels is set: outer-product tiles that run prefill and batched decode at
// 1.4-1.8x (F32), 2-5x (Q8_0) and about 3x (Q4_0, Q4_K) the row-major dot tiles
// (docs/PERFORMANCE.md, "F32 panels", "Q8_0 panels", "Q4_K and Q6_K panels"). Other forms and
// the embedding rows (looked up, not multiplied) are used in place.
class Forward final : public ForwardBackend {
public:
    Forward(const LlamaModel& model, kernels::ThreadPool& pool, ForwardOptions options = {});

    void run(const ForwardBatch& batch, float* logits) override;

    const LlamaModel& model() const override { return m_model; }
    KvStorage kvStorage() const override { return KvStorage::Host; }
    Device device() const override { return {}; }
    kernels::ThreadPool& pool() { return m_pool; }
    // Bytes of the model's panels this pass multiplies (0 when it reads rows only).
    uint64_t panelBytes() const { return m_panelBytes; }

private:
    // Positions attending together (attendPagedRun): at most kAttentionRun, and the score
    // scratch holds that many rows per thread.
    static constexpr int64_t kAttentionRun = 8;
    struct AttentionRun {
        int64_t first; // index of the run's first token in the chunk
        int64_t count;
    };

    void runChunk(const ForwardBatch& batch, size_t begin, size_t end, float* logits);
    // One layer as named steps: attention (projectQkv, writeKv, attend, then the output
    // product and residual), then the FFN.
    void layer(int64_t l, const ForwardBatch& batch, size_t begin, int64_t n);
    void normRows(const std::vector<float>& weight, const float* in, float* out, int64_t n);
    void projectQkv(int64_t l, int64_t n);
    void writeKv(int64_t l, const ForwardBatch& batch, size_t begin, int64_t n);
    void attend(int64_t l, const ForwardBatch& batch, size_t begin, int64_t n);
    void ffn(int64_t l, int64_t n);
    // x += (post-norm of) delta, delta in m_xb.
    void residual(const std::vector<float>& postNorm, int64_t n);

    // The matrices this pass multiplies (kProjections order): the model's, with panels set
    // where packed.
    using Matrices = std::array<kernels::WeightMatrix, 7>;

    const LlamaModel& m_model;
    kernels::ThreadPool& m_pool;
    std::vector<Matrices> m_matrices; // per layer
    kernels::WeightMatrix m_output;
    uint64_t m_panelBytes = 0;
    ForwardOptions m_options;
    kernels::MatmulScratch m_mm;
    // Activations, (maxChunk, width) row-major.
    std::vector<float> m_x, m_xb, m_q, m_k, m_v, m_att, m_hb, m_hb2;
    std::vector<float> m_cos, m_sin;       // (maxChunk, ropeDim/2)
    std::vector<float> m_scores;           // (threads, kAttentionRun, contextLength)
    std::vector<AttentionRun> m_runs;      // the current chunk's runs, in token order
    std::vector<const float*> m_kPtrs, m_vPtrs;      // block pointers of one layer, all sequences: F32 caches
    std::vector<const uint16_t*> m_kPtrs16, m_vPtrs16; // and F16 caches
    std::vector<size_t> m_seqPtrStart;          // where each sequence's pointers start
};

} // namespace mb::engine
