// Sessions in fast and regular profiles on the real stories260K model: identity, batching, cache, limits.
#include "engine/session.h"
#include "engine/synthetic_model.h"
#include "session_test_util.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <map>

using namespace mb::engine;
using namespace mb::engine::test_util;

namespace {

const std::vector<int32_t> kOnce = {1, 403, 407, 261, 378};
const std::vector<int32_t> kGolden20 = {432, 383, 286, 261, 376, 298, 315, 421, 395, 317,
                                        426, 338, 401, 396, 267, 337, 410, 408, 419, 292};

std::vector<int32_t> longPrompt(size_t n, int32_t seed) {
    std::vector<int32_t> p = {1};
    for (size_t i = 1; i < n; ++i) p.push_back(static_cast<int32_t>(259 + (i * 7 + static_cast<size_t>(seed) * 13) % 250));
    return p;
}

} // namespace

TEST(Session, FastAndRegularGreedyAreTokenIdentical) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    for (const Profile& p : {fastNative(), Profile::regular()}) {
        auto s = Session::start(model.string(), p, {.threads = 2});
        Collector c;
        const uint64_t id = s->submit(greedy(kOnce, 20), c.sink());
        c.wait(1);
        const RequestEvent r = c.result(id);
        EXPECT_EQ(r.status, FinishStatus::Ok) << r.error;
        EXPECT_EQ(r.tokens, kGolden20) << p.name;
        EXPECT_EQ(r.text, ", there was a little girl named Lily. She loved to play outsid") << p.name;
    }
}

TEST(Session, MixedPrecisionIsTokenIdenticalAcrossModesWithHalfTheKvBytes) {
    // The fast profile's default `mixed` keeps K/V in F16: regular at `mixed` gives the same
    // tokens, and either takes half the KV bytes of the same request at native F32.
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Profile regularMixed = Profile::regular();
    regularMixed.precision = Precision::Mixed;
    Profile regularPool = Profile::regular(); // native precision, fast's pool geometry
    regularPool.kv = KvPolicy::Pool;
    regularPool.prefixCache = false;
    std::map<std::string, RequestEvent> results;
    for (const Profile& p : {Profile::fast(), regularMixed, Profile::regular(), regularPool}) {
        auto s = Session::start(model.string(), p, {.threads = 2});
        Collector c;
        const uint64_t id = s->submit(greedy(longPrompt(40, 3), 24), c.sink());
        c.wait(1);
        const RequestEvent r = c.result(id);
        ASSERT_EQ(r.status, FinishStatus::Ok) << r.error;
        ASSERT_EQ(r.tokens.size(), 24u);
        results[p.name + (p.kv == KvPolicy::Pool ? "/pool" : "") + precisionName(p.precision)] = r;
    }
    const RequestEvent& fast = results.at("fast/poolmixed");
    const RequestEvent& mixed = results.at("regularmixed");
    const RequestEvent& native = results.at("regularnative");
    const RequestEvent& nativePool = results.at("regular/poolnative");
    EXPECT_GT(native.kvBytesPeak, 0u);
    EXPECT_EQ(fast.tokens, mixed.tokens);
    EXPECT_EQ(mixed.kvBytesPeak * 2, native.kvBytesPeak);
    EXPECT_EQ(fast.kvBytesPeak * 2, nativePool.kvBytesPeak);
}

TEST(Session, EventsArriveInOrderWithMonotonicTimes) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto s = Session::start(model.string(), Profile::regular());
    Collector c;
    const uint64_t id = s->submit(greedy(kOnce, 5), c.sink());
    c.wait(1);
    const auto ev = c.events(id);
    ASSERT_EQ(ev.size(), 7u); // scheduled, 5 tokens, finished
    EXPECT_EQ(ev.front().kind, EventKind::Scheduled);
    EXPECT_EQ(ev.back().kind, EventKind::Finished);
    for (size_t i = 1; i < ev.size(); ++i) EXPECT_GE(ev[i].timeNs, ev[i - 1].timeNs);
    for (size_t i = 1; i + 1 < ev.size(); ++i) EXPECT_EQ(ev[i].token, kGolden20[i - 1]);
}

