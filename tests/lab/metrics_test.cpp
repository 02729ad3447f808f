// Metric formulas on hand-made timestamps: distributions, summary, SLOs, series, repeats.
#include "lab/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

using namespace mb::lab;

namespace {

// Two Ok requests, an error and a rejection; every expected value below is worked by hand.
// A: submit 0, scheduled 10, tokens 100 150 250 300, finish 300 -> queue 10, ttft 100,
//    e2e 300, tpot (300-100)/3, gaps 50 100 50.
// B: submit 900, scheduled 920, tokens 1100 1500 1900, finish 2000 -> queue 20, ttft 200,
//    e2e 1100, tpot (1100-200)/2 = 450, gaps 400 400.
// C: error at 1800 after a huge queue; D: rejected. Duration 0 .. 2000 ms = 2 s.
std::vector<RequestRecord> handMadeRecords() {
    RequestRecord a;
    a.id = 0;
    a.promptTokens = 20;
    a.cachedTokens = 5;
    a.outputTokens = 4;
    a.submittedMs = 0;
    a.scheduledMs = 10;
    a.firstTokenMs = 100;
    a.tokenTimesMs = {100, 150, 250, 300};
    a.finishedMs = 300;
    a.kvBytesPeak = 1000;

    RequestRecord b;
    b.id = 1;
    b.promptTokens = 30;
    b.cachedTokens = 10;
    b.outputTokens = 3;
    b.truncatedTokens = 7;
    b.submittedMs = 900;
    b.scheduledMs = 920;
    b.firstTokenMs = 1100;
    b.tokenTimesMs = {1100, 1500, 1900};
    b.finishedMs = 2000;
    b.kvBytesPeak = 600;

    RequestRecord c;
    c.id = 2;
    c.status = RequestStatus::Error;
    c.error = "backend failed";
    c.promptTokens = 40;
    c.submittedMs = 200;
    c.scheduledMs = 1700; // a 1500 ms queue that must not reach queue_ms
    c.finishedMs = 1800;

    RequestRecord d;
    d.id = 3;
    d.status = RequestStatus::Rejected;
    d.error = "queue full";
    d.promptTokens = 50;
    d.cachedTokens = 50; // ignored: a rejected request never reached the cache
    d.submittedMs = 300;
    return {a, b, c, d};
}

std::vector<StatsSample> handMadeSamples() {
    // time, queries, hits, kvBytesInUse, running, waiting
    return {{0, 0, 0, 100, 0, 2},
            {500, 20, 5, 300, 1, 1},
            {1200, 50, 15, 200, 1, 3},
            {1900, 90, 45, 50, 1, 0}};
}

} // namespace

TEST(RequestRecord, DerivedMetrics) {
    const auto r = handMadeRecords();
    EXPECT_DOUBLE_EQ(r[0].queueMs(), 10);
    EXPECT_DOUBLE_EQ(r[0].ttftMs(), 100);
    EXPECT_DOUBLE_EQ(r[0].e2eMs(), 300);
    EXPECT_DOUBLE_EQ(r[0].tpotMs(), 200.0 / 3.0);
    EXPECT_DOUBLE_EQ(r[1].tpotMs(), 450);
    // Undefined metrics are -1: no first token, no schedule, or fewer than 2 tokens.
    EXPECT_EQ(r[2].ttftMs(), -1);
    EXPECT_EQ(r[2].tpotMs(), -1);
    EXPECT_EQ(r[3].queueMs(), -1);
    EXPECT_EQ(r[3].e2eMs(), -1);
    EXPECT_DOUBLE_EQ(r[0].prefillMs(), 90);  // first token - scheduled
    EXPECT_DOUBLE_EQ(r[1].prefillMs(), 180);
    EXPECT_EQ(r[2].prefillMs(), -1); // scheduled, no first token
    RequestRecord one = r[0];
    one.outputTokens = 1;
    EXPECT_EQ(one.tpotMs(), -1);
    EXPECT_STREQ(requestStatusName(RequestStatus::Ok), "ok");
    EXPECT_STREQ(requestStatusName(RequestStatus::Error), "error");
    EXPECT_STREQ(requestStatusName(RequestStatus::Cancelled), "cancelled");
    EXPECT_STREQ(requestStatusName(RequestStatus::Rejected), "rejected");
}

