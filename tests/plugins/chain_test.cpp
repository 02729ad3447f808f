// The chain: order, held-back text flushed at the end, a plugin ending the response, failures.
#include "fake_plugins.h"

#include <gtest/gtest.h>

namespace mb::plugins {
namespace {

using test::FakeSpec;
using test::fakeChain;

std::string runAll(ChainRun& run, const std::vector<std::string>& chunks, std::vector<std::string>* seen = nullptr) {
    std::string out;
    for (const std::string& c : chunks) {
        Emit e = run.text(c);
        if (seen) seen->push_back(e.text);
        out += e.text;
    }
    out += run.finish().text;
    return out;
}

TEST(Chain, AppliesPluginsInOrderAndFlushesHeldText) {
    const Chain chain = fakeChain({FakeSpec{.hold = true}, FakeSpec{.upper = true}});
    ChainRun run(chain, RequestInfo{});
    std::vector<std::string> seen;
    EXPECT_EQ(runAll(run, {"he", "llo wor", "ld"}, &seen), "HELLO WORLD");
    EXPECT_EQ(seen, (std::vector<std::string>{"", "HELLO ", ""})); // "wor" and "ld" held until the end
    EXPECT_FALSE(run.failed());
    EXPECT_FALSE(run.ended());
    EXPECT_EQ(run.calls(), 4); // three chunks and the finish
    EXPECT_GE(run.totalMs(), 0.0);
    EXPECT_GE(run.totalMs(), run.maxCallMs());
}

TEST(Chain, APluginEndingTheResponseStopsTheRestAndKeepsWhatItLetThrough) {
    const Chain chain = fakeChain({FakeSpec{.endOn = "STOP"}, FakeSpec{.upper = true, .hold = true}});
    ChainRun run(chain, RequestInfo{});
    Emit a = run.text("one two ");
    EXPECT_EQ(a.text, "ONE TWO ");
    Emit b = run.text("three STOP four");
    EXPECT_TRUE(b.end);
    EXPECT_EQ(b.text, "THREE "); // the next plugin's held text is flushed before the end
    EXPECT_EQ(b.reason, "saw STOP");
    EXPECT_TRUE(run.ended());
    EXPECT_EQ(run.endReason(), "saw STOP");
    EXPECT_EQ(run.text("more").text, "");
    EXPECT_EQ(run.finish().text, "");
}

TEST(Chain, AFailingPluginStopsTheOutputAndSaysWhy) {
    const Chain chain = fakeChain({FakeSpec{.failOn = "bad"}});
    ChainRun run(chain, RequestInfo{});
    EXPECT_EQ(run.text("good ").text, "good ");
    EXPECT_EQ(run.text("bad").text, "");
    EXPECT_TRUE(run.failed());
    EXPECT_EQ(run.failure(), "fake: failed on bad");
    EXPECT_EQ(run.text(" after").text, "");
    EXPECT_EQ(run.finish().text, "");
}

TEST(Chain, AnEmptyChainPassesTextThrough) {
    const Chain chain;
    EXPECT_TRUE(chain.empty());
    EXPECT_EQ(chain.describe(), "none");
    ChainRun run(chain, RequestInfo{});
    EXPECT_EQ(runAll(run, {"a", "b"}), "ab");
}

TEST(Chain, RecordsEachEntry) {
    const Chain chain = fakeChain({FakeSpec{.upper = true}, FakeSpec{.hold = true}});
    const nlohmann::json r = chain.record();
    ASSERT_EQ(r["plugins"].size(), 2u);
    EXPECT_EQ(r["plugins"][0]["upper"], true);
    EXPECT_EQ(chain.describe(), "fake(upper) → fake(hold)");
}

} // namespace
} // namespace mb::plugins
