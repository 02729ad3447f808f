// Session lifecycle on its engine thread: loading, warm-up, priming, reloads and the main loop.
#include "engine/session_impl.h"

#include "engine/gguf.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <tuple>

namespace mb::engine {

namespace {
double msBetween(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
}

// The one wording of a prompt over the context under Truncation::Reject.
std::string overContext(const std::string& tokens, int64_t limit, int64_t maxContext, int64_t modelContext) {
    return "the prompt has " + tokens + " tokens; this profile accepts at most " + std::to_string(limit) +
           " (max_context " + std::to_string(maxContext) + ", model context " + std::to_string(modelContext) + ")";
}

} // namespace

const char* finishStatusName(FinishStatus s) {
    switch (s) {
    case FinishStatus::Ok: return "ok";
    case FinishStatus::Error: return "error";
    case FinishStatus::Cancelled: return "cancelled";
    case FinishStatus::Rejected: return "rejected";
    }
    return "?";
}

std::unique_ptr<Session> Session::start(const std::string& modelPath, const Profile& profile,
                                        const SessionOptions& options) {
    if (const std::string why = profile.validate(); !why.empty()) throw ProfileError(why);
    return std::make_unique<SessionImpl>(modelPath, profile, options);
}

int64_t SessionImpl::nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

SessionImpl::SessionImpl(std::string path, Profile profile, SessionOptions options)
    : m_path(std::move(path)), m_profile(std::move(profile)), m_options(options) {
    // The header and tokenizer are needed at once (to tokenize and check requests); the
    // weights follow the profile's policy.
    std::shared_ptr<LlamaModel> preloaded;
    const auto t0 = std::chrono::steady_clock::now();
    if (m_profile.weights == WeightsPolicy::Preload) {
        preloaded = LlamaModel::load(m_path, {m_profile.precision, /*prefault=*/true});
        m_config = preloaded->config();
        m_tokenizer = std::shared_ptr<const Tokenizer>(preloaded, &preloaded->tokenizer());
        m_loadMs = preloaded->loadMs();
    } else {
        const GgufFile file = GgufFile::open(m_path);
        try {
            m_config = ModelConfig::fromGguf(file);
        } catch (const ModelError& e) {
            throw ModelError(m_path + ": " + e.what());
        }
        m_tokenizer = Tokenizer::create(Vocab::fromGguf(file));
    }
    setModelContext(m_config.contextLength);
    m_pool = std::make_unique<kernels::ThreadPool>(std::max(1, m_options.threads));
    if (preloaded) {
        m_warming = true; // the window opens now and closes when the warm pass is done
        m_thread = std::thread([this, preloaded, t0]() mutable {
            pthread_setname_np(pthread_self(), "mb-engine");
            try {
                m_current = makeVersion(std::move(preloaded));
                ensurePool(m_current->model->config());
                // Warm pass: a short prefill through every layer touches code, caches and threads.
                std::vector<int32_t> warm(8, m_tokenizer->bos() >= 0 ? m_tokenizer->bos() : 0);
                if (auto blocks = m_blocks->allocate(1)) {
                    std::vector<float> logits(static_cast<size_t>(m_config.vocabSize));
                    const int64_t n = std::min<int64_t>(8, m_kvPool->blockSize());
                    m_current->forward->runSequence(std::span(warm).first(static_cast<size_t>(n)), 0, *m_kvPool,
                                                    *blocks, logits.data());
                    m_blocks->release(*blocks);
                }
            } catch (const std::exception& e) {
                // No exception may leave the engine thread: requests will fail with this.
                std::lock_guard lock(m_mutex);
                m_loadError = std::string("warm-up failed: ") + e.what();
                m_current.reset();
            }
            m_warmupMs = msBetween(t0, std::chrono::steady_clock::now());
            {
                // primePrefixes() during the warm pass queued more warm-up: the window stays
                // open for it (else reload() would be accepted in the middle of it).
                std::lock_guard lock(m_mutex);
                m_warming = !m_primeRequests.empty();
            }
            m_idle.notify_all();
            engineLoop();
        });
    } else {
        m_thread = std::thread([this] {
            pthread_setname_np(pthread_self(), "mb-engine");
            engineLoop();
        });
    }
}

SessionImpl::~SessionImpl() {
    {
        std::lock_guard lock(m_mutex);
        m_stop = true;
    }
    m_wake.notify_all();
    if (m_thread.joinable()) m_thread.join();
}

std::shared_ptr<ModelVersion> SessionImpl::makeVersion(std::shared_ptr<LlamaModel> model) {
    auto v = std::make_shared<ModelVersion>();
    v->number = ++m_versions;
    v->model = std::move(model);
    ForwardOptions fo;
    fo.fused = m_profile.fused;
    fo.graphs = m_profile.graphs;
    if (m_profile.weights == WeightsPolicy::Preload) { // fast: angles precomputed once
        v->rope = std::make_unique<RopeTable>(v->model->config(), v->model->config().contextLength);
        fo.rope = v->rope.get();
    }
    v->forward = makeForwardBackend(*v->model, *m_pool, fo, m_options.device);
    m_modelVersion = v->number;
    m_weightBytes = v->model->weightBytes() + v->model->panelBytes(); // panels: made by the CPU Forward above
    m_loaded = true;
    return v;
}

void SessionImpl::setModelContext(int64_t contextLength) {
    m_modelContext = contextLength;
    m_contextLimit = std::min<int64_t>(m_profile.maxContext, contextLength - 1);
    ModelConfig c = m_config;
    c.contextLength = contextLength;
    m_poolPositions = poolTokens(c);
}

int64_t SessionImpl::poolTokens(const ModelConfig& c) const {
    // Auto size: room for two maximal contexts, and at least 16384 positions so a cache of
    // shared prefixes survives beside the running request.
    return m_profile.kvPoolTokens > 0 ? m_profile.kvPoolTokens
                                      : std::max<int64_t>(2 * std::min(c.contextLength, m_profile.maxContext), 16384);
}

uint64_t SessionImpl::blockBytes() const {
    return static_cast<uint64_t>(m_profile.blockSize) * static_cast<uint64_t>(m_config.layers * m_config.kvDim() * 2) *
           kvElementBytes(kvType());
}

void SessionImpl::ensurePool(const ModelConfig& c) {
    const int64_t bs = m_profile.blockSize;
    if (m_profile.kv == KvPolicy::Pool) {
        const int64_t tokens = poolTokens(c);
        const int64_t blocks = blocksFor(tokens, bs);
        if (!m_kvPool || m_kvPool->blocks() != blocks || m_kvPool->kvDim() != c.kvDim() || m_kvPool->layers() != c.layers) {
            m_kvPool = std::make_unique<KvCache>(c, blocks, bs, kvStorage(), kvType());
            if (m_blocks) { // the session's counters stay monotonic across a new pool
                m_queriesCarried += m_blocks->queries();
                m_hitsCarried += m_blocks->hits();
            }
            m_blocks = std::make_unique<KvBlockManager>(static_cast<int32_t>(blocks), static_cast<int32_t>(bs),
                                                        m_profile.prefixCache);
        }
        m_kvCapacity = m_kvPool->bytes();
    } else if (!m_blocks) {
        // Per-request KV has no shared pool; the manager only keeps the (zero) counters.
        m_blocks = std::make_unique<KvBlockManager>(1, static_cast<int32_t>(bs), false);
    }
}

std::string SessionImpl::promptOverContext(const std::string& tokens) const {
    return overContext(tokens, m_contextLimit, m_profile.maxContext, m_modelContext);
}

uint64_t SessionImpl::submit(InferenceRequest request, EventSink sink) {
    const int64_t submitted = nowNs();
    uint64_t id;
    {
        std::lock_guard lock(m_mutex);
        id = m_nextId++;
    }
    const auto promptLen = static_cast<int64_t>(request.prompt.size());
    if (request.prompt.empty()) {
        reject(id, sink, submitted, "the prompt is empty", 0);
        return id;
    }
    if (const std::string why = validateImages(request.images, promptLen, m_config.dim); !why.empty()) {
        reject(id, sink, submitted, why, promptLen);
        return id;
    }
    fillPlaceholders(request.prompt, request.images);
    size_t nextImage = 0; // token ids are checked outside the images only
    for (int64_t i = 0; i < promptLen; ++i) {
        if (nextImage < request.images.size() && i == request.images[nextImage].position) {
            i += request.images[nextImage++].count - 1;
            continue;
        }
        const int32_t t = request.prompt[static_cast<size_t>(i)];
        if (t < 0 || t >= m_config.vocabSize) {
            reject(id, sink, submitted, "token id " + std::to_string(t) + " is outside the vocabulary", promptLen);
            return id;
        }
    }
    if (request.maxTokens < 1) {
        reject(id, sink, submitted, "max tokens must be at least 1", promptLen);
        return id;
    }
    if (const std::string why = request.sampling.validate(); !why.empty()) {
        reject(id, sink, submitted, why, promptLen);
        return id;
    }
    auto seq = std::make_unique<Sequence>();
    // One reading of the limits: a swap may change them (a new model's context length).
    const int64_t limit = m_contextLimit, modelContext = m_modelContext;
    if (promptLen > limit) {
        const int64_t over = promptLen - limit;
        std::vector<int32_t>& p = request.prompt;
        const bool keepBos = p.front() == m_tokenizer->bos();
        switch (m_profile.truncation) {
        case Truncation::Reject:
            reject(id, sink, submitted, overContext(std::to_string(promptLen), limit, m_profile.maxContext, modelContext),
                   promptLen);
            return id;
        case Truncation::KeepTail: // BOS (if any) and the last tokens
            std::tie(seq->truncatedTokens, seq->imagesDropped) = cutPrompt(request, keepBos ? 1 : 0, (keepBos ? 1 : 0) + over);
            break;
        case Truncation::KeepHeadTail: { // BOS, the first half and the last half; the middle goes
            const int64_t head = (limit - (keepBos ? 1 : 0)) / 2 + (keepBos ? 1 : 0);
            std::tie(seq->truncatedTokens, seq->imagesDropped) = cutPrompt(request, head, head + over);
            break;
        }
        }
        if (p.empty()) { // an image reaching the end was dropped whole, and nothing came before it
            reject(id, sink, submitted,
                   "truncation left nothing of the prompt: an image at its end does not fit the context", promptLen);
            return id;
        }
    }
    if (m_profile.kv == KvPolicy::Pool) {
        const int64_t positions = std::min<int64_t>(static_cast<int64_t>(request.prompt.size()) + request.maxTokens,
                                                    modelContext);
        const int64_t pool = m_poolPositions;
        if (blocksFor(positions, m_profile.blockSize) > blocksFor(pool, m_profile.blockSize)) {
            reject(id, sink, submitted,
                   "the request needs " + std::to_string(positions) + " KV positions but the pool holds " +
                       std::to_string(pool),
                   promptLen);
            return id;
        }
    }
    seq->id = id;
    seq->inputRows = inputRows(request, m_config.dim);
    seq->request = std::move(request);
    seq->sink = std::move(sink);
    seq->submittedNs = submitted;
    {
        std::unique_lock lock(m_mutex);
        if (static_cast<int64_t>(m_waiting.size()) >= m_profile.queueCapacity) {
            lock.unlock();
            reject(id, seq->sink, submitted,
                   "the queue is full (" + std::to_string(m_profile.queueCapacity) + " requests waiting)", promptLen);
            return id;
        }
        m_live.insert(id);
        m_waiting.push_back(std::move(seq));
        m_waitingCount = static_cast<int64_t>(m_waiting.size());
    }
    m_wake.notify_all();
    return id;
}

void SessionImpl::reject(uint64_t id, const EventSink& sink, int64_t submittedNs, const std::string& why,
                         int64_t prompt) {
    RequestEvent e;
    e.id = id;
    e.kind = EventKind::Finished;
    e.timeNs = std::max(submittedNs, nowNs());
    e.status = FinishStatus::Rejected;
    e.error = why;
    e.promptTokens = prompt;
    if (sink) sink(e);
    m_finished++;
}

bool SessionImpl::cancel(uint64_t id) {
    {
        std::lock_guard lock(m_mutex);
        if (!m_live.count(id)) return false;
        m_cancelRequests.insert(id);
    }
    m_wake.notify_all();
    return true;
}

void SessionImpl::primePrefixes(std::vector<std::vector<int32_t>> prompts) {
    std::vector<InferenceRequest> requests(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) requests[i].prompt = std::move(prompts[i]);
    primePrompts(std::move(requests));
}

void SessionImpl::primePrompts(std::vector<InferenceRequest> prompts) {
    {
        std::lock_guard lock(m_mutex);
        m_warming = true;
        m_primeRequests.push_back(std::move(prompts));
    }
    m_wake.notify_all();
}

void SessionImpl::refuseReloadNow() const {
    // Caller holds m_mutex.
    if (m_profile.reload == ReloadPolicy::AfterWarmup && m_warming)
        throw ReloadError("reload refused: the fast-mode cache warm-up window is open; retry after warm-up ends");
    if (m_pendingModel) throw ReloadError("reload refused: another reload is still pending");
}

void SessionImpl::reload(const std::string& modelPath) {
    {
        std::lock_guard lock(m_mutex);
        refuseReloadNow();
    }
    std::shared_ptr<LlamaModel> model;
    try {
        model = LlamaModel::load(modelPath, {m_profile.precision, m_profile.weights == WeightsPolicy::Preload});
    } catch (const std::exception& e) {
        throw ReloadError(std::string("reload failed: ") + e.what());
    }
    // A reload is a new version of the session's model: requests are tokenized by its
    // vocabulary and K/V blocks are sized by its layers and KV width, so those stay. The
    // context length may change (contextLimit() follows the swap), except under a hot
    // reload with a pool, whose in-flight requests hold blocks of the pool it sizes.
    const ModelConfig& n = model->config();
    const auto differs = [](const char* what, int64_t now, int64_t next) {
        return "reload refused: the new model's " + std::string(what) + " (" + std::to_string(next) +
               ") differs from the session's (" + std::to_string(now) +
               "); a model of another shape needs a new session";
    };
    if (n.vocabSize != m_config.vocabSize) throw ReloadError(differs("vocabulary", m_config.vocabSize, n.vocabSize));
    if (n.layers != m_config.layers) throw ReloadError(differs("layer count", m_config.layers, n.layers));
    if (n.kvDim() != m_config.kvDim()) throw ReloadError(differs("KV width", m_config.kvDim(), n.kvDim()));
    if (m_profile.kv == KvPolicy::Pool && m_profile.reload == ReloadPolicy::Hot && poolTokens(n) != m_poolPositions)
        throw ReloadError(differs("KV pool size in positions (from its context length)", m_poolPositions, poolTokens(n)));
    {
        std::lock_guard lock(m_mutex);
        // Checked again: a warm-up window may have opened, or another reload queued its
        // model, while this one loaded.
        refuseReloadNow();
        m_pendingModel = std::move(model);
    }
    m_wake.notify_all();
}

void SessionImpl::flushCache() {
    {
        std::lock_guard lock(m_mutex);
        m_flushRequested = true;
    }
    m_wake.notify_all();
}

SessionStats SessionImpl::stats() const {
    SessionStats s;
    s.prefixQueries = m_prefixQueries;
    s.prefixHits = m_prefixHits;
    s.kvBytesInUse = m_kvInUse;
    s.kvBytesCapacity = m_kvCapacity;
    s.kvPooled = m_kvPool != nullptr;
    s.running = m_runningCount;
    s.waiting = m_waitingCount;
    s.finished = m_finished;
    s.modelLoaded = m_loaded;
    s.warmingUp = m_warming;
    s.warmupMs = m_warmupMs;
    s.loadMs = m_loadMs;
    s.modelVersion = m_modelVersion;
    s.weightBytes = m_weightBytes;
    return s;
}

void SessionImpl::waitIdle() {
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [&] {
        return m_waiting.empty() && m_runningCount == 0 && m_primeRequests.empty() && !m_pendingModel &&
               !m_warming && m_cancelRequests.empty() && !m_flushRequested && !m_busy;
    });
}