TEST(Session, BatchedDecodeEqualsOneAtATime) {
    // At native precision (F32 K/V) and at `mixed` (Q8_0 weights, F16 K/V).
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    std::vector<std::vector<int32_t>> prompts = {kOnce, longPrompt(40, 1), longPrompt(77, 2), {1, 346, 306, 414}};
    for (Precision precision : {Precision::Native, Precision::Mixed}) {
        std::vector<std::vector<int32_t>> alone;
        {
            Profile one = Profile::regular();
            one.precision = precision;
            one.batching = BatchingPolicy::Off;
            one.maxBatch = 1;
            auto s = Session::start(model.string(), one);
            for (const auto& p : prompts) {
                Collector c;
                const uint64_t id = s->submit(greedy(p, 24), c.sink());
                c.wait(1);
                alone.push_back(c.result(id).tokens);
            }
        }
        Profile batched = Profile::regular();
        batched.precision = precision;
        batched.maxBatch = 4;
        batched.prefillChunk = 16; // chunked prefill interleaved with decodes
        batched.maxBatchTokens = 40;
        auto s = Session::start(model.string(), batched, {.threads = 2});
        Collector c;
        std::vector<uint64_t> ids;
        for (const auto& p : prompts) ids.push_back(s->submit(greedy(p, 24), c.sink()));
        c.wait(prompts.size());
        for (size_t i = 0; i < prompts.size(); ++i) {
            EXPECT_EQ(c.result(ids[i]).tokens.size(), 24u);
            EXPECT_EQ(c.result(ids[i]).tokens, alone[i]) << precisionName(precision) << " prompt " << i;
        }
    }
}

TEST(Session, PrefixCacheServesSharedPrefixes) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto s = Session::start(model.string(), fastNative());
    auto a = longPrompt(50, 3);
    auto b = a;
    b.resize(40);
    b.push_back(300); // shares 40 tokens with a: two full blocks of 16
    Collector c;
    const uint64_t ia = s->submit(greedy(a, 4), c.sink());
    c.wait(1);
    const uint64_t ib = s->submit(greedy(b, 4), c.sink());
    c.wait(2);
    EXPECT_EQ(c.result(ia).cachedTokens, 0);
    EXPECT_EQ(c.result(ib).cachedTokens, 32);
    const SessionStats st = s->stats();
    EXPECT_EQ(st.prefixQueries, a.size() - 1 + b.size() - 1);
    EXPECT_EQ(st.prefixHits, 32u);

    // The cached answer equals an uncached one.
    auto r = Session::start(model.string(), Profile::regular());
    Collector c2;
    const uint64_t ir = r->submit(greedy(b, 4), c2.sink());
    c2.wait(1);
    EXPECT_EQ(c2.result(ir).tokens, c.result(ib).tokens);
    EXPECT_EQ(r->stats().prefixQueries, 0u);
}

TEST(Session, FastTruncatesAtTheCapRegularRejects) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Profile fast = fastNative();
    fast.maxContext = 64;
    Profile regular = Profile::regular();
    regular.maxContext = 64;
    auto f = Session::start(model.string(), fast);
    auto r = Session::start(model.string(), regular);
    EXPECT_EQ(f->contextLimit(), 64);
    Collector c, d; // request ids are per session
    const uint64_t f64 = f->submit(greedy(longPrompt(64, 4), 2), c.sink());
    const uint64_t f65 = f->submit(greedy(longPrompt(65, 4), 2), c.sink());
    const uint64_t r64 = r->submit(greedy(longPrompt(64, 4), 2), d.sink());
    const uint64_t r65 = r->submit(greedy(longPrompt(65, 4), 2), d.sink());
    c.wait(2);
    d.wait(2);
    EXPECT_EQ(c.result(f64).truncatedTokens, 0);
    EXPECT_EQ(c.result(f64).status, FinishStatus::Ok);
    EXPECT_EQ(c.result(f65).status, FinishStatus::Ok);
    EXPECT_EQ(c.result(f65).truncatedTokens, 1);
    EXPECT_EQ(c.result(f65).promptTokens, 64);
    EXPECT_EQ(d.result(r64).status, FinishStatus::Ok);
    EXPECT_EQ(d.result(r65).status, FinishStatus::Rejected);
    EXPECT_NE(d.result(r65).error.find("at most 64"), std::string::npos) << d.result(r65).error;
}

