// The report model and its Qt-free renderers: sections of PRODUCT.md §8 in order, charts as
// data, well-formed self-contained HTML, Markdown, JSON and CSV.
#include "lab/report.h"
#include "lab/report_render.h"
#include "lab/run_config.h"
#include "markup_check.h"
#include "selection_fixtures.h"

#include <gtest/gtest.h>

using namespace mb::lab;
using mb::test::Behaviour;

namespace {

const std::vector<std::string> kSections = {"summary", "recommendation", "requirements", "candidates",
                                            "metrics", "plugins", "images", "charts", "trace",        "capacity", "migration",
                                            "deployment", "runs",        "appendix"};

const ReportSection& section(const Report& r, const std::string& id) {
    for (const auto& s : r.sections)
        if (s.id == id) return s;
    throw std::runtime_error("no section " + id);
}

struct Fixture {
    std::vector<StoredRun> runs;
    ReportSelection selection;
};

Fixture fixture() {
    Fixture f;
    f.runs = {mb::test::syntheticRun(11, Behaviour{.ttftMs = 300, .cachedTokens = 60, .jitterMs = 40},
                                     Behaviour{.ttftMs = 900, .jitterMs = 60}, 30)};
    const auto req = parseRequirements(nlohmann::json::parse(
        R"({"slo": {"ttft_ms": {"p95": 2000}}, "monthly": {"requests": 1000000}, "ops_capability": "low"})"));
    const auto prices = parsePriceSheet(nlohmann::json::parse(
        R"({"currency": "CNY", "per_million": {"input": 0.2, "cached_input": 0.02, "output": 0.8}, "base_fee": 5})"));
    f.selection.id = 3;
    f.selection.result = select(req, prices, f.runs);
    f.selection.requirements = toJson(req);
    f.selection.prices = toJson(prices);
    MigrationState m = startMigration(f.selection.result, req, mb::test::kFastProfile);
    assessContext(m, promptLengthHistogram({100, 200}));
    f.selection.migration = m;
    return f;
}

std::vector<std::string> sectionIds(const Report& r) {
    std::vector<std::string> ids;
    for (const auto& s : r.sections) ids.push_back(s.id);
    return ids;
}

const ReportTable* table(const Report& r, const std::string& title) {
    for (const auto& s : r.sections)
        for (const auto& t : s.tables)
            if (t.title == title) return &t;
    return nullptr;
}

} // namespace

TEST(Report, HoldsEverySectionOfTheProductInOrder) {
    const Fixture f = fixture();
    const Report r = buildReport(f.runs, f.selection, "2024-05-01T00:00:00.000Z");
    EXPECT_EQ(sectionIds(r), kSections);
    EXPECT_EQ(r.runIds, (std::vector<int64_t>{11}));
    const ReportSection& rec = section(r, "recommendation");
    EXPECT_NE(rec.paragraphs[0].find("Recommendation: fast mode, decided by the latency rule"), std::string::npos)
        << rec.paragraphs[0];
    EXPECT_NE(rec.paragraphs[1].find("Basis: no confidence figure: the latency rule decided"), std::string::npos)
        << rec.paragraphs[1];
    // Candidates with full configuration and environment.
    const ReportTable* config = table(r, "Configuration of #11 a (fast)");
    ASSERT_TRUE(config);
    bool reload = false;
    for (const auto& row : config->rows) reload = reload || (row[0] == "profile.reload" && row[1] == "after_warmup");
    EXPECT_TRUE(reload);
    const ReportTable* env = table(r, "Environment and workload of run #11");
    ASSERT_TRUE(env);
    EXPECT_EQ(env->rows[0], (std::vector<std::string>{"environment.cpu", "test cpu"}));
    // Metric tables with percentiles, measured from the requests.
    const ReportTable* ttft = table(r, "TTFT (ms)");
    ASSERT_TRUE(ttft);
    EXPECT_EQ(ttft->columns[2], "p50");
    EXPECT_EQ(ttft->columns[6], "p99.9");
    EXPECT_EQ(ttft->rows[0][0], "#11 a (fast)");
    EXPECT_EQ(ttft->rows[0][1], "30");
    EXPECT_EQ(ttft->rows[0][2], "380.0"); // 300 + (i % 5) × 40: median 380
    // Charts as data series: every chart of §8 plus cost.
    for (const char* id : {"ttft_histogram", "e2e_cdf", "ttft_over_time", "hit_rate_over_time", "throughput", "cost"}) {
        const ReportChart* c = r.chart(id);
        ASSERT_TRUE(c) << id;
        EXPECT_EQ(c->series.size(), 2u) << id;
        EXPECT_FALSE(c->series[0].points.empty()) << id;
    }
    EXPECT_EQ(r.chart("e2e_cdf")->series[0].points.back().second, 1.0);
    int histogramTotal = 0;
    for (const auto& [x, y] : r.chart("ttft_histogram")->series[0].points) histogramTotal += static_cast<int>(y);
    EXPECT_EQ(histogramTotal, 30);
    // Trace, checklist and flowchart state.
    const ReportTable* trace = table(r, "Rules, in order");
    ASSERT_TRUE(trace);
    ASSERT_EQ(trace->rows.size(), 6u); // feasibility, quality, then the four rules
    EXPECT_EQ(trace->rows[0][0], "feasibility");
    EXPECT_EQ(trace->rows[1][0], "quality");
    EXPECT_EQ(trace->rows[5][0], "operations");
    EXPECT_EQ(trace->rows[4][1], "yes");
    const ReportTable* flow = table(r, "Flowchart");
    ASSERT_TRUE(flow);
    EXPECT_EQ(flow->rows[3], (std::vector<std::string>{"D", "cache warm-up", "current", "1"}));
    EXPECT_EQ(flow->rows[7][2], "pending");
    ASSERT_TRUE(table(r, "Checklist"));
    ASSERT_TRUE(table(r, "Monthly cost projection (CNY)"));
}

