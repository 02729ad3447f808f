// The runner and comparisons on the real stories260K model: records, order, arrivals, identical work.
#include "engine/session.h"
#include "lab/comparison.h"
#include "lab/runner.h"
#include "plugins/sha256.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

using namespace mb;
using namespace mb::lab;

namespace {

std::unique_ptr<EmbeddedTarget> target(const std::string& model, engine::Profile p) {
    return std::make_unique<EmbeddedTarget>(engine::Session::start(model, p, {.threads = 2}), p.name);
}

engine::Profile fastNative() {
    engine::Profile p = engine::Profile::fast();
    p.precision = engine::Precision::Native;
    return p;
}

WorkloadSpec smallSharedPrefix() {
    WorkloadSpec spec = *builtinWorkload("shared-prefix");
    spec.sharedPrefix.groups = 3;
    spec.sharedPrefix.perGroup = 3;
    spec.sharedPrefix.prefixTokens = 64;
    spec.sharedPrefix.suffixTokens = 8;
    spec.output.a = 6;
    spec.output.max = 6;
    return spec;
}

const TokenSpace kSpace{1, 259, 512};

} // namespace

TEST(Runner, RecordsEveryRequestWithConsistentTimes) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto t = target(model.string(), engine::Profile::regular());
    const auto requests = buildWorkload(smallSharedPrefix(), kSpace);
    RunOptions o;
    o.arrival.concurrency = 3;
    o.sampling.temperature = 0;
    int progressCalls = 0;
    o.onProgress = [&](const RunProgress& p) {
        ++progressCalls;
        EXPECT_LE(p.done, p.total);
    };
    const RunResult r = runWorkload(*t, requests, o);
    ASSERT_EQ(r.records.size(), 9u);
    EXPECT_GT(progressCalls, 0);
    for (const auto& rec : r.records) {
        EXPECT_EQ(rec.status, RequestStatus::Ok) << rec.error;
        EXPECT_EQ(rec.outputTokens, 6);
        EXPECT_EQ(rec.tokenTimesMs.size(), 6u);
        EXPECT_LE(rec.submittedMs, rec.scheduledMs);
        EXPECT_LE(rec.scheduledMs, rec.firstTokenMs);
        EXPECT_LE(rec.firstTokenMs, rec.finishedMs);
        EXPECT_EQ(rec.promptTokens, 1 + 64 + 8);
    }
    ASSERT_FALSE(r.samples.empty());
    const RunSummary s = summarize(r.records, r.samples);
    EXPECT_EQ(s.ok, 9);
    EXPECT_EQ(s.prefixQueries, 0u); // regular has no prefix cache
}

TEST(Runner, PrefixCacheHitRateIsMeasuredFromTheRunStart) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto t = target(model.string(), fastNative());
    auto requests = buildWorkload(smallSharedPrefix(), kSpace);
    auto primers = prefixPrimers(requests, 64);
    ASSERT_EQ(primers.size(), 3u);
    primers.insert(primers.end(), requests.begin(), requests.end());
    RunOptions o;
    o.sampling.temperature = 0;
    const RunResult r = runWorkload(*t, primers, o);
    ASSERT_EQ(r.records.size(), 9u); // primers are not recorded
    const RunSummary s = summarize(r.records, r.samples);
    // Each measured prompt looks up 72 tokens and finds the 64 primed ones.
    EXPECT_EQ(s.prefixQueries, 9u * 72);
    EXPECT_EQ(s.prefixHits, 9u * 64);
    for (const auto& rec : r.records) EXPECT_EQ(rec.cachedTokens, 64);
}

TEST(Runner, MultiTurnWaitsForThePreviousTurn) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto t = target(model.string(), engine::Profile::regular());
    WorkloadSpec spec = *builtinWorkload("multi-turn");
    spec.multiTurn.conversations = 3;
    spec.multiTurn.turns = 3;
    spec.input = {LengthDist::Kind::Fixed, 20, 0, 1, 20};
    spec.output = {LengthDist::Kind::Fixed, 5, 0, 1, 5};
    const auto requests = buildWorkload(spec, kSpace);
    RunOptions o;
    o.arrival.concurrency = 4;
    const RunResult r = runWorkload(*t, requests, o);
    ASSERT_EQ(r.records.size(), 9u);
    for (size_t i = 0; i < requests.size(); ++i) {
        if (requests[i].turn == 0) continue;
        for (size_t j = 0; j < requests.size(); ++j)
            if (requests[j].conversation == requests[i].conversation && requests[j].turn == requests[i].turn - 1) {
                EXPECT_GE(r.records[i].submittedMs, r.records[j].finishedMs) << "conversation " << requests[i].conversation;
            }
    }
}

