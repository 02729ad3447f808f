// What all forward backends share (batch validation, runSequence) and the factory that picks one by device.
#include "engine/forward_backend.h"

#include "engine/forward.h"

#include <stdexcept>
#include <string>

#ifdef MODEBENCH_HAVE_CUDA
#include "engine/cuda_forward.h"
#endif

namespace mb::engine {

void ForwardBackend::runSequence(std::span<const int32_t> tokens, int64_t pos0, KvCache& cache,
                                 std::span<const int32_t> blockTable, float* logits,
                                 std::span<const float* const> rows) {
    // Member buffers: a decode step calls this once per token and must not allocate.
    const size_t n = tokens.size();
    m_seqPositions.resize(n);
    for (size_t i = 0; i < n; ++i) m_seqPositions[i] = pos0 + static_cast<int64_t>(i);
    m_seqIds.assign(n, 0);
    m_seqWant.assign(n, 0);
    if (n > 0) m_seqWant.back() = 1;
    const std::span<const int32_t> tables[1] = {blockTable};
    KvCache* const caches[1] = {&cache};
    run({tokens, m_seqPositions, m_seqIds, caches, tables, m_seqWant, rows}, logits);
}

void ForwardBackend::runEmbeddings(std::span<const float> rows, int64_t pos0, KvCache& cache,
                                   std::span<const int32_t> blockTable, float* logits) {
    const auto dim = static_cast<size_t>(model().config().dim);
    if (dim == 0 || rows.size() % dim != 0)
        throw ModelError("input embeddings: " + std::to_string(rows.size()) + " floats are not whole rows of the model's " +
                         std::to_string(dim));
    const size_t n = rows.size() / dim;
    m_seqPositions.resize(n);
    m_seqTokens.assign(n, 0);
    m_seqRows.resize(n);
    for (size_t i = 0; i < n; ++i) {
        m_seqPositions[i] = pos0 + static_cast<int64_t>(i);
        m_seqRows[i] = rows.data() + i * dim;
    }
    m_seqIds.assign(n, 0);
    m_seqWant.assign(n, 0);
    if (n > 0) m_seqWant.back() = 1;
    const std::span<const int32_t> tables[1] = {blockTable};
    KvCache* const caches[1] = {&cache};
    run({m_seqTokens, m_seqPositions, m_seqIds, caches, tables, m_seqWant, m_seqRows}, logits);
}

void ForwardBackend::validate(const ForwardBatch& batch, const RopeTable* rope) const {
    const ModelConfig& c = model().config();
    const size_t n = batch.tokens.size();
    if (batch.positions.size() != n || batch.seqIds.size() != n || batch.wantLogits.size() != n)
        throw ModelError("forward batch: tokens, positions, sequence ids and logit flags differ in length");
    if (!batch.embeddings.empty() && batch.embeddings.size() != n)
        throw ModelError("forward batch: input embeddings must be given for every token or none");
    if (batch.caches.size() != batch.blockTables.size())
        throw ModelError("forward batch: one cache and one block table per sequence are required");
    for (size_t t = 0; t < n; ++t) {
        if (!batch.embeddingAt(t) && (batch.tokens[t] < 0 || batch.tokens[t] >= c.vocabSize))
            throw ModelError("token id " + std::to_string(batch.tokens[t]) + " is outside the vocabulary");
        const int32_t s = batch.seqIds[t];
        if (s < 0 || static_cast<size_t>(s) >= batch.blockTables.size())
            throw ModelError("forward batch: bad sequence id");
        const int64_t pos = batch.positions[t];
        if (pos < 0 || pos >= c.contextLength)
            throw ModelError("position " + std::to_string(pos) + " is beyond the model's context of " +
                             std::to_string(c.contextLength));
        const KvCache& cache = *batch.caches[static_cast<size_t>(s)];
        const auto& table = batch.blockTables[static_cast<size_t>(s)];
        if (pos / cache.blockSize() >= static_cast<int64_t>(table.size()))
            throw ModelError("position " + std::to_string(pos) + " is beyond the sequence's KV blocks");
        if (table[static_cast<size_t>(pos / cache.blockSize())] >= cache.blocks())
            throw ModelError("block table entry outside the KV cache");
        if (rope && pos >= rope->positions())
            throw ModelError("position " + std::to_string(pos) + " is beyond the precomputed RoPE table");
    }
}

std::unique_ptr<ForwardBackend> makeForwardBackend(const LlamaModel& model, kernels::ThreadPool& pool,
                                                   const ForwardOptions& options, const Device& device) {
    if (device.kind == Device::Kind::Cpu) return std::make_unique<Forward>(model, pool, options);
#ifdef MODEBENCH_HAVE_CUDA
    return std::make_unique<CudaForward>(model, options, device.index);
#else
    throw std::invalid_argument(device.id() + ": this build has no CUDA backend");
#endif
}

} // namespace mb::engine