TEST(Describe, OneToTenMatchesNumpyLinear) {
    const Distribution d = describe({10, 3, 1, 7, 2, 9, 4, 8, 6, 5});
    EXPECT_EQ(d.count, 10);
    EXPECT_DOUBLE_EQ(d.mean, 5.5);
    EXPECT_NEAR(d.std, std::sqrt(55.0 / 6.0), 1e-12); // numpy std(ddof=1) = 3.0276503...
    EXPECT_DOUBLE_EQ(d.min, 1);
    EXPECT_DOUBLE_EQ(d.max, 10);
    EXPECT_NEAR(d.p50, 5.5, 1e-12);
    EXPECT_NEAR(d.p90, 9.1, 1e-12);
    EXPECT_NEAR(d.p95, 9.55, 1e-12);
    EXPECT_NEAR(d.p99, 9.91, 1e-12);
    EXPECT_NEAR(d.p999, 9.991, 1e-12);
}

TEST(Describe, SmallAndEmptySamples) {
    // numpy.percentile([15, 20, 35, 40, 50], [50, 90]) = [35, 46].
    const Distribution d = describe({15, 20, 35, 40, 50});
    EXPECT_NEAR(d.p50, 35, 1e-12);
    EXPECT_NEAR(d.p90, 46, 1e-12);

    const Distribution one = describe({4.5});
    EXPECT_EQ(one.count, 1);
    EXPECT_EQ(one.std, 0);
    EXPECT_EQ(one.p999, 4.5);
    EXPECT_EQ(one.min, 4.5);

    const Distribution none = describe({});
    EXPECT_EQ(none.count, 0);
    EXPECT_EQ(none.mean, 0);
    EXPECT_EQ(none.p99, 0);
    EXPECT_EQ(none.max, 0);
}

TEST(Summarize, CountsRatesAndOkOnlyLatency) {
    const RunSummary s = summarize(handMadeRecords(), {});
    EXPECT_EQ(s.requests, 4);
    EXPECT_EQ(s.ok, 2);
    EXPECT_EQ(s.errors, 1);
    EXPECT_EQ(s.cancelled, 0);
    EXPECT_EQ(s.rejected, 1);
    EXPECT_EQ(s.truncated, 1);
    EXPECT_DOUBLE_EQ(s.durationS, 2.0);
    EXPECT_DOUBLE_EQ(s.requestsPerS, 1.0);
    EXPECT_DOUBLE_EQ(s.outputTokensPerS, 7.0 / 2.0);
    EXPECT_DOUBLE_EQ(s.totalTokensPerS, (20 + 30 + 4 + 3) / 2.0);

    EXPECT_EQ(s.ttftMs.count, 2);
    EXPECT_DOUBLE_EQ(s.ttftMs.mean, 150);
    EXPECT_DOUBLE_EQ(s.ttftMs.p90, 190);
    EXPECT_DOUBLE_EQ(s.queueMs.max, 20); // the error's 1500 ms queue is excluded
    EXPECT_DOUBLE_EQ(s.queueMs.mean, 15);
    EXPECT_EQ(s.prefillMs.count, 2);
    EXPECT_DOUBLE_EQ(s.prefillMs.mean, 135);
    EXPECT_DOUBLE_EQ(s.e2eMs.min, 300);
    EXPECT_DOUBLE_EQ(s.e2eMs.max, 1100);
    EXPECT_EQ(s.tpotMs.count, 2);
    EXPECT_DOUBLE_EQ(s.tpotMs.min, 200.0 / 3.0);
    EXPECT_DOUBLE_EQ(s.tpotMs.max, 450);

    // ITL pools every gap of both Ok requests: 50 100 50 400 400.
    EXPECT_EQ(s.itlMs.count, 5);
    EXPECT_DOUBLE_EQ(s.itlMs.mean, 200);
    EXPECT_DOUBLE_EQ(s.itlMs.p50, 100);
    EXPECT_DOUBLE_EQ(s.itlMs.min, 50);
    EXPECT_DOUBLE_EQ(s.itlMs.max, 400);

    EXPECT_DOUBLE_EQ(s.promptTokens.mean, 25);
    EXPECT_DOUBLE_EQ(s.outputTokens.mean, 3.5);
    EXPECT_EQ(s.kvBytesPeak, 1000u);
}

