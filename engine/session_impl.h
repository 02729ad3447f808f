// Private to session*.cpp: the engine-thread implementation of Session.
#pragma once

#include "engine/forward_backend.h"
#include "engine/kv_block_manager.h"
#include "engine/llama_model.h"
#include "engine/rope_table.h"
#include "engine/sequence.h"
#include "engine/session.h"
#include "kernels/cpu/thread_pool.h"

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace mb::engine {

// A loaded model with its compute state. Sequences hold a shared_ptr, so an old version
// lives until its last in-flight request finishes (hot reload).
struct ModelVersion {
    uint64_t number = 0;
    std::shared_ptr<LlamaModel> model;
    std::unique_ptr<RopeTable> rope; // fast profile only
    std::unique_ptr<ForwardBackend> forward; // CPU or CUDA, by SessionOptions::device
    std::vector<float> logits;       // (maxBatch, vocab)
};

// One iteration's batch description, rebuilt in place every step (engine thread only).
struct BatchScratch {
    std::vector<int32_t> tokens;
    std::vector<int64_t> positions;
    std::vector<int32_t> seqIds;
    std::vector<uint8_t> want;
    std::vector<KvCache*> caches;
    std::vector<std::span<const int32_t>> tables;
    std::vector<const float*> embeddings; // per token: an image row or nullptr; empty without images
};

class SessionImpl final : public Session {
public:
    SessionImpl(std::string path, Profile profile, SessionOptions options);
    ~SessionImpl() override;

    const Profile& profile() const override { return m_profile; }
    const Tokenizer& tokenizer() const override { return *m_tokenizer; }
    const ModelConfig& config() const override { return m_config; }
    int64_t contextLimit() const override { return m_contextLimit; }
    std::string promptOverContext(const std::string& tokens) const override;
    uint64_t submit(InferenceRequest request, EventSink sink) override;
    bool cancel(uint64_t id) override;
    void primePrefixes(std::vector<std::vector<int32_t>> prompts) override;
    void primePrompts(std::vector<InferenceRequest> prompts) override;
    void reload(const std::string& modelPath) override;
    void flushCache() override;
    SessionStats stats() const override;
    void waitIdle() override;

private:
    // --- engine thread (session.cpp) ---
    void engineLoop();
    void loadAndWarm(const std::string& path, bool warm);
    std::shared_ptr<ModelVersion> makeVersion(std::shared_ptr<LlamaModel> model);
    void ensurePool(const ModelConfig& c);
    // session_prime.cpp: prefills each prompt into the prefix cache (fast mode's pool only).
    void runPriming(const std::vector<InferenceRequest>& prompts);
    void primeOne(InferenceRequest prompt, std::vector<float>& logits);
    bool applyPendingSwap();
    void refuseReloadNow() const; // throws ReloadError; m_mutex held
    void clearPrefixCache();      // and start a new cache epoch
    // --- scheduling and stepping (session_step.cpp) ---
    bool admit(std::unique_lock<std::mutex>& lock);
    bool admitOne(Sequence& seq);
    void step();
    void runGroup(ModelVersion& v, std::vector<Sequence*>& group);
    void afterLogits(Sequence& seq, const float* logits, int64_t nowNs);
    void publishFullBlocks(Sequence& seq);
    void finish(Sequence& seq, FinishStatus status, StopReason stop, const std::string& error);
    void releaseKv(Sequence& seq);
    void processCancellations(std::unique_lock<std::mutex>& lock);
    void failWaiting(std::unique_lock<std::mutex>& lock, const std::string& why);
    void publishStats();
    uint64_t blockBytes() const;
    // Host memory for the CPU backend; device mirrors (allocated by the backend) for CUDA.
    KvStorage kvStorage() const {
        return m_options.device.kind == Device::Kind::Cpu ? KvStorage::Host : KvStorage::Device;
    }
    KvType kvType() const { return kvTypeFor(m_profile.precision, kvStorage()); }
    int64_t poolTokens(const ModelConfig& c) const; // KV pool size in positions
    void setModelContext(int64_t contextLength);

    static int64_t nowNs();
    void reject(uint64_t id, const EventSink& sink, int64_t submittedNs, const std::string& why, int64_t prompt);

    const std::string m_path;
    const Profile m_profile;
    const SessionOptions m_options;
    std::shared_ptr<const Tokenizer> m_tokenizer;
    ModelConfig m_config; // the first model's header; a reload keeps all but the context length
    // The current version's limits, replaced at a swap (setModelContext, engine thread) and
    // read by submit() on callers' threads.
    std::atomic<int64_t> m_contextLimit{0}, m_modelContext{0}, m_poolPositions{0};

    // Shared with callers, guarded by m_mutex.
    mutable std::mutex m_mutex;
    std::condition_variable m_wake;     // engine thread waits for work
    std::condition_variable m_idle;     // waitIdle / reload wait for the engine
    std::deque<std::unique_ptr<Sequence>> m_waiting;
    std::unordered_set<uint64_t> m_cancelRequests;
    std::unordered_set<uint64_t> m_live; // submitted, not rejected, not finished
    std::vector<std::vector<InferenceRequest>> m_primeRequests;
    std::shared_ptr<LlamaModel> m_pendingModel; // loaded by reload(), swapped in by the engine
    bool m_flushRequested = false;
    std::string m_loadError; // set when an on-demand load failed; later requests fail with it
    bool m_stop = false;
    bool m_busy = false; // the engine is delivering Finished events with the lock released
    uint64_t m_nextId = 1;

    // Engine thread only.
    std::thread m_thread;
    std::unique_ptr<kernels::ThreadPool> m_pool;
    std::shared_ptr<ModelVersion> m_current;
    std::unique_ptr<KvCache> m_kvPool;
    std::unique_ptr<KvBlockManager> m_blocks;
    std::vector<std::unique_ptr<Sequence>> m_running;
    BatchScratch m_batch;
    std::vector<InferenceRequest> m_primed; // re-primed after a fast-mode reload
    uint64_t m_versions = 0;
    // Bumped by every flush or swap: sequences admitted before it hold K/V the cache no
    // longer vouches for (old weights), so they never publish blocks (Sequence::cacheEpoch).
    uint64_t m_cacheEpoch = 0;
    uint64_t m_queriesCarried = 0, m_hitsCarried = 0; // counters of replaced block managers

    // Published counters.
    std::atomic<uint64_t> m_prefixQueries{0}, m_prefixHits{0}, m_kvInUse{0}, m_kvCapacity{0};
    std::atomic<int64_t> m_runningCount{0}, m_waitingCount{0}, m_finished{0};
    std::atomic<bool> m_warming{false}, m_loaded{false};
    std::atomic<double> m_warmupMs{0}, m_loadMs{0};
    std::atomic<uint64_t> m_modelVersion{0}, m_weightBytes{0};
    std::atomic<uint64_t> m_perRequestKv{0};
};

} // namespace mb::engine