bool SessionImpl::applyPendingSwap() {
    // Engine thread, lock held by the caller. Fast mode swaps only between requests.
    if (!m_pendingModel) return false;
    if (m_profile.reload == ReloadPolicy::AfterWarmup && !m_running.empty()) return false;
    std::shared_ptr<LlamaModel> model = std::move(m_pendingModel);
    m_pendingModel.reset();
    try {
        m_current = makeVersion(std::move(model));
        ensurePool(m_current->model->config());
    } catch (const std::exception&) {
        return false; // out of memory for the new version's buffers: keep serving the current one
    }
    setModelContext(m_current->model->config().contextLength);
    m_loadError.clear(); // a session whose load or warm-up failed serves again
    m_warmupMs = 0;      // the new version's warm-up: its re-priming, if any
    if (m_profile.kv == KvPolicy::Pool) clearPrefixCache(); // cached K/V belong to the old weights
    if (m_profile.reload == ReloadPolicy::AfterWarmup && !m_primed.empty()) {
        m_warming = true;
        auto again = std::move(m_primed);
        m_primed.clear();
        m_primeRequests.push_back(std::move(again));
    }
    return true;
}

void SessionImpl::engineLoop() {
    std::unique_lock lock(m_mutex);
    for (;;) {
        if (m_stop) break;
        processCancellations(lock);
        if (m_flushRequested) {
            clearPrefixCache();
            m_flushRequested = false;
            publishStats();
        }
        applyPendingSwap();
        if (!m_primeRequests.empty() && m_current) {
            auto batches = std::move(m_primeRequests);
            m_primeRequests.clear();
            m_warming = true;
            lock.unlock();
            const auto t0 = std::chrono::steady_clock::now();
            for (const auto& b : batches) runPriming(b);
            // Adds to the current version's warm-up (preload and warm pass, earlier priming):
            // primePrefixes() may come before or after the warm pass ends.
            m_warmupMs = m_warmupMs + msBetween(t0, std::chrono::steady_clock::now());
            lock.lock();
            m_warming = !m_primeRequests.empty();
            m_idle.notify_all();
            continue;
        }
        if (!m_primeRequests.empty() && !m_current) {
            // No cache to prime: on-demand weights load with the first request, and a failed
            // preload or warm-up has none. Dropping the work closes the window, so the wait
            // below cannot see it as pending forever.
            m_primeRequests.clear();
            m_warming = false;
        }
        const bool deferred = admit(lock);
        if (m_stop) break;
        if (m_running.empty()) {
            m_idle.notify_all();
            if (deferred) {
                m_wake.wait_for(lock, std::chrono::milliseconds(1));
            } else {
                // A predicate, not a bare wait: submit/cancel/flush/prime/reload may have
                // notified while admit() had the lock released (on-demand load, failWaiting),
                // when nobody was waiting, and that notification is gone.
                m_wake.wait(lock, [&] {
                    return m_stop || !m_waiting.empty() || !m_cancelRequests.empty() || m_flushRequested ||
                           m_pendingModel != nullptr || !m_primeRequests.empty();
                });
            }
            continue;
        }
        lock.unlock();
        step();
        lock.lock();
        m_idle.notify_all();
    }
    // Shutdown: everything still queued or running ends as cancelled.
    std::deque<std::unique_ptr<Sequence>> waiting = std::move(m_waiting);
    m_waiting.clear();
    lock.unlock();
    for (auto& s : m_running) finish(*s, FinishStatus::Cancelled, StopReason::Cancelled, "session closed");
    m_running.clear();
    for (auto& s : waiting) finish(*s, FinishStatus::Cancelled, StopReason::Cancelled, "session closed");
    m_runningCount = 0;
    m_waitingCount = 0;
}

} // namespace mb::engine