TEST(Session, KeepTailKeepsBosAndTheEnd) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Profile fast = fastNative();
    fast.maxContext = 20;
    auto f = Session::start(model.string(), fast);
    auto prompt = longPrompt(30, 5);
    std::vector<int32_t> expected = {1};
    expected.insert(expected.end(), prompt.end() - 19, prompt.end());
    auto r = Session::start(model.string(), Profile::regular());
    Collector c, d;
    const uint64_t a = f->submit(greedy(prompt, 6), c.sink());
    const uint64_t b = r->submit(greedy(expected, 6), d.sink());
    c.wait(1);
    d.wait(1);
    EXPECT_EQ(c.result(a).truncatedTokens, 10);
    EXPECT_EQ(c.result(a).tokens, d.result(b).tokens);
}

TEST(Session, CancelRunningAndWaiting) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto s = Session::start(model.string(), fastNative()); // one at a time: the second waits
    Collector c;
    std::atomic<uint64_t> first{0};
    std::atomic<int> tokens{0};
    Session* sp = s.get();
    EventSink sink = c.sink();
    auto cancelling = [&, sink](const RequestEvent& e) {
        sink(e);
        if (e.kind == EventKind::Token && ++tokens == 3) sp->cancel(first);
    };
    InferenceRequest r = greedy(kOnce, 400);
    r.stopAtEos = false;
    first = s->submit(r, cancelling);
    const uint64_t second = s->submit(greedy(kOnce, 400), c.sink());
    EXPECT_TRUE(s->cancel(second));
    c.wait(2);
    EXPECT_EQ(c.result(first).status, FinishStatus::Cancelled);
    EXPECT_GE(c.result(first).outputTokens, 3);
    EXPECT_LT(c.result(first).outputTokens, 400);
    EXPECT_EQ(c.result(second).status, FinishStatus::Cancelled);
    EXPECT_FALSE(s->cancel(12345));
    s->waitIdle();
    EXPECT_EQ(s->stats().running, 0);
}

TEST(Session, FullQueueRejects) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Profile p = fastNative();
    p.queueCapacity = 2;
    auto s = Session::start(model.string(), p);
    Collector c;
    std::vector<uint64_t> ids;
    InferenceRequest r = greedy(kOnce, 300);
    r.stopAtEos = false;
    for (int i = 0; i < 8; ++i) ids.push_back(s->submit(r, c.sink()));
    c.wait(8);
    int rejected = 0;
    for (uint64_t id : ids) {
        const auto e = c.result(id);
        if (e.status == FinishStatus::Rejected) {
            ++rejected;
            EXPECT_NE(e.error.find("queue is full"), std::string::npos);
        }
    }
    EXPECT_GE(rejected, 5); // at most one running and two waiting
}

TEST(Session, BadRequestsAreRejectedWithReasons) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto s = Session::start(model.string(), Profile::regular());
    Collector c;
    const uint64_t empty = s->submit(greedy({}, 4), c.sink());
    const uint64_t badToken = s->submit(greedy({1, 9999}, 4), c.sink());
    const uint64_t noTokens = s->submit(greedy(kOnce, 0), c.sink());
    c.wait(3);
    EXPECT_NE(c.result(empty).error.find("empty"), std::string::npos);
    EXPECT_NE(c.result(badToken).error.find("9999"), std::string::npos);
    EXPECT_NE(c.result(noTokens).error.find("max tokens"), std::string::npos);
}

