// The report's executive summary first and its formulas last, in every format, and the
// migration's monitoring runs in the Migration section.
#include "lab/report.h"
#include "lab/report_render.h"
#include "lab/score_formulas.h"
#include "markup_check.h"
#include "selection_fixtures.h"

#include <gtest/gtest.h>

using namespace mb::lab;
using mb::test::Behaviour;

namespace {

const Requirements kReq = parseRequirements(nlohmann::json::parse(
    R"({"slo": {"ttft_ms": {"p95": 2000}}, "monthly": {"requests": 1000000}})"));

// A fast recommendation (latency rule) with prices, walked to H through one monitoring pass.
struct Fixture {
    std::vector<StoredRun> runs;
    ReportSelection selection;
    Report report;
};

Fixture fixture() {
    Fixture f;
    f.runs = {mb::test::syntheticRun(11,
                                     Behaviour{.ttftMs = 300, .cachedTokens = 60, .jitterMs = 40},
                                     Behaviour{.ttftMs = 900, .jitterMs = 60}, 30)};
    const auto prices = parsePriceSheet(nlohmann::json::parse(
        R"({"currency": "CNY", "per_million": {"input": 0.2, "cached_input": 0.02, "output": 0.8}, "base_fee": 5})"));
    f.selection.id = 3;
    f.selection.result = select(kReq, prices, f.runs);
    f.selection.requirements = toJson(kReq);
    f.selection.prices = toJson(prices);
    MigrationState m = startMigration(f.selection.result, kReq, mb::test::kFastProfile);
    assessContext(m, promptLengthHistogram({100, 200}));
    recordWarmup(m, WarmupResult{120, 80, 2, 4096, true, true, "reload refused"});
    enableFast(m);
    recordMonitoring(
        m, monitorFromSummary(summarize(f.runs[0].candidates[0].requests, {}), kReq, 12), kReq);
    f.selection.migration = m;
    f.report = buildReport(f.runs, f.selection, "2024-05-01T00:00:00.000Z");
    return f;
}

const ReportTable* table(const ReportSection& s, const std::string& title) {
    for (const auto& t : s.tables)
        if (t.title == title) return &t;
    return nullptr;
}

size_t at(const std::string& text, const std::string& part) {
    const size_t p = text.find(part);
    EXPECT_NE(p, std::string::npos) << part;
    return p;
}

} // namespace

TEST(ReportSummary, TheExecutiveSummaryIsTheFirstSection) {
    const Fixture f = fixture();
    const Report& r = f.report;
    ASSERT_TRUE(r.summary.has_value());
    const ExecutiveSummary expected = executiveSummary(f.selection.result);
    EXPECT_EQ(r.summary->verdictLine, expected.verdictLine);
    const ReportSection& s = r.sections.front();
    ASSERT_EQ(s.id, "summary");
    EXPECT_EQ(s.title, "Executive summary");
    ASSERT_EQ(s.paragraphs.size(), 2u);
    EXPECT_EQ(s.paragraphs[0], "Recommendation: deploy fast mode, decided by the latency rule.");
    EXPECT_EQ(s.paragraphs[1], expected.confidenceLine);
    const ReportTable* numbers = table(s, "The numbers that decided");
    ASSERT_TRUE(numbers);
    ASSERT_EQ(numbers->rows.size(), expected.numbers.size());
    EXPECT_EQ(
        numbers->rows[0],
        (std::vector<std::string>{"TTFT requirement", "2,000 ms",
                                  "< 3,000 ms, below which the latency rule requires fast mode"}));
    const ReportTable* change = table(s, "What would change the decision");
    ASSERT_TRUE(change);
    ASSERT_EQ(change->rows.size(), expected.wouldChange.size());
    EXPECT_EQ(change->rows[0][0], expected.wouldChange[0]);
    // The appendix closes the report.
    EXPECT_EQ(r.sections.back().id, "appendix");
    const ReportTable* formulas = table(r.sections.back(), "Score formulas");
    ASSERT_TRUE(formulas);
    EXPECT_EQ(formulas->rows.size(), scoreFormulas(f.selection.result).size());
    EXPECT_EQ(formulas->columns,
              (std::vector<std::string>{"term", "formula", "in this selection"}));
}

