// The post-processing stage in runs: raw and shown output, the chain's time, both modes, failures.
#include "lab/comparison.h"
#include "lab/runner.h"
#include "plugins/fake_plugins.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <cctype>

using namespace mb;
using namespace mb::lab;
using plugins::test::FakeSpec;
using plugins::test::fakeChain;

namespace {

std::vector<WorkloadRequest> smallChat(int n) {
    WorkloadSpec spec = *builtinWorkload("chat");
    spec.requests = n;
    spec.input = {LengthDist::Kind::Fixed, 24, 0, 1, 24};
    spec.output = {LengthDist::Kind::Fixed, 12, 0, 1, 12};
    spec.warmupRequests = 0;
    return buildWorkload(spec, TokenSpace{1, 259, 512});
}

std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

} // namespace

TEST(Postprocess, TheChainRunsOnEveryMeasuredRequestInBothModes) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const plugins::Chain chain = fakeChain({FakeSpec{.hold = true}, FakeSpec{.upper = true}});
    for (engine::Profile p : {engine::Profile::fast(), engine::Profile::regular()}) {
        SCOPED_TRACE(p.name);
        EmbeddedTarget t(engine::Session::start(model.string(), p, {.threads = 2}), p.name);
        RunOptions o;
        o.arrival.concurrency = 2;
        o.sampling.temperature = 0;
        o.plugins = &chain;
        o.mode = p.name;
        size_t liveShown = 0;
        o.onEvent = [&](const RequestRecord& r, const engine::RequestEvent&) { liveShown = std::max(liveShown, r.output.size()); };
        const RunResult run = runWorkload(t, smallChat(4), o);
        ASSERT_EQ(run.records.size(), 4u);
        EXPECT_GT(liveShown, 0u);
        for (const RequestRecord& r : run.records) {
            ASSERT_EQ(r.status, RequestStatus::Ok) << r.error;
            EXPECT_TRUE(r.postprocessed);
            EXPECT_FALSE(r.text.empty());
            EXPECT_EQ(r.output, upper(r.text)); // raw kept, shown = the chain's result
            EXPECT_EQ(r.postprocessStatus, "");
            EXPECT_EQ(r.postprocessCalls, static_cast<int64_t>(r.tokenTimesMs.size()) + 1); // each token + the flush
            EXPECT_GT(r.postprocessMs, 0.0);
            ASSERT_FALSE(r.outputTimesMs.empty());
            EXPECT_GE(r.extraTtftMs(), 0.0); // held-back text is shown no earlier than its token
            EXPECT_TRUE(std::is_sorted(r.outputTimesMs.begin(), r.outputTimesMs.end()));
        }
        const RunSummary s = summarize(run.records, run.samples);
        ASSERT_TRUE(s.postprocess.has_value());
        EXPECT_EQ(s.postprocess->requests, 4);
        EXPECT_GT(s.postprocess->ms.mean, 0.0);
    }
}

TEST(Postprocess, AFailingPluginFailsThePostprocessingNotTheRequest) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    // Every story has an "e" soon enough: the plugin throws there.
    const plugins::Chain chain = fakeChain({FakeSpec{.failOn = "e"}});
    EmbeddedTarget t(engine::Session::start(model.string(), engine::Profile::regular(), {.threads = 2}), "regular");
    RunOptions o;
    o.sampling.temperature = 0;
    o.plugins = &chain;
    const RunResult run = runWorkload(t, smallChat(2), o);
    ASSERT_EQ(run.records.size(), 2u);
    for (const RequestRecord& r : run.records) {
        EXPECT_EQ(r.status, RequestStatus::Ok);
        ASSERT_NE(r.text.find('e'), std::string::npos) << r.text;
        EXPECT_EQ(r.postprocessStatus, "failed: fake: failed on e");
        EXPECT_EQ(r.output, r.text.substr(0, r.output.size())); // what was shown before it broke, nothing after
        EXPECT_LT(r.output.size(), r.text.size());
    }
    EXPECT_EQ(summarize(run.records, run.samples).postprocess->failed, 2);
}

TEST(Postprocess, AComparisonCanRunTheSameModeWithAndWithoutAChain) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Candidate a, b;
    a.label = "a";
    b.label = "b";
    a.modelPath = b.modelPath = model.string();
    a.profile = b.profile = engine::Profile::regular();
    b.plugins = std::make_shared<const plugins::Chain>(fakeChain({FakeSpec{.upper = true}}));
    ComparisonOptions o;
    o.run.sampling.temperature = 0;
    const auto results = runComparison({a, b}, smallChat(3), o);
    ASSERT_EQ(results.size(), 2u);
    EXPECT_FALSE(results[0].summary.postprocess.has_value());
    ASSERT_TRUE(results[1].summary.postprocess.has_value());
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(results[0].run.records[i].output, results[0].run.records[i].text);
        EXPECT_EQ(results[1].run.records[i].text, results[0].run.records[i].text); // the same greedy tokens
        EXPECT_EQ(results[1].run.records[i].output, upper(results[1].run.records[i].text));
    }
    const auto j = toJson(results[1]);
    EXPECT_EQ(j["plugins"]["plugins"][0]["type"], "fake");
    EXPECT_EQ(j["requests"][0]["raw_output"], results[1].run.records[0].text);
    EXPECT_TRUE(j["summary"].contains("postprocess"));
    EXPECT_NE(describeCandidate(b).find("plugins fake(upper)"), std::string::npos);
}