TEST(Report, WithoutASelectionItSaysSo) {
    const Fixture f = fixture();
    const Report r = buildReport(f.runs, std::nullopt, "t");
    EXPECT_EQ(sectionIds(r), kSections);
    EXPECT_NE(section(r, "summary").paragraphs[0].find("No selection"), std::string::npos);
    EXPECT_NE(section(r, "recommendation").paragraphs[0].find("No selection"), std::string::npos);
    EXPECT_NE(section(r, "appendix").paragraphs[0].find("No selection"), std::string::npos);
    EXPECT_FALSE(r.summary.has_value());
    EXPECT_TRUE(renderJson(r)["executive_summary"].is_null());
    EXPECT_FALSE(r.chart("cost"));
    EXPECT_TRUE(r.chart("ttft_histogram"));
}

// The chosen candidate's launch command per server, and the knobs those servers have no option for.
TEST(Report, DeploymentListsTheRecommendedCandidatesLaunchCommands) {
    const Fixture f = fixture();
    ASSERT_EQ(f.selection.result.recommendation, Mode::Fast);
    const Report r = buildReport(f.runs, f.selection, "t");
    const ReportTable* commands = table(r, "Launch commands");
    ASSERT_TRUE(commands);
    ASSERT_EQ(commands->rows.size(), 4u);
    EXPECT_EQ(commands->rows[0][0], "vLLM");
    for (const char* o : {"vllm serve", "--enable-prefix-caching", "--max-num-seqs 1", "--max-model-len 32768"})
        EXPECT_NE(commands->rows[0][1].find(o), std::string::npos) << o << " in " << commands->rows[0][1];
    EXPECT_NE(commands->rows[2][1].find("--ctx-size 32768"), std::string::npos) << commands->rows[2][1];
    EXPECT_NE(commands->rows[3][1].find("modebench-cli serve"), std::string::npos);
    const ReportTable* left = table(r, "Knobs without an equivalent option");
    ASSERT_TRUE(left);
    bool truncation = false;
    for (const auto& row : left->rows) truncation = truncation || (row[0] == "vLLM" && row[1] == "truncation");
    EXPECT_TRUE(truncation) << "keep_tail has no vLLM option";
    EXPECT_NE(renderMarkdown(r).find("--export-deploy"), std::string::npos);

    // No recommendation: no settings, and the way to name one.
    Fixture tie = fixture();
    tie.selection.result.verdict = Verdict::NoClearWinner;
    const Report none = buildReport(tie.runs, tie.selection, "t");
    EXPECT_FALSE(table(none, "Launch commands"));
    const auto& deployment = section(none, "deployment");
    ASSERT_EQ(deployment.paragraphs.size(), 1u);
    EXPECT_NE(deployment.paragraphs[0].find("no_clear_winner"), std::string::npos) << deployment.paragraphs[0];
    EXPECT_NE(deployment.paragraphs[0].find("--deploy-candidate"), std::string::npos) << deployment.paragraphs[0];
    EXPECT_NE(section(buildReport(f.runs, std::nullopt, "t"), "deployment").paragraphs[0].find("No selection"),
              std::string::npos);
}