TEST(Summarize, HitRateWithoutSamplesSumsRecords) {
    const RunSummary s = summarize(handMadeRecords(), {});
    // A, B and C reached the cache: 20 + 30 + 40 queried, 5 + 10 + 0 hit.
    EXPECT_EQ(s.prefixQueries, 90u);
    EXPECT_EQ(s.prefixHits, 15u);
    EXPECT_DOUBLE_EQ(s.hitRate, 15.0 / 90.0);
    EXPECT_EQ(summarize({}, {}).hitRate, 0.0);
}

TEST(Summarize, HitRateFromLastMonotonicSample) {
    const RunSummary s = summarize(handMadeRecords(), handMadeSamples());
    EXPECT_EQ(s.prefixQueries, 90u);
    EXPECT_EQ(s.prefixHits, 45u);
    EXPECT_DOUBLE_EQ(s.hitRate, 0.5);
    EXPECT_EQ(s.kvBytesPeak, 1000u); // the record's peak beats every sample

    auto samples = handMadeSamples();
    samples[2].kvBytesInUse = 5000;
    EXPECT_EQ(summarize(handMadeRecords(), samples).kvBytesPeak, 5000u);
}

TEST(Summarize, GoodputAgainstSlos) {
    const auto records = handMadeRecords();
    // No SLO: every Ok request counts.
    RunSummary s = summarize(records, {});
    EXPECT_DOUBLE_EQ(s.goodputPerS, 1.0);
    EXPECT_DOUBLE_EQ(s.sloAttainment, 0.5);

    Slo ttft;
    ttft.ttftMs = 150; // A (100) meets it, B (200) does not
    s = summarize(records, {}, ttft);
    EXPECT_DOUBLE_EQ(s.goodputPerS, 0.5);
    EXPECT_DOUBLE_EQ(s.sloAttainment, 0.25);

    Slo tpot;
    tpot.tpotMs = 100; // A 66.7 meets, B 450 does not
    EXPECT_DOUBLE_EQ(summarize(records, {}, tpot).sloAttainment, 0.25);

    Slo all;
    all.ttftMs = 1000;
    all.e2eMs = 1100; // bounds are inclusive
    all.tpotMs = 450;
    s = summarize(records, {}, all);
    EXPECT_DOUBLE_EQ(s.goodputPerS, 1.0);
    EXPECT_DOUBLE_EQ(s.sloAttainment, 0.5);

    all.e2eMs = 1099;
    EXPECT_DOUBLE_EQ(summarize(records, {}, all).sloAttainment, 0.25);

    // A one-token reply has no TPOT, so a TPOT bound cannot fail it.
    RequestRecord single = records[0];
    single.outputTokens = 1;
    single.tokenTimesMs = {100};
    EXPECT_TRUE(tpot.metBy(single));
    single.status = RequestStatus::Cancelled;
    EXPECT_FALSE(tpot.metBy(single));
}

TEST(Summarize, OneSecondSeries) {
    const RunSummary s = summarize(handMadeRecords(), handMadeSamples());
    // Tokens: A's four in second 0; B's 1100, 1500, 1900 in second 1. Second 2 has none but
    // is listed (as 0) because B finished at 2000 ms.
    ASSERT_EQ(s.series.throughput.size(), 3u);
    EXPECT_EQ(s.series.throughput[0].second, 0);
    EXPECT_EQ(s.series.throughput[0].value, 4);
    EXPECT_EQ(s.series.throughput[1].value, 3);
    EXPECT_EQ(s.series.throughput[2].second, 2);
    EXPECT_EQ(s.series.throughput[2].value, 0);

    ASSERT_EQ(s.series.ttftMs.size(), 2u);
    EXPECT_EQ(s.series.ttftMs[0].second, 0);
    EXPECT_EQ(s.series.ttftMs[0].value, 100);
    EXPECT_EQ(s.series.ttftMs[1].second, 1);
    EXPECT_EQ(s.series.ttftMs[1].value, 200);

    // Cumulative hit rate at the last sample of each second: 5/20, then 45/90.
    ASSERT_EQ(s.series.hitRate.size(), 2u);
    EXPECT_DOUBLE_EQ(s.series.hitRate[0].value, 0.25);
    EXPECT_DOUBLE_EQ(s.series.hitRate[1].value, 0.5);
    ASSERT_EQ(s.series.kvBytes.size(), 2u);
    EXPECT_EQ(s.series.kvBytes[0].value, 300);
    EXPECT_EQ(s.series.kvBytes[1].value, 200);
    ASSERT_EQ(s.series.queueDepth.size(), 2u);
    EXPECT_EQ(s.series.queueDepth[0].value, 2);
    EXPECT_EQ(s.series.queueDepth[1].value, 3);
}

