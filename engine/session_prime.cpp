// Fast mode's cache priming on the engine thread: each prompt (images included) prefilled into the prefix cache.
#include "engine/session_impl.h"

namespace mb::engine {

void SessionImpl::runPriming(const std::vector<InferenceRequest>& prompts) {
    if (m_profile.kv == KvPolicy::Pool && m_profile.prefixCache && m_current) {
        std::vector<float> logits(static_cast<size_t>(m_config.vocabSize));
        for (const InferenceRequest& p : prompts) primeOne(p, logits);
        m_primed.insert(m_primed.end(), prompts.begin(), prompts.end());
    }
    publishStats();
}

void SessionImpl::primeOne(InferenceRequest p, std::vector<float>& logits) {
    const auto n = static_cast<int64_t>(p.prompt.size());
    if (n < 2 || n > m_contextLimit.load()) return;
    // The positions a request with these images would have: placeholders keyed by each
    // image's content (prompt_images.h), so its blocks are the ones that request looks up.
    if (!validateImages(p.images, n, m_config.dim).empty()) return;
    fillPlaceholders(p.prompt, p.images);
    const std::vector<const float*> rows = inputRows(p, m_config.dim);

    Sequence seq;
    seq.tokens = p.prompt;
    seq.promptLen = n;
    KvBlockManager::Match m = m_blocks->acquirePrefix(std::span(p.prompt).first(p.prompt.size() - 1));
    const int64_t need = blocksFor(seq.promptLen, m_profile.blockSize) - static_cast<int64_t>(m.blocks.size());
    auto fresh = m_blocks->allocate(static_cast<int32_t>(need));
    if (!fresh) {
        m_blocks->release(m.blocks);
        return;
    }
    seq.blockTable = m.blocks;
    seq.blockTable.insert(seq.blockTable.end(), fresh->begin(), fresh->end());
    seq.computed = m.tokens;
    seq.lastHash = m.lastHash;
    seq.publishedBlocks = static_cast<int64_t>(m.blocks.size());
    seq.cacheEpoch = m_cacheEpoch;
    const auto from = static_cast<size_t>(seq.computed);
    const std::span<const float* const> restRows =
        rows.empty() ? std::span<const float* const>{} : std::span<const float* const>(rows).subspan(from);
    try {
        m_current->forward->runSequence(std::span(p.prompt).subspan(from), seq.computed, *m_kvPool, seq.blockTable,
                                        logits.data(), restRows);
        seq.computed = seq.promptLen;
        publishFullBlocks(seq);
    } catch (const std::exception&) {
        // A prompt that cannot be primed (a token outside the vocabulary, input embeddings
        // on a backend without them) is skipped.
    }
    m_blocks->release(seq.blockTable);
}

} // namespace mb::engine