// Bin labels carry the decimals the bin width needs: sub-millisecond TTFTs no longer read "0-0".
TEST(Report, HistogramLabelsOfAdjacentBinsDiffer) {
    const auto subMs = mb::test::syntheticRun(5, Behaviour{.ttftMs = 0.2, .jitterMs = 0.1},
                                              Behaviour{.ttftMs = 0.4, .jitterMs = 0.05}, 30);
    const Report r = buildReport({subMs}, std::nullopt, "t");
    const ReportChart* h = r.chart("ttft_histogram");
    ASSERT_TRUE(h);
    ASSERT_EQ(h->categories.size(), 12u);
    for (size_t b = 0; b + 1 < h->categories.size(); ++b) {
        const std::string& label = h->categories[b];
        const std::string hi = label.substr(label.find('-') + 1);
        EXPECT_NE(label.substr(0, label.find('-')), hi) << label;
        EXPECT_NE(label, h->categories[b + 1]);
        EXPECT_EQ(h->categories[b + 1].rfind(hi + "-", 0), 0u) << "edges shared by neighbours: " << label << ", "
                                                               << h->categories[b + 1];
    }
    EXPECT_EQ(h->categories.front(), "0.20-0.23"); // TTFTs 0.2 to 0.6 ms: bins 1/30 ms wide
    EXPECT_EQ(h->categories.back(), "0.57-0.60");

    // Wide bins keep whole milliseconds.
    const Report wide = buildReport(fixture().runs, std::nullopt, "t");
    for (const auto& label : wide.chart("ttft_histogram")->categories)
        EXPECT_EQ(label.find('.'), std::string::npos) << label;
}

TEST(ReportRender, HtmlIsSelfContainedAndWellFormed) {
    const Fixture f = fixture();
    const std::string html = renderHtml(buildReport(f.runs, f.selection, "2024-05-01T00:00:00.000Z"));
    EXPECT_EQ(mb::test::wellFormedProblem(html), "");
    for (const auto& id : kSections) EXPECT_NE(html.find("<h2 id=\"" + id + "\">"), std::string::npos) << id;
    size_t svgs = 0;
    for (size_t p = html.find("<svg"); p != std::string::npos; p = html.find("<svg", p + 1)) ++svgs;
    EXPECT_EQ(svgs, 6u);
    EXPECT_NE(html.find("<polyline"), std::string::npos);
    EXPECT_EQ(html.find("<script"), std::string::npos);
    EXPECT_EQ(html.find("src=\""), std::string::npos) << "no external resources";
    EXPECT_EQ(html.find("<link"), std::string::npos);
    // Text is escaped: the trace's "<=" arrives as &lt;=.
    EXPECT_NE(html.find("&lt;= 2000"), std::string::npos);
    // The checker itself catches broken markup.
    EXPECT_NE(mb::test::wellFormedProblem("<p><b>x</p></b>"), "");
    EXPECT_NE(mb::test::wellFormedProblem("<p>a < b</p>"), "");
}

TEST(ReportRender, MarkdownJsonAndCsvHoldTheSections) {
    const Fixture f = fixture();
    const Report r = buildReport(f.runs, f.selection, "2024-05-01T00:00:00.000Z");
    const std::string md = renderMarkdown(r);
    for (const char* h : {"## Recommendation", "## Requirements", "## Candidates, configuration and environment",
                          "## Metrics", "## Charts", "## Decision trace", "## Migration checklist and flowchart",
                          "## Deployment", "## Runs (raw data)", "### TTFT histogram", "| rule | fired | detail |"})
        EXPECT_NE(md.find(h), std::string::npos) << h;

    const auto j = renderJson(r);
    EXPECT_EQ(j["format"], "modebench-report");
    EXPECT_EQ(j["selection"]["recommendation"], "fast");
    EXPECT_EQ(j["selection_id"], 3);
    EXPECT_EQ(j["migration"]["node"], "D");
    ASSERT_EQ(j["sections"].size(), kSections.size());
    for (size_t i = 0; i < kSections.size(); ++i) EXPECT_EQ(j["sections"][i]["id"], kSections[i]);
    EXPECT_EQ(j["charts"].size(), 6u);

    const auto rows = mb::test::readCsv(renderCsv(r));
    ASSERT_GT(rows.size(), 100u);
    EXPECT_EQ(rows[0], (std::vector<std::string>{"section", "table", "row", "column", "value"}));
    size_t chartRows = 0, traceRows = 0;
    for (const auto& row : rows) {
        EXPECT_EQ(row.size(), 5u);
        chartRows += row[0] == "chart" ? 1 : 0;
        traceRows += row[0] == "trace" && row[3] == "rule" ? 1 : 0;
    }
    EXPECT_GT(chartRows, 30u);
    EXPECT_EQ(traceRows, 6u); // feasibility, quality, then the four rules
}