TEST(Summarize, TtftSeriesAveragesWithinBucket) {
    auto records = handMadeRecords();
    records[1].submittedMs = 600;
    records[1].firstTokenMs = 900; // ttft 300, second 0 with A's 100
    const RunSummary s = summarize(records, {});
    ASSERT_EQ(s.series.ttftMs.size(), 1u);
    EXPECT_DOUBLE_EQ(s.series.ttftMs[0].value, 200);
}

TEST(Summarize, EmptyRun) {
    const RunSummary s = summarize({}, {});
    EXPECT_EQ(s.requests, 0);
    EXPECT_EQ(s.durationS, 0);
    EXPECT_EQ(s.requestsPerS, 0);
    EXPECT_EQ(s.goodputPerS, 0);
    EXPECT_TRUE(s.series.throughput.empty());
}

TEST(Repeated, StudentTInterval) {
    // mean 12, s = 2, t(2) = 4.303: half-width 4.303 * 2 / sqrt(3).
    const RepeatedMetric m = repeated({10, 12, 14});
    const double half = 4.303 * 2.0 / std::sqrt(3.0);
    EXPECT_DOUBLE_EQ(m.mean, 12);
    EXPECT_NEAR(m.ci95Low, 12 - half, 1e-9);
    EXPECT_NEAR(m.ci95High, 12 + half, 1e-9);
    EXPECT_NEAR(m.cv, 2.0 / 12.0, 1e-12);
    EXPECT_TRUE(m.highVariance);

    const RepeatedMetric steady = repeated({100, 101, 99, 100});
    EXPECT_NEAR(steady.ci95High - steady.mean, 3.182 * std::sqrt(2.0 / 3.0) / 2.0, 1e-9);
    EXPECT_FALSE(steady.highVariance);

    const RepeatedMetric one = repeated({5});
    EXPECT_EQ(one.ci95Low, 5);
    EXPECT_EQ(one.ci95High, 5);
    EXPECT_FALSE(one.highVariance);
    EXPECT_EQ(repeated({}).mean, 0);
    EXPECT_TRUE(std::isinf(repeated({-1, 1}).cv));
}

TEST(Repeated, StudentTTable) {
    EXPECT_DOUBLE_EQ(studentT95(1), 12.706);
    EXPECT_DOUBLE_EQ(studentT95(30), 2.042);
    EXPECT_NEAR(studentT95(60), 2.000, 1e-9);
    EXPECT_NEAR(studentT95(1000000), 1.960, 1e-3);
    for (int64_t df = 1; df < 500; ++df) EXPECT_GE(studentT95(df), studentT95(df + 1)) << df;
}

TEST(MetricsJson, SummaryKeysAndSeriesPairs) {
    const auto j = toJson(summarize(handMadeRecords(), handMadeSamples()));
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items()) keys.push_back(k);
    const std::vector<std::string> expected = {"requests",
                                               "ok",
                                               "errors",
                                               "cancelled",
                                               "rejected",
                                               "truncated",
                                               "duration_s",
                                               "requests_per_s",
                                               "output_tokens_per_s",
                                               "total_tokens_per_s",
                                               "ttft_ms",
                                               "tpot_ms",
                                               "itl_ms",
                                               "e2e_ms",
                                               "queue_ms",
                                               "prefill_ms",
                                               "prompt_tokens",
                                               "output_tokens",
                                               "prefix_cache",
                                               "kv_bytes_peak",
                                               "goodput_per_s",
                                               "slo_attainment",
                                               "series"};
    EXPECT_EQ(keys, expected);
    EXPECT_EQ(j["prefix_cache"]["hits"], 45);
    EXPECT_EQ(j["prefix_cache"]["hit_rate"], 0.5);
    EXPECT_EQ(j["ttft_ms"]["p90"], 190.0);
    EXPECT_EQ(j["ttft_ms"].begin().key(), "p50");
    EXPECT_EQ(j["ttft_ms"]["count"], 2);
    EXPECT_EQ(j["series"]["throughput"][1], nlohmann::json::parse("[1.0, 3.0]"));
    EXPECT_EQ(j["series"]["queue_depth"].size(), 2u);
    EXPECT_TRUE(j["series"].contains("kv_bytes"));
    EXPECT_TRUE(j["series"].contains("hit_rate"));
    EXPECT_TRUE(j["series"].contains("ttft_ms"));
}