// Every format opens with the summary and ends with the formulas.
TEST(ReportSummary, EveryFormatPutsTheSummaryFirstAndTheFormulasLast) {
    const Fixture f = fixture();
    const std::string verdict = f.report.summary->verdictLine;

    const std::string md = renderMarkdown(f.report);
    EXPECT_LT(at(md, "## Executive summary"), at(md, "## Recommendation"));
    EXPECT_LT(at(md, verdict), at(md, "**The numbers that decided**"));
    EXPECT_LT(at(md, "**The numbers that decided**"), at(md, "**What would change the decision**"));
    EXPECT_LT(at(md, "## Runs (raw data)"), at(md, "## Appendix: score formulas"));
    EXPECT_NE(md.find("2·ln 100"), std::string::npos);

    const std::string html = renderHtml(f.report);
    EXPECT_EQ(mb::test::wellFormedProblem(html), "");
    EXPECT_LT(at(html, "<h2 id=\"summary\">"), at(html, "<h2 id=\"recommendation\">"));
    EXPECT_NE(html.find("<p class=\"recommendation\">" + verdict + "</p>"), std::string::npos);
    EXPECT_LT(at(html, "<h2 id=\"runs\">"), at(html, "<h2 id=\"appendix\">"));
    // The PDF's document (and the GUI's preview) is the rich-text subset of the same HTML.
    const std::string rich = renderHtml(f.report, {.inlineSvg = false, .richTextSubset = true});
    EXPECT_LT(at(rich, "Executive summary"), at(rich, "<h2 id=\"recommendation\">"));
    EXPECT_NE(rich.find("<b>" + verdict + "</b>"), std::string::npos);

    const auto j = renderJson(f.report);
    EXPECT_EQ(j["executive_summary"], toJson(*f.report.summary));
    EXPECT_EQ(j["executive_summary"]["verdict_line"], verdict);
    EXPECT_EQ(j["executive_summary"]["numbers"][0]["label"], "TTFT requirement");
    EXPECT_EQ(j["sections"][0]["id"], "summary");
    EXPECT_EQ(j["sections"].back()["id"], "appendix");
    // The summary comes before the documents it rests on.
    std::vector<std::string> keys;
    for (const auto& [k, v] : j.items()) keys.push_back(k);
    EXPECT_LT(std::find(keys.begin(), keys.end(), "executive_summary"),
              std::find(keys.begin(), keys.end(), "selection"));

    const auto rows = mb::test::readCsv(renderCsv(f.report));
    ASSERT_GT(rows.size(), 5u);
    EXPECT_EQ(rows[3], (std::vector<std::string>{"summary", "paragraphs", "0", "text", verdict}));
    bool number = false, change = false, formula = false;
    for (const auto& row : rows) {
        number = number || (row[0] == "summary" && row[1] == "The numbers that decided" &&
                            row[3] == "value" && row[4] == "2,000 ms");
        change = change || (row[0] == "summary" && row[1] == "What would change the decision");
        formula =
            formula || (row[0] == "appendix" && row[1] == "Score formulas" && row[3] == "formula");
    }
    EXPECT_TRUE(number);
    EXPECT_TRUE(change);
    EXPECT_TRUE(formula);
}

// The walk-through's warm-up and monitoring runs are in the Migration section, hence in every
// format.
TEST(ReportSummary, TheMigrationSectionHoldsTheMonitoringRuns) {
    const Fixture f = fixture();
    const ReportSection* mig = nullptr;
    for (const auto& s : f.report.sections)
        if (s.id == "migration") mig = &s;
    ASSERT_TRUE(mig);
    EXPECT_EQ(mig->paragraphs[0].rfind("Monitoring plan for fast mode: ", 0), 0u)
        << mig->paragraphs[0];
    const ReportTable* warmup = table(*mig, "Warm-up (node D)");
    ASSERT_TRUE(warmup);
    EXPECT_EQ(warmup->rows[0][4], "refused: reload refused");
    const ReportTable* monitoring = table(*mig, "Monitoring runs (node F)");
    ASSERT_TRUE(monitoring);
    ASSERT_EQ(monitoring->rows.size(), 1u);
    const auto& row = monitoring->rows[0];
    EXPECT_EQ(row[0], "1");
    EXPECT_EQ(row[1], "12");
    EXPECT_EQ(row[2], "30");
    EXPECT_NE(row[8].find("ttft_ms.p95"), std::string::npos) << row[8];
    EXPECT_NE(row[8].find("vs 2000 ms (met)"), std::string::npos) << row[8];
    EXPECT_NE(renderMarkdown(f.report).find("**Monitoring runs (node F)**"), std::string::npos);
    EXPECT_NE(renderHtml(f.report).find("<caption>Monitoring runs (node F)</caption>"),
              std::string::npos);
    EXPECT_NE(renderCsv(f.report).find("migration,Monitoring runs (node F),0,run id,12"),
              std::string::npos);
    EXPECT_EQ(renderJson(f.report)["migration"]["monitoring"].size(), 1u);

    // Before node F: said, not an empty table.
    Fixture early = fixture();
    early.selection.migration->monitoring.clear();
    const Report r = buildReport(early.runs, early.selection, "t");
    for (const auto& s : r.sections)
        if (s.id == "migration") {
            EXPECT_FALSE(table(s, "Monitoring runs (node F)"));
            bool said = false;
            for (const auto& p : s.paragraphs)
                said = said || p.rfind("No monitoring run yet", 0) == 0;
            EXPECT_TRUE(said);
        }
}
