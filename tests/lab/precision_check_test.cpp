// Precision A/B beside the latency figures: prompt selection, the check on stories260K, the
// summary JSON round trip, comparisons that carry it into the store's summary and reports.
#include "engine/quantize_model.h"
#include "lab/comparison.h"
#include "lab/precision_check.h"
#include "lab/report.h"
#include "selection_fixtures.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <unistd.h>

using namespace mb;
using namespace mb::lab;

namespace {

WorkloadRequest req(std::vector<int32_t> prompt, bool warmup = false) {
    WorkloadRequest r;
    r.prompt = std::move(prompt);
    r.maxTokens = 4;
    r.warmup = warmup;
    return r;
}

std::vector<std::vector<int32_t>> fewPrompts() {
    return {{1, 300, 301, 302, 303}, {1, 400, 410, 420}, {1, 270, 280, 290, 300, 310, 320}};
}

// Records whatever the comparison stores (summaries only).
struct SummarySink : RunSink {
    std::vector<std::string> summaries;
    int64_t beginRun(const RunInfo&) override { return 1; }
    int64_t addCandidate(int64_t, const CandidateInfo&) override { return static_cast<int64_t>(++candidates); }
    void requestFinished(int64_t, const RequestRecord&) override {}
    void finishCandidate(int64_t, const std::string& summaryJson,
                         const std::vector<std::pair<std::string, std::vector<std::pair<double, double>>>>&) override {
        summaries.push_back(summaryJson);
    }
    void finishRun(int64_t, RunStatus, const std::string&) override {}
    void flush() override {}
    size_t candidates = 0;
};

} // namespace

TEST(PrecisionPrompts, TakesTheFirstMeasuredPromptsCutToFit) {
    const std::vector<WorkloadRequest> rs = {req({1, 2, 3}, true), req({1, 5, 6, 7, 8, 9}), req({1, 7}), req({1, 8})};
    const auto p = precisionPrompts(rs, 2, 4, 8, 100);
    ASSERT_EQ(p.size(), 2u);
    EXPECT_EQ(p[0], (std::vector<int32_t>{1, 5, 6, 7})); // the warm-up is skipped, the head kept
    EXPECT_EQ(p[1], (std::vector<int32_t>{1, 7}));
    // The context leaves room for the generated tokens: 10 - 8 = 2 prompt tokens.
    EXPECT_EQ(precisionPrompts(rs, 1, 256, 8, 10)[0], (std::vector<int32_t>{1, 5}));
    EXPECT_THROW(precisionPrompts(rs, 1, 256, 10, 10), std::invalid_argument);
}

TEST(PrecisionCheckJson, RoundTripsThroughASummary) {
    PrecisionCheck p;
    p.precision = "q4_0";
    p.prompts = 3, p.genTokens = 8, p.positions = 24;
    p.agreement = 0.875, p.meanKl = 0.0125, p.referencePerplexity = 5.5, p.candidatePerplexity = 5.75, p.seconds = 1.5;
    RunSummary s;
    s.precision = p;
    const auto back = precisionCheckFromSummaryText(toJson(s).dump());
    ASSERT_TRUE(back);
    EXPECT_EQ(back->precision, "q4_0");
    EXPECT_EQ(back->positions, 24);
    EXPECT_DOUBLE_EQ(back->agreement, 0.875);
    EXPECT_DOUBLE_EQ(back->meanKl, 0.0125);
    EXPECT_DOUBLE_EQ(back->candidatePerplexity, 5.75);
    // No check, malformed JSON or a malformed object: nothing, never an exception.
    EXPECT_FALSE(precisionCheckFromSummaryText(toJson(RunSummary{}).dump()));
    EXPECT_FALSE(precisionCheckFromSummaryText("{not json"));
    EXPECT_FALSE(precisionCheckFromSummaryText(R"({"precision": {"agreement": "high"}})"));
}

TEST(PrecisionCheck, Q4AgainstF32DiffersAndF32AgainstItselfDoesNot) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    PrecisionCheckOptions o;
    o.genTokens = 6;
    int64_t lastDone = -1, calls = 0;
    o.onProgress = [&](const std::string& label, int64_t done, int64_t total) {
        EXPECT_EQ(label, "a");
        EXPECT_EQ(total, 3);
        EXPECT_GE(done, lastDone);
        lastDone = done;
        ++calls;
    };
    const auto q4 = checkPrecision(model.string(), engine::Precision::Q4_0, fewPrompts(), 2, o, "a");
    ASSERT_TRUE(q4);
    EXPECT_EQ(q4->precision, "q4_0");
    EXPECT_EQ(q4->prompts, 3);
    EXPECT_EQ(q4->positions, 3 * 6);
    EXPECT_GT(q4->meanKl, 0.0);
    EXPECT_GE(q4->agreement, 0.0);
    EXPECT_LE(q4->agreement, 1.0);
    EXPECT_NE(q4->candidatePerplexity, q4->referencePerplexity);
    EXPECT_EQ(lastDone, 3);
    EXPECT_EQ(calls, 4); // 0/3 then after each prompt

    const auto same = checkPrecision(model.string(), engine::Precision::F32, fewPrompts(), 2, {.genTokens = 6}, "b");
    ASSERT_TRUE(same);
    EXPECT_DOUBLE_EQ(same->agreement, 1.0);
    EXPECT_NEAR(same->meanKl, 0.0, 1e-12);
    EXPECT_DOUBLE_EQ(same->candidatePerplexity, same->referencePerplexity);
    EXPECT_DOUBLE_EQ(same->referencePerplexity, q4->referencePerplexity); // one reference
}