TEST(Runner, OpenLoopIssuesAtArrivalTimes) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto t = target(model.string(), engine::Profile::regular());
    WorkloadSpec spec;
    spec.name = "poisson";
    spec.requests = 8;
    spec.input = {LengthDist::Kind::Fixed, 10, 0, 1, 10};
    spec.output = {LengthDist::Kind::Fixed, 3, 0, 1, 3};
    spec.arrival.kind = ArrivalSpec::Kind::Poisson;
    spec.arrival.rate = 100;
    const auto requests = buildWorkload(spec, kSpace);
    RunOptions o;
    o.arrival = spec.arrival;
    const RunResult r = runWorkload(*t, requests, o);
    ASSERT_EQ(r.records.size(), 8u);
    // Never early: a request is submitted no sooner than its arrival time.
    for (size_t i = 0; i < 8; ++i) EXPECT_GE(r.records[i].submittedMs + 0.5, requests[i].arrivalMs) << i;
}

TEST(Runner, CancelStopsTheRun) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    auto t = target(model.string(), fastNative());
    WorkloadSpec spec;
    spec.name = "long";
    spec.requests = 50;
    spec.input = {LengthDist::Kind::Fixed, 10, 0, 1, 10};
    spec.output = {LengthDist::Kind::Fixed, 400, 0, 1, 400};
    const auto requests = buildWorkload(spec, kSpace);
    std::atomic<bool> cancel{false};
    RunOptions o;
    o.stopAtEos = false;
    o.cancel = &cancel;
    o.onProgress = [&](const RunProgress& p) {
        if (p.done >= 2) cancel = true;
    };
    const RunResult r = runWorkload(*t, requests, o);
    EXPECT_TRUE(r.cancelled);
    EXPECT_LT(r.records.size(), 50u);
    t->waitIdle();
    EXPECT_EQ(t->stats().running, 0);
}

TEST(Comparison, BothCandidatesGetIdenticalRequestsAndGreedyTokens) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto requests = buildWorkload(smallSharedPrefix(), kSpace);
    ComparisonOptions o;
    o.run.sampling.temperature = 0;
    o.primers = prefixPrimers(requests, 64);
    for (bool interleave : {false, true}) {
        o.interleave = interleave;
        const auto results = runComparison({{"a", model.string(), fastNative(), 2},
                                            {"b", model.string(), engine::Profile::regular(), 2}},
                                           requests, o);
        ASSERT_EQ(results.size(), 2u);
        ASSERT_EQ(results[0].run.records.size(), 9u);
        ASSERT_EQ(results[1].run.records.size(), 9u);
        // Interleaving reorders by slice; match records by workload id.
        for (const auto& ra : results[0].run.records) {
            const auto rb = std::find_if(results[1].run.records.begin(), results[1].run.records.end(),
                                         [&](const RequestRecord& x) { return x.id == ra.id; });
            ASSERT_NE(rb, results[1].run.records.end());
            EXPECT_EQ(ra.tokens, rb->tokens) << "request " << ra.id << (interleave ? " interleaved" : "");
        }
        EXPECT_GT(results[0].summary.hitRate, 0.8);
        EXPECT_EQ(results[1].summary.hitRate, 0.0);
        const auto j = toJson(results[0]);
        EXPECT_EQ(j["summary"]["requests"], 9);
        EXPECT_EQ(j["requests"].size(), 9u);
    }
}

namespace {
// Records what the comparison tells a store, to check the sink protocol.
class FakeSink : public RunSink {
public:
    int64_t beginRun(const RunInfo& info) override {
        name = info.name;
        return 7;
    }
    int64_t addCandidate(int64_t runId, const CandidateInfo& info) override {
        EXPECT_EQ(runId, 7);
        shas.push_back(info.modelSha256);
        return static_cast<int64_t>(shas.size()) * 100;
    }
    void requestFinished(int64_t candidateId, const RequestRecord& r) override {
        std::lock_guard lock(mutex);
        perCandidate[candidateId]++;
        tokenTimes += static_cast<int64_t>(r.tokenTimesMs.size());
    }
    void finishCandidate(int64_t, const std::string& summary,
                         const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>& s) override {
        EXPECT_NE(summary.find("ttft_ms"), std::string::npos);
        series += static_cast<int64_t>(s.size());
    }
    void finishRun(int64_t runId, RunStatus s, const std::string&) override {
        EXPECT_EQ(runId, 7);
        status = s;
    }
    void flush() override { ++flushes; }

    std::mutex mutex;
    std::string name;
    std::vector<std::string> shas;
    std::map<int64_t, int> perCandidate;
    int64_t tokenTimes = 0, series = 0;
    int flushes = 0;
    RunStatus status = RunStatus::Running;
};
} // namespace

