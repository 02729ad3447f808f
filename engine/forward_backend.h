// The interface every forward-pass backend implements (CPU: Forward; CUDA: CudaForward), and its factory.
#pragma once

#include "engine/devices.h"
#include "engine/kv_cache.h"
#include "engine/llama_model.h"
#include "engine/rope_table.h"
#include "kernels/cpu/thread_pool.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
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
    // Input embeddings in place of token ids (image positions, PRODUCT.md §12): empty, or one
    // per token, nullptr for "look the token up"; a non-null row holds the model's `dim`
    // floats and enters layer 0 as it is (no embedding scale), the token id being ignored.
    std::span<const float* const> embeddings = {};
    const float* embeddingAt(size_t t) const { return embeddings.empty() ? nullptr : embeddings[t]; }
};

// How the pass computes; every setting gives the same results (bit for bit on the CPU), except
// f32Activations, which changes how quantised weights are multiplied.
struct ForwardOptions {
    int64_t maxChunk = 256;          // tokens per pass; longer batches run in chunks
    bool fused = false;              // CPU: QKV and gate/up in one pool pass; CUDA: fused residual+norm, RoPE+KV write
    const RopeTable* rope = nullptr; // precomputed angles (must cover every position), else per token
    bool graphs = false;             // CUDA: capture the batch-1 decode step once as a graph and replay it
    bool panels = true;              // CPU: matrices multiplied from panels where the kernel table can (Forward)
    // CPU: quantised matrices multiplied as dequantised F32 rows with unquantised activations
    // (the weights' own error, as a float reference computes; other bits, slower)
    bool f32Activations = false;
};

// One caller's compute state for one model. One thread at a time.
class ForwardBackend {
public:
    virtual ~ForwardBackend() = default;

    // Runs the batch (split into chunks of at most maxChunk tokens) and writes
    // (count of wanted tokens, vocabSize) logits to host memory at `logits`. Throws
    // ModelError for a token id outside the vocabulary, a position beyond the block table,
    // or a cache whose storage this backend cannot use.
    virtual void run(const ForwardBatch& batch, float* logits) = 0;

    // Convenience for one sequence: tokens at positions [pos0, pos0 + n) with the given
    // block table; logits (vocabSize) of the last token only. Allocates nothing once warm.
    // `rows`: empty, or one per token, an input embedding row in place of the token where
    // not null (ForwardBatch::embeddings).
    void runSequence(std::span<const int32_t> tokens, int64_t pos0, KvCache& cache,
                     std::span<const int32_t> blockTable, float* logits,
                     std::span<const float* const> rows = {});
    // The same for input embedding rows (n rows of `dim` floats, row-major): image positions.
    void runEmbeddings(std::span<const float> rows, int64_t pos0, KvCache& cache,
                       std::span<const int32_t> blockTable, float* logits);

    virtual const LlamaModel& model() const = 0;
    // The storage caches given to run() must have (KvCache's constructor argument).
    virtual KvStorage kvStorage() const = 0;
    virtual Device device() const = 0;

protected:
    // Checks what every backend requires of a batch (ids, sequence ids, positions, tables).
    void validate(const ForwardBatch& batch, const RopeTable* rope) const;

private:
    std::vector<int64_t> m_seqPositions; // runSequence's batch description
    std::vector<int32_t> m_seqIds;
    std::vector<uint8_t> m_seqWant;
    std::vector<int32_t> m_seqTokens;        // runEmbeddings' placeholder ids
    std::vector<const float*> m_seqRows;     // and its row pointers
};

// The backend for `device`: Forward on the CPU (using `pool`), CudaForward on cuda:N (weights
// uploaded to the device now). Throws std::invalid_argument when the build has no CUDA backend
// or the device does not exist; the device must come from resolveDevice().
std::unique_ptr<ForwardBackend> makeForwardBackend(const LlamaModel& model, kernels::ThreadPool& pool,
                                                   const ForwardOptions& options, const Device& device);

} // namespace mb::engine