TEST(PrecisionCheck, AQuantisedFileMatchesQuantisingAtLoad) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto out = std::filesystem::temp_directory_path() / ("mb_precision_q4_" + std::to_string(::getpid()) + ".gguf");
    engine::quantizeModel(model.string(), out.string(), engine::QuantizeTarget::Q4_0, {});
    PrecisionSubjects files{model.string(), engine::Precision::F32, out.string(), engine::Precision::Native};
    const auto fromFile = checkPrecision(files, fewPrompts(), 2, {.genTokens = 5}, "a");
    const auto atLoad = checkPrecision(model.string(), engine::Precision::Q4_0, fewPrompts(), 2, {.genTokens = 5}, "a");
    std::filesystem::remove(out);
    ASSERT_TRUE(fromFile);
    ASSERT_TRUE(atLoad);
    EXPECT_EQ(fromFile->reference, model.string() + " (f32)");
    EXPECT_EQ(fromFile->precision, "native");
    EXPECT_GT(fromFile->meanKl, 0.0);
    EXPECT_NEAR(fromFile->meanKl, atLoad->meanKl, 1e-9);
    EXPECT_DOUBLE_EQ(fromFile->agreement, atLoad->agreement);
    // A candidate with another vocabulary is refused with the loader's or the check's message.
    PrecisionSubjects bad{model.string(), engine::Precision::F32, "/nonexistent/model.gguf", engine::Precision::Native};
    EXPECT_ANY_THROW(checkPrecision(bad, fewPrompts(), 1, {.genTokens = 2}, "a"));
}

TEST(PrecisionCheck, CancelStopsAfterThePromptInProgress) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    std::atomic<bool> cancel{false};
    PrecisionCheckOptions o;
    o.genTokens = 4;
    o.cancel = &cancel;
    o.onProgress = [&](const std::string&, int64_t done, int64_t) {
        if (done == 1) cancel = true;
    };
    const auto r = checkPrecision(model.string(), engine::Precision::Int8, fewPrompts(), 1, o, "a");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->prompts, 1);
    EXPECT_EQ(r->positions, 4);
    EXPECT_FALSE(checkPrecision(model.string(), engine::Precision::Int8, fewPrompts(), 1, o, "a")); // already set
}

TEST(PrecisionCheck, AComparisonStoresItInEachCandidatesSummary) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    std::vector<Candidate> cs(2);
    cs[0].label = "a", cs[1].label = "b";
    for (auto& c : cs) c.modelPath = model.string(), c.threads = 2;
    cs[0].profile = engine::Profile::fast(); // mixed
    cs[1].profile = engine::Profile::regular();
    cs[1].profile.precision = engine::Precision::Q4_0;
    std::vector<WorkloadRequest> requests;
    for (const auto& p : fewPrompts()) requests.push_back(req(p));
    for (size_t i = 0; i < requests.size(); ++i) requests[i].index = i;
    ComparisonOptions o;
    o.run.sampling.temperature = 0;
    o.precision.prompts = 2;
    o.precision.genTokens = 4;
    SummarySink sink;
    o.sink = &sink;
    const auto results = runComparison(cs, requests, o);
    ASSERT_EQ(results.size(), 2u);
    ASSERT_TRUE(results[0].summary.precision);
    ASSERT_TRUE(results[1].summary.precision);
    EXPECT_EQ(results[0].summary.precision->precision, "mixed");
    EXPECT_EQ(results[1].summary.precision->precision, "q4_0");
    EXPECT_EQ(results[1].summary.precision->prompts, 2);
    ASSERT_EQ(sink.summaries.size(), 2u);
    const auto stored = precisionCheckFromSummaryText(sink.summaries[1]);
    ASSERT_TRUE(stored);
    EXPECT_DOUBLE_EQ(stored->meanKl, results[1].summary.precision->meanKl);

    // The report shows the stored figures beside the latency tables.
    StoredRun run = test::syntheticRun(5, {}, {}, 4);
    run.candidates[0].summaryJson = sink.summaries[0];
    run.candidates[1].summaryJson = sink.summaries[1];
    const Report rep = buildReport({run}, std::nullopt, "2026-11-30T00:00:00.000Z");
    const ReportTable* t = nullptr;
    for (const auto& s : rep.sections)
        for (const auto& x : s.tables)
            if (x.title.rfind("Precision A/B", 0) == 0) {
                t = &x;
                EXPECT_EQ(s.id, "metrics");
            }
    ASSERT_NE(t, nullptr);
    ASSERT_EQ(t->rows.size(), 2u);
    EXPECT_EQ(t->rows[0][1], "mixed");
    EXPECT_EQ(t->rows[1][1], "q4_0");
}

TEST(PrecisionCheck, ACancelledComparisonSkipsIt) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Candidate c;
    c.label = "a", c.modelPath = model.string(), c.profile = engine::Profile::regular();
    std::atomic<bool> cancel{true};
    ComparisonOptions o;
    o.run.cancel = &cancel;
    o.precision.prompts = 2;
    const auto results = runComparison({c}, {req(fewPrompts()[0])}, o);
    ASSERT_EQ(results.size(), 1u);
    EXPECT_FALSE(results[0].summary.precision);
}