TEST(MetricsJson, RequestRecord) {
    const auto records = handMadeRecords();
    const auto a = toJson(records[0]);
    EXPECT_EQ(a["status"], "ok");
    EXPECT_EQ(a["ttft_ms"], 100.0);
    EXPECT_EQ(a["kv_bytes_peak"], 1000);
    EXPECT_FALSE(a.contains("token_times_ms"));
    EXPECT_EQ(toJson(records[0], true)["token_times_ms"].size(), 4u);
    const auto d = toJson(records[3]);
    EXPECT_EQ(d["status"], "rejected");
    EXPECT_EQ(d["error"], "queue full");
    EXPECT_TRUE(d["ttft_ms"].is_null());
    EXPECT_TRUE(d["e2e_ms"].is_null());
    std::vector<std::string> keys;
    for (const auto& [k, v] : a.items()) keys.push_back(k);
    const std::vector<std::string> expected = {"id",
                                               "status",
                                               "error",
                                               "prompt_tokens",
                                               "cached_tokens",
                                               "truncated_tokens",
                                               "output_tokens",
                                               "submitted_ms",
                                               "scheduled_ms",
                                               "first_token_ms",
                                               "finished_ms",
                                               "queue_ms",
                                               "prefill_ms",
                                               "ttft_ms",
                                               "tpot_ms",
                                               "e2e_ms",
                                               "kv_bytes_peak",
                                               "tokens",
                                               "text",
                                               "raw_output",
                                               "output",
                                               "postprocess_ms"};
    EXPECT_EQ(keys, expected);
}

TEST(MetricsJson, PostprocessedRecordKeepsRawAndShownOutputAndTheChainsCost) {
    RequestRecord r;
    r.status = RequestStatus::Ok;
    r.submittedMs = 0;
    r.firstTokenMs = 10;
    r.finishedMs = 30;
    r.outputTokens = 3;
    r.tokenTimesMs = {10, 20, 30};
    r.text = "a bad word";
    r.postprocessed = true;
    r.output = "a *** word";
    r.postprocessStatus = "";
    r.postprocessMs = 0.75;
    r.postprocessMaxCallMs = 0.5;
    r.postprocessStartMs = 0.25;
    r.postprocessCalls = 4;
    r.outputTimesMs = {12.5, 31};
    EXPECT_DOUBLE_EQ(r.extraTtftMs(), 2.5);
    const auto j = toJson(r, true);
    EXPECT_EQ(j["raw_output"], "a bad word");
    EXPECT_EQ(j["output"], "a *** word");
    EXPECT_DOUBLE_EQ(j["postprocess_ms"].get<double>(), 0.75);
    EXPECT_EQ(j["postprocess"]["status"], "ok");
    EXPECT_EQ(j["postprocess"]["calls"], 4);
    EXPECT_DOUBLE_EQ(j["postprocess"]["extra_ttft_ms"].get<double>(), 2.5);
    EXPECT_EQ(j["postprocess"]["output_times_ms"].size(), 2u);

    // The run's summary: per-request cost, added TTFT and the shown stream's gaps.
    RequestRecord plain = r;
    plain.postprocessed = false;
    RequestRecord ended = r;
    ended.postprocessStatus = "ended: refused: matched a filtered word";
    const RunSummary s = summarize({r, ended, plain}, {});
    ASSERT_TRUE(s.postprocess.has_value());
    EXPECT_EQ(s.postprocess->requests, 2);
    EXPECT_EQ(s.postprocess->ended, 1);
    EXPECT_EQ(s.postprocess->failed, 0);
    EXPECT_DOUBLE_EQ(s.postprocess->ms.p50, 0.75);
    EXPECT_DOUBLE_EQ(s.postprocess->callMs.p50, 0.125);
    EXPECT_DOUBLE_EQ(s.postprocess->startMs.p50, 0.25);
    EXPECT_DOUBLE_EQ(s.postprocess->extraTtftMs.p50, 2.5);
    EXPECT_DOUBLE_EQ(s.postprocess->outputItlMs.p50, 18.5);
    EXPECT_FALSE(summarize({plain}, {}).postprocess.has_value());
}