TEST(Comparison, WritesThroughTheSink) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto requests = buildWorkload(smallSharedPrefix(), kSpace);
    FakeSink sink;
    ComparisonOptions o;
    o.sink = &sink;
    o.runInfo.name = "sink test";
    int64_t runId = 0;
    runComparison({{"a", model.string(), fastNative(), 1}, {"b", model.string(), engine::Profile::regular(), 1}},
                  requests, o, &runId);
    EXPECT_EQ(runId, 7);
    EXPECT_EQ(sink.name, "sink test");
    ASSERT_EQ(sink.shas.size(), 2u);
    EXPECT_EQ(sink.shas[0].size(), 64u);
    EXPECT_EQ(sink.perCandidate[100], 9);
    EXPECT_EQ(sink.perCandidate[200], 9);
    EXPECT_EQ(sink.tokenTimes, 2 * 9 * 6);
    EXPECT_GT(sink.series, 0);
    EXPECT_EQ(sink.status, RunStatus::Complete);
    EXPECT_GE(sink.flushes, 1);
}

TEST(Comparison, DescribesWhatEachCandidateRuns) {
    // The precision (and the K/V type it implies), the batching and the prefix cache: what a
    // throughput comparison of the two modes depends on, said before the run starts.
    Candidate fast{.label = "a", .modelPath = "m.gguf", .profile = engine::Profile::fast(), .threads = 2};
    EXPECT_EQ(describeCandidate(fast),
              "embedded fast on cpu, 2 threads: mixed precision (K/V F16), batching off, prefix cache on");
    Candidate regular{.label = "b", .modelPath = "m.gguf", .profile = engine::Profile::regular(), .threads = 4};
    EXPECT_EQ(describeCandidate(regular), "embedded regular on cpu, 4 threads: native precision (K/V F32), "
                                          "batching dynamic (up to 8 sequences), prefix cache off");
    Candidate onGpu = fast;
    onGpu.device = {engine::Device::Kind::Cuda, 1};
    EXPECT_NE(describeCandidate(onGpu).find("on cuda:1, 2 threads: mixed precision (K/V F32)"), std::string::npos)
        << "the CUDA backend keeps K/V in F32 at every precision";
    Candidate remote{.label = "b", .remote = "remote:http://127.0.0.1:8000/v1#m"};
    EXPECT_EQ(describeCandidate(remote).rfind("remote http://127.0.0.1:8000", 0), 0u) << describeCandidate(remote);
}

TEST(Sha256, KnownDigest) {
    const auto p = std::filesystem::temp_directory_path() / "mb_sha_abc";
    std::ofstream(p) << "abc";
    EXPECT_EQ(plugins::sha256File(p.string()), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    std::filesystem::remove(p);
    EXPECT_THROW(plugins::sha256File("/no/such/file"), std::runtime_error);
}

TEST(Comparison, InterleaveSlicesKeepTheOfferedRateAndConversationsWhole) {
    WorkloadSpec open = *builtinWorkload("chat");
    open.requests = 40;
    open.arrival.kind = ArrivalSpec::Kind::Poisson;
    open.arrival.rate = 8;
    const auto requests = buildWorkload(open, kSpace);
    const double span = requests.back().arrivalMs;
    ASSERT_GT(span, 0);
    const auto parts = interleaveSlices(requests, 4);
    ASSERT_EQ(parts.size(), 4u);
    std::vector<int64_t> seen;
    double spans = 0;
    for (const auto& part : parts) {
        ASSERT_EQ(part.size(), 10u);
        // Each part starts after the gap that followed the part before it.
        const uint64_t first = part.front().index;
        EXPECT_DOUBLE_EQ(part.front().arrivalMs,
                         first == 0 ? 0.0 : requests[first].arrivalMs - requests[first - 1].arrivalMs);
        for (size_t i = 1; i < part.size(); ++i) {
            EXPECT_EQ(part[i].index, part[i - 1].index + 1); // consecutive arrivals
            // The gaps are the workload's own: the part runs at the offered rate.
            EXPECT_DOUBLE_EQ(part[i].arrivalMs - part[i - 1].arrivalMs,
                             requests[part[i].index].arrivalMs - requests[part[i - 1].index].arrivalMs);
        }
        spans += part.back().arrivalMs;
        for (const auto& r : part) seen.push_back(static_cast<int64_t>(r.index));
    }
    EXPECT_NEAR(spans, span, 1e-6); // round-robin parts each spanned nearly the whole run (4x)
    std::sort(seen.begin(), seen.end());
    for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], static_cast<int64_t>(i));

    const auto turns = buildWorkload(*builtinWorkload("multi-turn"), kSpace);
    std::map<int64_t, size_t> partOf;
    size_t total = 0;
    const auto turnParts = interleaveSlices(turns, 4);
    for (size_t p = 0; p < turnParts.size(); ++p) {
        total += turnParts[p].size();
        for (const auto& r : turnParts[p]) {
            const auto [it, fresh] = partOf.emplace(r.conversation, p);
            EXPECT_EQ(it->second, p) << "conversation " << r.conversation << " split across parts";
        }
    }
    EXPECT_EQ(total, turns.size());
}
