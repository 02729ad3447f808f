// Chart points (shared histogram bins, CDFs, throughput buckets) and the event coalescer.
#include "gui/chart_data.h"
#include "gui/event_coalescer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

namespace mb::gui {
namespace {

lab::RequestRecord ok(double ttft, std::vector<double> tokenTimes) {
    lab::RequestRecord r;
    r.submittedMs = 0;
    r.firstTokenMs = ttft;
    r.tokenTimesMs = std::move(tokenTimes);
    r.finishedMs = r.tokenTimesMs.back();
    r.outputTokens = static_cast<int64_t>(r.tokenTimesMs.size());
    return r;
}

TEST(ChartData, HistogramBinsAreSharedAndCountOnlyOkRequests) {
    std::map<std::string, ChartInput> in;
    in["a"].records = {ok(10, {10, 20}), ok(20, {20, 25})};
    in["b"].records = {ok(100, {100, 150})};
    lab::RequestRecord failed = ok(50, {50});
    failed.status = lab::RequestStatus::Error;
    in["b"].records.push_back(failed);
    const auto p = chartPoints(in, 10);
    // Step outlines: two points per bin, over 0..100 ms (the largest TTFT of either side).
    ASSERT_EQ(p.at("a").ttftHistogram.size(), 20);
    EXPECT_DOUBLE_EQ(p.at("a").ttftHistogram.back().x(), 100.0);
    EXPECT_DOUBLE_EQ(p.at("b").ttftHistogram.back().x(), 100.0);
    double countA = 0, countB = 0;
    for (int i = 0; i < 20; i += 2) {
        countA += p.at("a").ttftHistogram[i].y();
        countB += p.at("b").ttftHistogram[i].y();
    }
    EXPECT_EQ(countA, 2);
    EXPECT_EQ(countB, 1); // the failed request is not counted
    EXPECT_EQ(p.at("b").ttftOverTime.size(), 1);
}

TEST(ChartData, CdfsEndAtOneAndThroughputUsesShortBucketsForShortRuns) {
    std::map<std::string, ChartInput> in;
    in["a"].records = {ok(10, {10, 20, 40}), ok(5, {5, 6})};
    const auto p = chartPoints(in);
    ASSERT_FALSE(p.at("a").e2eCdf.isEmpty());
    EXPECT_DOUBLE_EQ(p.at("a").e2eCdf.back().y(), 1.0);
    EXPECT_DOUBLE_EQ(p.at("a").e2eCdf.back().x(), 40.0);
    EXPECT_DOUBLE_EQ(p.at("a").itlCdf.front().x(), 1.0); // gaps 10, 20, 1
    EXPECT_DOUBLE_EQ(p.at("a").itlCdf.back().x(), 20.0);
    // A 40 ms run: 50 ms buckets, so all 5 tokens land in bucket 0 = 100 tokens/s.
    ASSERT_EQ(p.at("a").throughput.size(), 1);
    EXPECT_DOUBLE_EQ(p.at("a").throughput[0].y(), 100.0);
}

// A long live run is redrawn every 200 ms on the UI thread: the points (and the values
// sorted) stay bounded however many requests and tokens there are, and keep the extremes.
TEST(ChartData, PointsStayBoundedForLongRunsAndKeepTheExtremes) {
    std::map<std::string, ChartInput> in;
    auto& records = in["a"].records;
    const int requests = 5000, tokens = 40; // 195,000 gaps: more than kMaxCdfSamples
    for (int i = 0; i < requests; ++i) {
        const double start = i * 2.0, ttft = 5 + (i % 97) + (i == 1234 ? 5000 : 0); // one spike
        std::vector<double> times;
        double t = start + ttft;
        for (int k = 0; k < tokens; ++k) {
            times.push_back(t);
            t += 1 + (i * 7 + k) % 5 + (i == 77 && k == 9 ? 900 : 0); // gaps of 1-5 ms, one of 900+
        }
        records.push_back(ok(start + ttft, std::move(times)));
        records.back().submittedMs = start;
    }
    const auto p = chartPoints(in, 30, 256);
    const auto& a = p.at("a");
    EXPECT_LT(a.ttftOverTime.size(), requests); // thinned
    EXPECT_LE(a.ttftOverTime.size(), 2 * kMaxScatterBins);
    EXPECT_LE(a.itlCdf.size(), 258);
    double spike = 0;
    for (const QPointF& q : a.ttftOverTime) spike = std::max(spike, q.y());
    EXPECT_DOUBLE_EQ(spike, 5000 + 5 + 1234 % 97); // the spike survives the thinning
    EXPECT_DOUBLE_EQ(a.itlCdf.back().y(), 1.0);
    EXPECT_GE(a.itlCdf.back().x(), 900.0); // the longest gap is the CDF's end
    EXPECT_DOUBLE_EQ(a.itlCdf.front().x(), 1.0);
    for (int i = 1; i < a.ttftOverTime.size(); ++i) EXPECT_LE(a.ttftOverTime[i - 1].x(), a.ttftOverTime[i].x());
}

TEST(ChartData, SamplesBecomeHitRateAndMiB) {
    ChartInput in;
    lab::StatsSample none, some;
    none.timeMs = 0;
    some.timeMs = 500;
    some.prefixQueries = 4;
    some.prefixHits = 3;
    some.kvBytesInUse = 1024 * 1024;
    appendSamples(in, {none, some});
    ASSERT_EQ(in.hitRate.size(), 1u); // no queries yet: no hit rate point
    EXPECT_DOUBLE_EQ(in.hitRate[0].x(), 0.5);
    EXPECT_DOUBLE_EQ(in.hitRate[0].y(), 0.75);
    ASSERT_EQ(in.kvMiB.size(), 2u);
    EXPECT_DOUBLE_EQ(in.kvMiB[1].y(), 1.0);
}

TEST(EventCoalescer, BatchesByTimeAndDeliversOutcomesAfterTheirTokens) {
    std::vector<CoalescedBatch> got;
    EventCoalescer c([&](CoalescedBatch&& b) { got.push_back(std::move(b)); }, std::chrono::hours(1));
    c.addToken("a", {1, QStringLiteral("x"), 1});
    c.addToken("a", {2, QStringLiteral("y"), 2});
    EXPECT_TRUE(got.size() <= 1u); // the very first add may go at once (no delivery yet)
    const size_t before = got.size();
    c.addToken("a", {3, QStringLiteral("z"), 3});
    EXPECT_EQ(got.size(), before); // inside the interval: held back
    c.addOutcome("a", RequestOutcome{});
    ASSERT_EQ(got.size(), before + 1); // an outcome forces delivery
    const CoalescedBatch& last = got.back();
    EXPECT_FALSE(last.tokens.at("a").isEmpty());
    EXPECT_EQ(last.tokens.at("a").back().id, 3);
    EXPECT_EQ(last.outcomes.size(), 1u);
    c.flush();
    EXPECT_EQ(got.size(), before + 1); // nothing pending: nothing delivered
}

TEST(EventCoalescer, ManyThreadsLoseNothing) {
    std::mutex m;
    size_t tokens = 0;
    EventCoalescer c([&](CoalescedBatch&& b) {
        std::lock_guard g(m);
        for (const auto& [label, list] : b.tokens) tokens += static_cast<size_t>(list.size());
    });
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 5000; ++i) c.addToken(t % 2 ? "a" : "b", {i, {}, 0});
        });
    for (auto& t : threads) t.join();
    c.flush();
    EXPECT_EQ(tokens, 20000u);
}

} // namespace
} // namespace mb::gui