TEST(Session, HotReloadUnderLoadFailsNothing) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    MB_REQUIRE_DATA(f16, "models/stories260K-f16.gguf");
    Profile p = Profile::regular();
    p.maxBatch = 2;
    auto s = Session::start(model.string(), p, {.threads = 2});
    Collector c;
    std::vector<uint64_t> ids;
    std::promise<void> started;
    std::atomic<bool> once{false};
    EventSink sink = c.sink();
    auto first = [&, sink](const RequestEvent& e) {
        sink(e);
        if (e.kind == EventKind::Token && !once.exchange(true)) started.set_value();
    };
    ids.push_back(s->submit(greedy(kOnce, 60), first));
    for (int i = 0; i < 3; ++i) ids.push_back(s->submit(greedy(kOnce, 60), c.sink()));
    started.get_future().wait(); // the first request is in flight before the reload
    s->reload(f16.string());
    for (int i = 0; i < 4; ++i) ids.push_back(s->submit(greedy(kOnce, 20), c.sink()));
    c.wait(ids.size());
    std::map<uint64_t, int> versions;
    for (uint64_t id : ids) {
        const auto e = c.result(id);
        EXPECT_EQ(e.status, FinishStatus::Ok) << e.error;
        versions[e.modelVersion]++;
    }
    for (size_t i = 4; i < ids.size(); ++i) EXPECT_EQ(c.result(ids[i]).modelVersion, 2u); // after the swap
    EXPECT_EQ(c.result(ids[0]).modelVersion, 1u); // in flight: finished on the old version
    EXPECT_EQ(versions[1] + versions[2], 8);
    EXPECT_EQ(s->stats().modelVersion, 2u);
}

TEST(Session, FastRefusesReloadDuringWarmupThenAllowsIt) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto s = Session::start(model.string(), fastNative());
    s->primePrefixes({longPrompt(100, 6), longPrompt(120, 7)});
    EXPECT_THROW(s->reload(model.string()), ReloadError);
    s->waitIdle();
    EXPECT_FALSE(s->stats().warmingUp);
    const uint64_t primedHits = s->stats().prefixHits;
    Collector c;
    const uint64_t a = s->submit(greedy(longPrompt(100, 6), 3), c.sink());
    c.wait(1);
    EXPECT_EQ(c.result(a).cachedTokens, 96); // primed: six full blocks
    EXPECT_GT(s->stats().prefixHits, primedHits);
    EXPECT_NO_THROW(s->reload(model.string()));
    s->waitIdle();
    EXPECT_EQ(s->stats().modelVersion, 2u);
    const uint64_t b = s->submit(greedy(longPrompt(100, 6), 3), c.sink());
    c.wait(2);
    EXPECT_EQ(c.result(b).status, FinishStatus::Ok);
    EXPECT_EQ(c.result(b).tokens, c.result(a).tokens);
}

TEST(Session, MaxWaitHoldsAnIdleScheduler) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Profile p = Profile::regular();
    p.maxWaitMs = 30;
    auto s = Session::start(model.string(), p);
    s->submit(greedy(kOnce, 1), {}); // loads the on-demand weights first
    s->waitIdle();
    Collector c;
    const auto t0 = std::chrono::steady_clock::now().time_since_epoch();
    const uint64_t id = s->submit(greedy(kOnce, 2), c.sink());
    c.wait(1);
    const auto ev = c.events(id);
    ASSERT_EQ(ev.front().kind, EventKind::Scheduled);
    // The policy forbids starting a lone request before max_wait_ms: a lower bound that
    // holds however slow the machine is, not a speed assertion.
    const double queuedMs = static_cast<double>(ev.front().timeNs - std::chrono::duration_cast<std::chrono::nanoseconds>(t0).count()) / 1e6;
    EXPECT_GE(queuedMs, 30.0);
}

TEST(Session, UnbatchedServesInSubmissionOrder) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto s = Session::start(model.string(), fastNative());
    std::mutex m;
    std::vector<uint64_t> order;
    auto sink = [&](const RequestEvent& e) {
        if (e.kind != EventKind::Finished) return;
        std::lock_guard lock(m);
        order.push_back(e.id);
    };
    std::vector<uint64_t> ids;
    for (int i = 0; i < 5; ++i) ids.push_back(s->submit(greedy(longPrompt(20 + i, i), 5), sink));
    s->waitIdle();
    EXPECT_EQ(order, ids);
}

TEST(Session, DynamicBatchingRespectsMaxBatch) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Profile p = Profile::regular();
    p.maxBatch = 2;
    p.maxWaitMs = 1000; // the idle scheduler waits for a full first batch
    auto s = Session::start(model.string(), p, {.threads = 2});
    std::mutex m;
    int running = 0, peak = 0;
    auto sink = [&](const RequestEvent& e) {
        std::lock_guard lock(m);
        if (e.kind == EventKind::Scheduled) peak = std::max(peak, ++running);
        if (e.kind == EventKind::Finished) --running;
    };
    for (int i = 0; i < 5; ++i) s->submit(greedy(longPrompt(30 + i, i), 12), sink);
    s->waitIdle();
    EXPECT_EQ(peak, 2);
    EXPECT_EQ(running, 0);
}

