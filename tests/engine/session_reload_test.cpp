// Sessions across reloads, flushes and failed warm-ups, on synthetic models (no shared data needed).
#include "engine/session.h"
#include "engine/synthetic_model.h"
#include "session_test_util.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <climits>
#include <filesystem>
#include <future>

using namespace mb::engine;
using namespace mb::engine::test_util;

namespace {

// A synthetic `tiny` model (2 layers, context 128, vocabulary 512) in the temp directory,
// removed with the object. Different seeds give different weights of one shape.
class TinyModel {
public:
    explicit TinyModel(uint64_t seed, void (*reshape)(ModelConfig&) = nullptr) {
        SyntheticPreset preset = *findSyntheticPreset("tiny");
        if (reshape) reshape(preset.config);
        m_path = (std::filesystem::temp_directory_path() /
                  ("mb-reload-" + std::to_string(::getpid()) + "-" + std::to_string(seed) + ".gguf"))
                     .string();
        writeSyntheticModel(preset, mb::kernels::TensorType::F32, seed, m_path);
    }
    ~TinyModel() { std::filesystem::remove(m_path); }
    TinyModel(const TinyModel&) = delete;
    TinyModel& operator=(const TinyModel&) = delete;
    const std::string& path() const { return m_path; }

private:
    std::string m_path;
};

InferenceRequest uncapped(std::vector<int32_t> prompt, int32_t maxTokens) {
    InferenceRequest r = greedy(std::move(prompt), maxTokens);
    r.stopAtEos = false;
    return r;
}

} // namespace

TEST(SessionReload, HotSwapWithPrefixCacheNeverCachesTheOldWeightsKv) {
    const TinyModel a(1), b(2);
    Profile p = fastNative();
    p.reload = ReloadPolicy::Hot; // a custom profile: prefix cache and hot reload together
    auto s = Session::start(a.path(), p);
    s->waitIdle();
    Collector c;
    // A prompt shorter than one block: its first block fills (and would be published) only
    // after the swap, while the request still runs on the old version.
    const std::vector<int32_t> prompt = {1, 300, 301, 302, 303, 304, 305, 306, 307, 308};
    std::promise<void> firstToken, reloaded;
    std::shared_future<void> reloadedF = reloaded.get_future().share();
    std::atomic<bool> once{false};
    EventSink base = c.sink();
    const uint64_t r1 = s->submit(uncapped(prompt, 30), [&, base, reloadedF](const RequestEvent& e) {
        base(e);
        if (e.kind == EventKind::Token && !once.exchange(true)) {
            firstToken.set_value();
            reloadedF.wait(); // holds the engine until the new version is queued
        }
    });
    firstToken.get_future().wait();
    s->reload(b.path());
    reloaded.set_value();
    c.wait(1);
    const RequestEvent old = c.result(r1);
    ASSERT_EQ(old.status, FinishStatus::Ok) << old.error;
    EXPECT_EQ(old.modelVersion, 1u);

    // The old request's own continuation, now asked of the new version.
    std::vector<int32_t> again = prompt;
    again.insert(again.end(), old.tokens.begin(), old.tokens.end());
    again.resize(20);
    const uint64_t r2 = s->submit(uncapped(again, 10), c.sink());
    c.wait(2);
    const RequestEvent fresh = c.result(r2);
    EXPECT_EQ(fresh.modelVersion, 2u);
    EXPECT_EQ(fresh.cachedTokens, 0) << "a block computed by the old weights was reused";

    auto reference = Session::start(b.path(), fastNative());
    Collector rc;
    reference->submit(uncapped(again, 10), rc.sink());
    rc.wait(1);
    EXPECT_EQ(fresh.tokens, rc.result(1).tokens);
}

TEST(SessionReload, RefusesAnotherShapeAndFollowsANewContextLength) {
    const TinyModel a(1);
    const TinyModel shorter(3, [](ModelConfig& c) { c.contextLength = 64; });
    const TinyModel deeper(4, [](ModelConfig& c) { c.layers += 2; });
    std::vector<int32_t> longPrompt = {1};
    for (int32_t i = 0; i < 99; ++i) longPrompt.push_back(300 + i % 50);
    for (const Profile& p : {fastNative(), Profile::regular()}) {
        SCOPED_TRACE(p.name);
        auto s = Session::start(a.path(), p);
        s->waitIdle();
        try {
            s->reload(deeper.path());
            ADD_FAILURE() << "a model with more layers was accepted";
        } catch (const ReloadError& e) {
            EXPECT_NE(std::string(e.what()).find("layer count (4)"), std::string::npos) << e.what();
        }
        EXPECT_EQ(s->contextLimit(), 127);
        s->reload(shorter.path()); // same K/V shape, shorter context: a new version
        s->waitIdle();
        Collector c;
        s->submit(uncapped({1, 300, 301}, 4), c.sink()); // loads it (on demand) or runs on it
        c.wait(1);
        EXPECT_EQ(c.result(1).status, FinishStatus::Ok) << c.result(1).error;
        EXPECT_EQ(c.result(1).modelVersion, p.weights == WeightsPolicy::Preload ? 2u : 1u);
        EXPECT_EQ(s->contextLimit(), 63);
        // Limits follow the new model: fast truncates to it, regular rejects past it.
        s->submit(uncapped(longPrompt, 4), c.sink());
        c.wait(2);
        const RequestEvent e = c.result(2);
        if (p.truncation == Truncation::Reject) {
            EXPECT_EQ(e.status, FinishStatus::Rejected);
            EXPECT_NE(e.error.find("at most 63"), std::string::npos) << e.error;
        } else {
            EXPECT_EQ(e.status, FinishStatus::Ok) << e.error;
            EXPECT_EQ(e.truncatedTokens, 100 - 63);
        }
    }
}

TEST(SessionWarmup, FailedWarmupWithPrimingEndsEveryWait) {
    const TinyModel a(1);
    Profile p = fastNative();
    p.kvPoolTokens = INT_MAX; // about 1 TiB of K/V: refused before anything is allocated
    ASSERT_EQ(p.validate(), "");
    auto s = Session::start(a.path(), p);
    // Migration node D primes right after the start: the warm pass may fail before or after.
    s->primePrefixes({{1, 300, 301, 302, 303, 304, 305, 306, 307, 308, 309, 310, 311, 312, 313, 314, 315, 316}});
    s->waitIdle(); // hung here (engine spinning under its lock) before the fix
    EXPECT_FALSE(s->stats().warmingUp);
    Collector c;
    s->submit(uncapped({1, 300}, 2), c.sink());
    c.wait(1);
    const RequestEvent e = c.result(1);
    EXPECT_EQ(e.status, FinishStatus::Error);
    EXPECT_NE(e.error.find("warm-up failed"), std::string::npos) << e.error;
    EXPECT_NE(e.error.find("KV cache needs"), std::string::npos) << e.error;
    s.reset(); // and the destructor returns
}

TEST(SessionWarmup, PrimingAddsToTheWarmupFigure) {
    const TinyModel a(1);
    auto s = Session::start(a.path(), fastNative());
    s->waitIdle();
    const double warmPass = s->stats().warmupMs; // preload + warm pass
    EXPECT_GT(warmPass, 0.0);
    std::vector<int32_t> prompt = {1};
    for (int32_t i = 0; i < 100; ++i) prompt.push_back(260 + i);
    s->primePrefixes({prompt});
    s->waitIdle();
    EXPECT_GT(s->stats().warmupMs, warmPass); // was replaced by the priming's own time
}
