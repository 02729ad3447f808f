// The LLaMA forward pass on the CPU: a batch of tokens in, K/V written to the cache, logits out.
#pragma once

#include "engine/kv_cache.h"
#include "engine/llama_model.h"
#include "engine/rope_table.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"

#include <cstdint>
#include <span>
#include <vector>

namespace mb::engine {

// A batch: token t of sequence seqIds[t] at position positions[t]. Positions of one
// sequence must be increasing and contiguous within the batch, and every earlier position
// of that sequence must already be in its cache. Sequence s keeps its K/V in caches[s]
// (one shared pool, or one cache per request) through blockTables[s], which maps its
// logical blocks to that cache's blocks and must cover its last position in the batch.
// Logits are produced for the tokens whose wantLogits entry is non-zero, in batch order.
struct ForwardBatch {
    std::span<const int32_t> tokens;
    std::span<const int64_t> positions;
    std::span<const int32_t> seqIds;
    std::span<KvCache* const> caches;
    std::span<const std::span<const int32_t>> blockTables;
    std::span<const uint8_t> wantLogits;
};

// How the pass computes; both settings give identical results.
struct ForwardOptions {
    int64_t maxChunk = 256;          // tokens per pass; longer batches run in chunks
    bool fused = false;              // QKV and gate/up products each in one pool pass
    const RopeTable* rope = nullptr; // precomputed angles (must cover every position), else per token
};

// Per-caller compute state: scratch buffers sized for `maxChunk` tokens, allocated in the
// constructor and reused, so a decode step allocates nothing. Uses (does not own) the
// model and the thread pool. One thread at a time.
class Forward {
public:
    Forward(const LlamaModel& model, kernels::ThreadPool& pool, ForwardOptions options = {});

    // Runs the batch (split into chunks of at most maxChunk tokens) and writes
    // (count of wanted tokens, vocabSize) logits to `logits`. Throws ModelError for a
    // token id outside the vocabulary or a position beyond the block table.
    void run(const ForwardBatch& batch, float* logits);

    // Convenience for one sequence: tokens at positions [pos0, pos0 + n) with the given
    // block table; logits (vocabSize) of the last token only.
    void runSequence(std::span<const int32_t> tokens, int64_t pos0, KvCache& cache,
                     std::span<const int32_t> blockTable, float* logits);

    const LlamaModel& model() const { return m_model; }
    kernels::ThreadPool& pool() { return m_pool; }

private:
    void runChunk(const ForwardBatch& batch, size_t begin, size_t end, float* logits);
    void layer(int64_t l, const ForwardBatch& batch, size_t begin, int64_t n);

    const LlamaModel& m_model;
    kernels::ThreadPool& m_pool;
    ForwardOptions m_options;
    kernels::MatmulScratch m_mm;
    // Activations, (maxChunk, width) row-major.
    std::vector<float> m_x, m_xb, m_q, m_k, m_v, m_att, m_hb, m_hb2;
    std::vector<float> m_cos, m_sin;       // (maxChunk, ropeDim/2)
    std::vector<float> m_scores;           // (threads, contextLength)
    std::vector<const float*> m_kPtrs, m_vPtrs; // block pointers of one layer, all sequences
    std::vector<size_t> m_seqPtrStart;          // where each sequence's pointers start
    std::vector<int64_t> m_seqPositions;        // runSequence's batch description
    std::vector<int32_t> m_seqIds;
    std::vector<uint8_t> m_seqWant;
};

} // namespace mb::engine