TEST(Session, FailedLoadServesLateSubmitsAndWaitIdleWaitsForItsEvents) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto path = std::filesystem::temp_directory_path() /
                      ("mb-session-gone-" + std::to_string(::getpid()) + ".gguf");
    std::filesystem::copy_file(model, path, std::filesystem::copy_options::overwrite_existing);
    Collector c;
    std::promise<void> inSink, release;
    std::shared_future<void> released = release.get_future().share();
    std::atomic<bool> once{false};
    EventSink sink = c.sink();
    auto blocking = [&, sink, released](const RequestEvent& e) {
        if (e.kind == EventKind::Finished && !once.exchange(true)) {
            inSink.set_value();
            released.wait();
        }
        sink(e);
    };
    auto s = Session::start(path.string(), Profile::regular()); // header and tokenizer read now
    std::filesystem::remove(path); // so the on-demand load of the first request fails
    const uint64_t a = s->submit(greedy(kOnce, 2), blocking);
    inSink.get_future().wait(); // the engine delivers a's failure with the session lock released
    auto idle = std::async(std::launch::async, [&] { s->waitIdle(); });
    EXPECT_EQ(idle.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout)
        << "waitIdle returned before a's Finished event was delivered";
    const uint64_t b = s->submit(greedy(kOnce, 2), c.sink()); // its wake-up comes while nobody waits
    release.set_value();
    ASSERT_TRUE(c.waitFor(2, std::chrono::seconds(20))) << "a request submitted meanwhile was never served";
    idle.wait();
    EXPECT_EQ(c.result(a).status, FinishStatus::Error);
    EXPECT_EQ(c.result(b).status, FinishStatus::Error);
    EXPECT_NE(c.result(b).error.find("model load failed"), std::string::npos) << c.result(b).error;
}

TEST(Session, DestroyingWithRequestsInFlightFinishesThemAll) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Collector c;
    {
        Profile p = Profile::regular();
        p.maxBatch = 2;
        auto s = Session::start(model.string(), p, {.threads = 2});
        InferenceRequest r = greedy(kOnce, 400);
        r.stopAtEos = false;
        for (int i = 0; i < 6; ++i) s->submit(r, c.sink());
    } // running and waiting requests end as cancelled, on the engine thread, before it joins
    ASSERT_TRUE(c.waitFor(6, std::chrono::seconds(0)));
    for (uint64_t id = 1; id <= 6; ++id) {
        const FinishStatus st = c.result(id).status;
        EXPECT_TRUE(st == FinishStatus::Cancelled || st == FinishStatus::Ok) << finishStatusName(st);
    }
}

TEST(Session, HotReloadRefusesAModelThatWouldReplaceTheKvPool) {
    SyntheticPreset small = *findSyntheticPreset("tiny");
    SyntheticPreset deeper = small;
    deeper.config.layers += 1; // same vocabulary, different KV shape
    const auto dir = std::filesystem::temp_directory_path();
    const std::string a = (dir / ("mb-hot-a-" + std::to_string(::getpid()) + ".gguf")).string();
    const std::string b = (dir / ("mb-hot-b-" + std::to_string(::getpid()) + ".gguf")).string();
    writeSyntheticModel(small, mb::kernels::TensorType::F32, 1, a);
    writeSyntheticModel(deeper, mb::kernels::TensorType::F32, 1, b);
    Profile p = Profile::regular();
    p.kv = KvPolicy::Pool; // in-flight requests hold blocks of the one pool
    EXPECT_EQ(p.validate(), "");
    auto s = Session::start(a, p);
    EXPECT_THROW(s->reload(b), ReloadError);
    EXPECT_NO_THROW(s->reload(a));
    s->waitIdle();
    EXPECT_EQ(s->stats().modelVersion, 1u); // on demand: nothing loaded yet, the reload is version 1
    std::filesystem::remove(a);
    std::filesystem::remove(b);
}
