// Session scheduling: admission, batch formation (continuous batching, chunked prefill), sampling, finishing.
#include "engine/session_impl.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>

namespace mb::engine {

void SessionImpl::failWaiting(std::unique_lock<std::mutex>& lock, const std::string& why) {
    std::deque<std::unique_ptr<Sequence>> failed = std::move(m_waiting);
    m_waiting.clear();
    m_waitingCount = 0;
    m_busy = true; // waitIdle() must not return before these Finished events are out
    lock.unlock();
    for (auto& s : failed) finish(*s, FinishStatus::Error, StopReason::Cancelled, why);
    lock.lock();
    m_busy = false;
}

bool SessionImpl::admit(std::unique_lock<std::mutex>& lock) {
    if (m_waiting.empty()) return false;
    if (!m_loadError.empty()) {
        failWaiting(lock, m_loadError);
        return false;
    }
    if (!m_current) { // on-demand weights: the first request pays for the load
        lock.unlock();
        std::string error;
        try {
            std::shared_ptr<LlamaModel> model = LlamaModel::load(m_path, {m_profile.precision, false});
            m_loadMs = model->loadMs();
            m_current = makeVersion(std::move(model));
            ensurePool(m_current->model->config());
        } catch (const std::exception& e) {
            error = std::string("model load failed: ") + e.what();
        }
        lock.lock();
        if (!error.empty()) {
            m_loadError = error;
            failWaiting(lock, error);
            return false;
        }
    }
    if (m_pendingModel && m_profile.reload == ReloadPolicy::AfterWarmup) return false; // drain, then swap
    const auto limit = static_cast<size_t>(m_profile.batching == BatchingPolicy::Off ? 1 : m_profile.maxBatch);
    if (m_running.empty() && m_profile.batching == BatchingPolicy::Dynamic && m_profile.maxWaitMs > 0 &&
        m_waiting.size() < limit) {
        // An idle scheduler waits up to max_wait_ms for a fuller first batch.
        const double ageMs = static_cast<double>(nowNs() - m_waiting.front()->submittedNs) / 1e6;
        if (ageMs < m_profile.maxWaitMs) return true;
    }
    std::vector<std::pair<std::unique_ptr<Sequence>, std::string>> failed;
    while (m_running.size() < limit && !m_waiting.empty()) {
        try {
            if (!admitOne(*m_waiting.front())) break; // KV pool full: wait for a finish
        } catch (const std::exception& e) { // e.g. no memory for a per-request KV cache
            releaseKv(*m_waiting.front());
            failed.emplace_back(std::move(m_waiting.front()), std::string("admission failed: ") + e.what());
            m_waiting.pop_front();
            continue;
        }
        m_running.push_back(std::move(m_waiting.front()));
        m_waiting.pop_front();
    }
    if (!failed.empty()) {
        m_busy = true; // waitIdle must not return before these Finished events are out
        lock.unlock();
        for (auto& [seq, why] : failed) finish(*seq, FinishStatus::Error, StopReason::Cancelled, why);
        lock.lock();
        m_busy = false;
    }
    m_waitingCount = static_cast<int64_t>(m_waiting.size());
    m_runningCount = static_cast<int64_t>(m_running.size());
    // Nothing running yet the head does not fit (a pool shrunk by a reload): poll rather
    // than spin on the engine loop's wait predicate, which sees a non-empty queue.
    return m_running.empty() && !m_waiting.empty();
}

bool SessionImpl::admitOne(Sequence& seq) {
    const ModelConfig& c = m_current->model->config();
    const int64_t bs = m_profile.blockSize;
    const auto promptLen = static_cast<int64_t>(seq.request.prompt.size());
    if (const int64_t limit = std::min<int64_t>(m_profile.maxContext, c.contextLength - 1); promptLen > limit)
        throw std::runtime_error("the prompt has " + std::to_string(promptLen) +
                                 " tokens; the model reloaded since it was queued accepts at most " +
                                 std::to_string(limit));
    const int64_t positions = std::min<int64_t>(promptLen + seq.request.maxTokens, c.contextLength);
    const int64_t blocksNeeded = blocksFor(positions, bs);
    if (m_profile.kv == KvPolicy::Pool) {
        // Checking the whole need first keeps the prefix counters honest: a request that
        // must wait is not looked up (and counted) twice.
        if (!m_blocks->canAllocate(static_cast<int32_t>(blocksNeeded))) return false;
        KvBlockManager::Match m;
        if (m_profile.prefixCache)
            m = m_blocks->acquirePrefix(std::span(seq.request.prompt).first(static_cast<size_t>(promptLen - 1)));
        auto fresh = m_blocks->allocate(static_cast<int32_t>(blocksNeeded - static_cast<int64_t>(m.blocks.size())));
        if (!fresh) { // cannot happen after canAllocate; stay safe anyway
            m_blocks->release(m.blocks);
            return false;
        }
        seq.blockTable = std::move(m.blocks);
        seq.blockTable.insert(seq.blockTable.end(), fresh->begin(), fresh->end());
        seq.computed = m.tokens;
        seq.cachedTokens = m.tokens;
        seq.lastHash = m.lastHash;
        seq.publishedBlocks = m.tokens / bs;
        seq.kvBytes = static_cast<uint64_t>(seq.blockTable.size()) * blockBytes();
    } else {
        seq.ownCache = std::make_unique<KvCache>(c, blocksNeeded, bs, kvStorage(), kvType());
        seq.blockTable.resize(static_cast<size_t>(blocksNeeded));
        std::iota(seq.blockTable.begin(), seq.blockTable.end(), 0);
        seq.kvBytes = seq.ownCache->bytes();
        m_perRequestKv += seq.kvBytes;
    }
    seq.version = m_current;
    seq.cacheEpoch = m_cacheEpoch;
    seq.tokens = seq.request.prompt;
    seq.promptLen = promptLen;
    seq.sampler.emplace(seq.request.sampling);
    seq.decoder.emplace(seq.version->model->tokenizer(), /*afterPrompt=*/true);
    return true;
}

void SessionImpl::step() {
    // Sequences of one model version run as one batch; after a hot reload there may be two.
    std::map<ModelVersion*, std::vector<Sequence*>> groups;
    for (auto& s : m_running) groups[s->version.get()].push_back(s.get());
    for (auto& [version, group] : groups) {
        try {
            runGroup(*version, group);
        } catch (const std::exception& e) {
            for (Sequence* s : group) finish(*s, FinishStatus::Error, StopReason::Cancelled, e.what());
        }
    }
    std::erase_if(m_running, [](const std::unique_ptr<Sequence>& s) { return s->done; });
    publishStats(); // before the count: waitIdle() must not see 0 running with stale counters
    m_runningCount = static_cast<int64_t>(m_running.size());
}

void SessionImpl::runGroup(ModelVersion& v, std::vector<Sequence*>& group) {
    const int64_t vocab = v.model->config().vocabSize;
    const bool unbatched = m_profile.batching == BatchingPolicy::Off;
    int64_t budget = unbatched ? std::numeric_limits<int64_t>::max() : m_profile.maxBatchTokens;
    // Decodes first (one token each keeps every running stream moving), then prefill
    // chunks fill what is left of the token budget: chunked prefill.
    std::stable_sort(group.begin(), group.end(), [](const Sequence* a, const Sequence* b) {
        const bool ad = static_cast<int64_t>(a->tokens.size()) - a->computed == 1;
        const bool bd = static_cast<int64_t>(b->tokens.size()) - b->computed == 1;
        return ad && !bd;
    });
    const int64_t scheduledAt = nowNs();
    std::vector<Sequence*> active;
    for (Sequence* s : group) {
        const int64_t remaining = static_cast<int64_t>(s->tokens.size()) - s->computed;
        int64_t count = remaining == 1 || unbatched ? remaining : std::min<int64_t>(remaining, m_profile.prefillChunk);
        count = std::min(count, budget);
        s->stepBegin = s->computed;
        s->stepCount = std::max<int64_t>(0, count);
        if (s->stepCount == 0) continue;
        budget -= s->stepCount;
        active.push_back(s);
        if (!s->scheduled) {
            s->scheduled = true;
            RequestEvent e;
            e.id = s->id;
            e.kind = EventKind::Scheduled;
            e.timeNs = scheduledAt;
            if (s->sink) s->sink(e);
        }
    }
    if (active.empty()) return;

    // Reused across iterations: a decode step must not allocate.
    BatchScratch& b = m_batch;
    b.tokens.clear();
    b.positions.clear();
    b.seqIds.clear();
    b.want.clear();
    b.caches.clear();
    b.tables.clear();
    b.embeddings.clear();
    // Image positions are fed their rows; a batch without any leaves `embeddings` empty.
    const bool images = std::any_of(active.begin(), active.end(), [](const Sequence* s) {
        return !s->inputRows.empty() && s->stepBegin < static_cast<int64_t>(s->inputRows.size());
    });
    int64_t wanted = 0;
    for (size_t i = 0; i < active.size(); ++i) {
        Sequence& s = *active[i];
        for (int64_t p = s.stepBegin; p < s.stepBegin + s.stepCount; ++p) {
            if (images)
                b.embeddings.push_back(p < static_cast<int64_t>(s.inputRows.size()) ? s.inputRows[static_cast<size_t>(p)]
                                                                                    : nullptr);
            b.tokens.push_back(s.tokens[static_cast<size_t>(p)]);
            b.positions.push_back(p);
            b.seqIds.push_back(static_cast<int32_t>(i));
            const bool last = p + 1 == static_cast<int64_t>(s.tokens.size());
            b.want.push_back(last ? 1 : 0);
            wanted += last ? 1 : 0;
        }
        b.caches.push_back(s.ownCache ? s.ownCache.get() : m_kvPool.get());
        b.tables.emplace_back(s.blockTable);
    }
    if (v.logits.size() < static_cast<size_t>(wanted * vocab)) v.logits.resize(static_cast<size_t>(wanted * vocab));
    v.forward->run({b.tokens, b.positions, b.seqIds, b.caches, b.tables, b.want, b.embeddings}, v.logits.data());
    const int64_t doneAt = nowNs();
    int64_t row = 0;
    for (Sequence* s : active) {
        s->computed += s->stepCount;
        publishFullBlocks(*s);
        if (s->computed == static_cast<int64_t>(s->tokens.size())) {
            afterLogits(*s, v.logits.data() + row * vocab, doneAt);
            ++row;
        }
    }
}

void SessionImpl::afterLogits(Sequence& seq, const float* logits, int64_t nowNs) {
    const ModelConfig& c = seq.version->model->config();
    const int32_t id = seq.sampler->sample(std::span(logits, static_cast<size_t>(c.vocabSize)), seq.tokens);
    if (seq.request.stopAtEos && id == seq.version->model->tokenizer().eos()) {
        finish(seq, FinishStatus::Ok, StopReason::Eos, {});
        return;
    }
    seq.generated.push_back(id);
    seq.tokens.push_back(id);
    RequestEvent e;
    e.id = seq.id;
    e.kind = EventKind::Token;
    e.timeNs = nowNs;
    e.token = id;
    e.text = seq.decoder->push(id);
    seq.text += e.text;
    if (seq.sink) seq.sink(e);
    if (static_cast<int32_t>(seq.generated.size()) >= seq.request.maxTokens)
        finish(seq, FinishStatus::Ok, StopReason::Length, {});
    else if (static_cast<int64_t>(seq.tokens.size()) > c.contextLength) // the next input has no position left
        finish(seq, FinishStatus::Ok, StopReason::Context, {});
}

void SessionImpl::clearPrefixCache() {
    if (m_blocks) m_blocks->clearCache();
    ++m_cacheEpoch;
}

void SessionImpl::publishFullBlocks(Sequence& seq) {
    // A sequence admitted before the last flush or swap may have computed its K/V with the
    // old weights; its blocks must not enter the cache, where the new version would reuse them.
    if (!m_profile.prefixCache || seq.ownCache || seq.cacheEpoch != m_cacheEpoch) return;
    const int64_t bs = m_profile.blockSize;
    while ((seq.publishedBlocks + 1) * bs <= seq.computed) {
        const auto begin = static_cast<size_t>(seq.publishedBlocks * bs);
        seq.lastHash = m_blocks->publish(seq.lastHash, std::span(seq.tokens).subspan(begin, static_cast<size_t>(bs)),
                                         seq.blockTable[static_cast<size_t>(seq.publishedBlocks)]);
        ++seq.publishedBlocks;
    }
}

void SessionImpl::releaseKv(Sequence& seq) {
    if (seq.ownCache) {
        m_perRequestKv -= seq.kvBytes;
        seq.ownCache.reset();
    } else if (!seq.blockTable.empty() && m_blocks) {
        m_blocks->release(seq.blockTable);
    }
    seq.blockTable.clear();
}

void SessionImpl::finish(Sequence& seq, FinishStatus status, StopReason stop, const std::string& error) {
    if (seq.done) return;
    seq.done = true;
    if (seq.decoder) seq.text += seq.decoder->flush();
    releaseKv(seq);
    RequestEvent e;
    e.id = seq.id;
    e.kind = EventKind::Finished;
    e.timeNs = nowNs();
    e.status = status;
    e.stop = stop;
    e.error = error;
    e.text = std::move(seq.text);
    e.tokens = std::move(seq.generated);
    e.promptTokens = static_cast<int64_t>(seq.request.prompt.size());
    e.cachedTokens = seq.cachedTokens;
    e.truncatedTokens = seq.truncatedTokens;
    e.imagesDropped = seq.imagesDropped;
    for (const PromptImage& im : seq.request.images) e.imageTokens += im.count;
    e.outputTokens = static_cast<int64_t>(e.tokens.size());
    e.kvBytesPeak = seq.kvBytes;
    e.modelVersion = seq.version ? seq.version->number : 0;
    seq.version.reset(); // an old model version is freed with its last request
    {
        std::lock_guard lock(m_mutex);
        m_live.erase(seq.id);
    }
    if (seq.sink) seq.sink(e);
    m_finished++;
}

void SessionImpl::processCancellations(std::unique_lock<std::mutex>& lock) {
    if (m_cancelRequests.empty()) return;
    std::unordered_set<uint64_t> ids = std::move(m_cancelRequests);
    m_cancelRequests.clear();
    std::vector<std::unique_ptr<Sequence>> waiting;
    for (auto it = m_waiting.begin(); it != m_waiting.end();) {
        if (ids.count((*it)->id)) {
            waiting.push_back(std::move(*it));
            it = m_waiting.erase(it);
        } else {
            ++it;
        }
    }
    m_waitingCount = static_cast<int64_t>(m_waiting.size());
    m_busy = true; // waitIdle() must not return before these Finished events are out
    lock.unlock();
    for (auto& s : waiting) finish(*s, FinishStatus::Cancelled, StopReason::Cancelled, "cancelled");
    for (auto& s : m_running)
        if (ids.count(s->id)) finish(*s, FinishStatus::Cancelled, StopReason::Cancelled, "cancelled");
    std::erase_if(m_running, [](const std::unique_ptr<Sequence>& s) { return s->done; });
    publishStats();
    m_runningCount = static_cast<int64_t>(m_running.size());
    lock.lock();
    m_busy = false;
}

void SessionImpl::publishStats() {
    if (m_blocks) {
        m_prefixQueries = m_queriesCarried + m_blocks->queries();
        m_prefixHits = m_hitsCarried + m_blocks->hits();
    }
    if (m_kvPool && m_blocks)
        m_kvInUse = static_cast<uint64_t>(m_blocks->usedBlocks() + m_blocks->cachedFreeBlocks()) * blockBytes();
    else
        m_kvInUse = m_perRequestKv.load();
    if (!m_kvPool) m_kvCapacity = m_kvInUse.load();
}

} // namespace mb::engine