TEST(ReportChart, LayoutScalesIntoTheCanvas) {
    ReportChart c{"x", "A line", "x", "y", ReportChart::Kind::Line, {}, {{"s", {{0, 0}, {10, 5}}}}};
    const ChartLayout l = layoutChart(c, 400, 200);
    ASSERT_EQ(l.polylines.size(), 1u);
    for (const auto& [x, y] : l.polylines[0].points) {
        EXPECT_GE(x, 0);
        EXPECT_LE(x, 400);
        EXPECT_GE(y, 0);
        EXPECT_LE(y, 200);
    }
    EXPECT_LT(l.polylines[0].points[1].second, l.polylines[0].points[0].second) << "larger y is higher";
    const ChartLayout empty = layoutChart(ReportChart{"e", "Empty", "", "", ReportChart::Kind::Line, {}, {}});
    EXPECT_TRUE(empty.polylines.empty());
    EXPECT_EQ(empty.texts.back().text, "no data");
}

TEST(Report, PluginsSectionShowsTheChainItsCostPerModeAndTheAudit) {
    Fixture f = fixture();
    EXPECT_NE(section(buildReport(f.runs, std::nullopt, "t"), "plugins").paragraphs[0].find("No output plugins ran"),
              std::string::npos);
    StoredRun& run = f.runs[0];
    RunConfig config = runConfigFromText(run.info.configJson);
    if (config.candidates.empty()) config.candidates = {{"a", "", "fast", std::nullopt, nullptr}, {"b", "", "regular", std::nullopt, nullptr}};
    for (auto& side : config.candidates)
        side.plugins = nlohmann::json::parse(R"({"plugins": [{"type": "word_filter", "words": ["x"]},
            {"type": "script", "path": "p.py", "sha256": "ab12", "sandbox": {"layers": [{"name": "seccomp", "holds": true},
             {"name": "landlock", "holds": false}]},
             "approval": {"approved_by": "ana", "approved_at": "2026-12-01T00:00:00Z", "verdict": "no findings",
                          "findings": {"high": 0, "medium": 1, "low": 2}}}]})");
    run.info.configJson = toJson(config).dump();
    for (auto& c : run.candidates)
        for (auto& r : c.requests) {
            r.postprocessed = true;
            r.postprocessMs = c.info.label == "a" ? 2.0 : 4.0;
            r.postprocessCalls = 4;
            r.outputTimesMs = {r.firstTokenMs + 1.5, r.firstTokenMs + 3.0};
        }
    const Report r = buildReport(f.runs, std::nullopt, "t");
    const ReportTable* chains = table(r, "Plugin chains");
    ASSERT_TRUE(chains);
    EXPECT_EQ(chains->rows[0][1], "word_filter → script(p.py)");
    const ReportTable* cost = table(r, "Post-processing cost (ms)");
    ASSERT_TRUE(cost);
    ASSERT_EQ(cost->rows.size(), 2u);
    EXPECT_EQ(cost->rows[0][2], "2.000");
    EXPECT_EQ(cost->rows[1][2], "4.000");
    EXPECT_EQ(cost->rows[0][6], "1.50"); // +TTFT
    const ReportTable* audits = table(r, "Script plugins: audit and approval");
    ASSERT_TRUE(audits);
    EXPECT_EQ(audits->rows[0][3], "ana");
    EXPECT_EQ(audits->rows[0][5], "0 / 1 / 2");
    EXPECT_EQ(audits->rows[0][7], "seccomp");
}

TEST(Report, ImagesSectionShowsEncodeTimeItsShareAndTheCacheEffect) {
    Fixture f = fixture();
    EXPECT_NE(section(buildReport(f.runs, std::nullopt, "t"), "images").paragraphs[0].find("No request"),
              std::string::npos);
    StoredRun& run = f.runs[0];
    RunConfig config = runConfigFromText(run.info.configJson);
    if (config.candidates.empty()) config.candidates = {{"a", "", "fast", std::nullopt, nullptr}, {"b", "", "regular", std::nullopt, nullptr}};
    for (auto& side : config.candidates) side.mmproj = "/models/vision-f16.gguf";
    run.info.configJson = toJson(config).dump();
    for (auto& c : run.candidates)
        for (auto& r : c.requests) {
            r.images = 1;
            r.imageTokens = 16;
            r.encodeMs = c.info.label == "a" ? 30.0 : 90.0;
        }
    const Report r = buildReport(f.runs, std::nullopt, "t");
    const ReportTable* images = table(r, "Requests with images");
    ASSERT_TRUE(images);
    ASSERT_EQ(images->rows.size(), 2u);
    EXPECT_EQ(images->rows[0][1], "vision-f16.gguf");
    EXPECT_EQ(images->rows[0][4], "16");
    EXPECT_EQ(images->rows[0][5], "30.0");
    EXPECT_EQ(images->rows[1][5], "90.0");
    // Share of TTFT: the fixture's TTFTs are around 300 and 900 ms, so both near 0.1.
    const double shareA = std::stod(images->rows[0][8]);
    EXPECT_GT(shareA, 0.05);
    EXPECT_LT(shareA, 0.2);
    EXPECT_NE(images->rows[0][9], images->rows[1][9]); // fast caches, regular does not in the fixture
}
