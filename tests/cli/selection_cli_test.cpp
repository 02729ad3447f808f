// `modebench-cli select` and `report` end to end on stored synthetic runs: each shipped
// requirements file's outcome, --save, every report format, and one-line errors (exit code 2).
#include "cli/cli_runner.h"
#include "db/run_store.h"
#include "db/sqlite_run_sink.h"
#include "lab/markup_check.h"
#include "lab/migration.h"
#include "lab/selection_fixtures.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sys/resource.h>

namespace fs = std::filesystem;
using mb::test::Behaviour;

namespace {

class SelectCli : public ::testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() / ("mb_select_" + std::to_string(::getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
        m_db = (m_dir / "runs.db").string();
    }
    void TearDown() override { fs::remove_all(m_dir); }

    // Writes a synthetic run through the store's sink; returns its id.
    int64_t storeRun(const Behaviour& fast, const Behaviour& regular, int requests = 30,
                     bool withRegular = true, const std::string& workloadJson = {}) {
        auto run = mb::test::syntheticRun(0, fast, regular, requests);
        if (!workloadJson.empty()) run.info.workloadJson = workloadJson;
        mb::db::SqliteRunSink sink(m_db);
        const int64_t id = sink.beginRun(run.info);
        for (size_t k = 0; k < (withRegular ? 2u : 1u); ++k) {
            const auto& c = run.candidates[k];
            const int64_t cid = sink.addCandidate(id, c.info);
            for (const auto& r : c.requests) sink.requestFinished(cid, r);
            sink.finishCandidate(cid, c.summaryJson, c.series);
        }
        sink.finishRun(id, mb::lab::RunStatus::Complete, "{}");
        return id;
    }

    std::string resource(const std::string& rel) const {
        return (fs::path(MODEBENCH_SOURCE_DIR) / "resources" / rel).string();
    }
    std::string file(const std::string& name, const std::string& text) const {
        const auto p = m_dir / name;
        std::ofstream(p) << text;
        return p.string();
    }

    nlohmann::json selectJson(std::vector<std::string> args) {
        args.insert(args.begin(), {"select", "--db", m_db, "--json"});
        const auto r = mb::test::runCli(args);
        EXPECT_EQ(r.exitCode, 0) << r.err;
        try {
            return nlohmann::json::parse(r.out);
        } catch (const std::exception&) {
            ADD_FAILURE() << "not JSON: " << r.out;
            return {};
        }
    }

    void expectCleanError(std::vector<std::string> args, const std::string& mentions) {
        const auto r = mb::test::runCli(args);
        EXPECT_EQ(r.exitCode, 2) << r.out << r.err;
        EXPECT_NE(r.err.find(mentions), std::string::npos) << r.err;
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }

    fs::path m_dir;
    std::string m_db;
};

} // namespace

TEST_F(SelectCli, EachShippedRequirementsFileGivesItsOutcome) {
    // Fast: 20% of prompt tokens cached, TTFT 400 ms; regular: TTFT 1500 ms, no cache.
    const int64_t run = storeRun(Behaviour{.ttftMs = 400, .cachedTokens = 20}, Behaviour{.ttftMs = 1500});
    const std::string id = std::to_string(run);

    const auto latency = selectJson({"--run", id, "--requirements", resource("requirements/latency-fast.json")});
    EXPECT_EQ(latency["recommendation"], "fast");
    EXPECT_EQ(latency["decided_by"], "latency");
    ASSERT_EQ(latency["trace"].size(), 6u);
    const char* rules[] = {"feasibility", "quality", "context", "latency", "cost", "operations"};
    for (size_t i = 0; i < 6; ++i) {
        EXPECT_EQ(latency["trace"][i]["rule"], rules[i]);
        EXPECT_TRUE(latency["trace"][i]["fired"].is_boolean());
        EXPECT_FALSE(latency["trace"][i]["detail"].get<std::string>().empty());
    }
    EXPECT_TRUE(latency["trace"][3]["fired"].get<bool>());
    // A rule that decided reports its margin, not a confidence of 1 by construction.
    EXPECT_TRUE(latency["confidence"].is_null());
    EXPECT_EQ(latency["verdict"], "recommended");
    EXPECT_NE(latency["headline"].get<std::string>().find("fast mode, decided by the latency rule: TTFT requirement "
                                                          "2,000 ms < 3,000 ms; fast TTFT p95 400 ms vs ≤ 2,000 ms"),
              std::string::npos)
        << latency["headline"];
    EXPECT_TRUE(latency["margin_within_noise"].is_boolean());
    EXPECT_TRUE(latency["scores"]["fast"]["total"].is_number());
    EXPECT_TRUE(latency["cost"].is_null()) << "no --prices";

    const auto context =
        selectJson({"--run", id, "--requirements", resource("requirements/long-context-regular.json")});
    EXPECT_EQ(context["recommendation"], "regular");
    EXPECT_EQ(context["decided_by"], "context");

    const auto cost = selectJson({"--run", id, "--requirements", resource("requirements/cost.json"), "--prices",
                                  resource("prices/example.json")});
    EXPECT_EQ(cost["recommendation"], "fast");
    EXPECT_EQ(cost["decided_by"], "cost");
    EXPECT_EQ(cost["cost"]["fast"]["currency"], "CNY");
    EXPECT_LT(cost["cost"]["fast"]["per_million_tokens"].get<double>(),
              cost["cost"]["regular"]["per_million_tokens"].get<double>());

    const auto lowOps = selectJson({"--run", id, "--requirements", resource("requirements/low-ops.json")});
    EXPECT_EQ(lowOps["recommendation"], "regular");
    EXPECT_EQ(lowOps["decided_by"], "score");
    EXPECT_TRUE(lowOps["trace"][5]["fired"].get<bool>());
}

TEST_F(SelectCli, SaveStoresTheSelection) {
    const int64_t run1 = storeRun(Behaviour{.ttftMs = 400}, Behaviour{.ttftMs = 1500});
    const int64_t run2 = storeRun(Behaviour{.ttftMs = 410}, Behaviour{.ttftMs = 1400});
    const auto j = selectJson({"--run", std::to_string(run1), "--run", std::to_string(run2), "--requirements",
                               resource("requirements/latency-fast.json"), "--save"});
    EXPECT_EQ(j["noise"]["method"], "runs");
    ASSERT_TRUE(j.contains("selection_id"));
    auto store = mb::db::RunStore::open(m_db);
    const auto sel = store.getSelection(j["selection_id"].get<int64_t>());
    EXPECT_EQ(sel.runIds, (std::vector<int64_t>{run1, run2}));
    EXPECT_EQ(nlohmann::json::parse(sel.resultJson)["recommendation"], "fast");
    EXPECT_TRUE(sel.pricesJson.empty());
    // Text output names the recommendation and every rule.
    const auto text = mb::test::runCli({"select", "--db", m_db, "--run", std::to_string(run1), "--requirements",
                                        resource("requirements/latency-fast.json")});
    EXPECT_EQ(text.exitCode, 0) << text.err;
    EXPECT_NE(text.out.find("recommendation: fast"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("warning: the selection rests on one run per candidate"), std::string::npos) << text.out;
    for (const char* rule : {"feasibility", "context", "latency", "cost", "operations"})
        EXPECT_NE(text.out.find(rule), std::string::npos) << rule;
}

TEST_F(SelectCli, BadInputIsOneLineAndExitCodeTwo) {
    const int64_t run = storeRun(Behaviour{}, Behaviour{});
    const int64_t lonely = storeRun(Behaviour{}, Behaviour{}, 5, /*withRegular=*/false);
    const std::string req = resource("requirements/latency-fast.json");
    expectCleanError({"select", "--db", m_db, "--run", std::to_string(run), "--requirements", "/nonexistent.json"},
                     "/nonexistent.json: cannot open");
    expectCleanError({"select", "--db", m_db, "--run", std::to_string(run), "--requirements",
                      file("bad.json", "{\"slo\": ")},
                     "not JSON");
    expectCleanError({"select", "--db", m_db, "--run", std::to_string(run), "--requirements",
                      file("noslo.json", "{\"weights\": {\"cost\": 1}}")},
                     "slo: required");
    expectCleanError({"select", "--db", m_db, "--run", "4242", "--requirements", req}, "no run 4242");
    expectCleanError({"select", "--db", m_db, "--run", std::to_string(lonely), "--requirements", req},
                     "needs one fast and one regular candidate");
    expectCleanError({"select", "--db", (m_dir / "missing.db").string(), "--run", "1", "--requirements", req},
                     "no database at");
    expectCleanError({"select", "--db", m_db, "--run", std::to_string(run), "--requirements", req, "--prices",
                      file("prices.json", "{\"per_million\": {\"input\": -1}}")},
                     "per_million.input");
    expectCleanError({"select", "--db", m_db, "--requirements", req}, "--run");
}

namespace {

const char* kSectionTitles[] = {"Executive summary", "Recommendation", "Requirements",
                                "Candidates, configuration and environment", "Metrics", "Output plugins", "Image input", "Charts", "Decision trace", "Capacity",
                                "Migration checklist and flowchart", "Deployment", "Runs (raw data)",
                                "Appendix: score formulas"};

} // namespace

TEST_F(SelectCli, ReportInEveryFormat) {
    const int64_t run = storeRun(Behaviour{.ttftMs = 400, .cachedTokens = 20, .jitterMs = 30},
                                 Behaviour{.ttftMs = 1500, .jitterMs = 50});
    const auto sel = selectJson({"--run", std::to_string(run), "--requirements", resource("requirements/cost.json"),
                                 "--prices", resource("prices/example.json"), "--save"});
    const int64_t selId = sel["selection_id"].get<int64_t>();
    {
        // The walk-through state saved with the selection shows in the report.
        auto store = mb::db::RunStore::open(m_db);
        const auto req = mb::lab::loadRequirements(resource("requirements/cost.json"));
        auto m = mb::lab::startMigration(mb::lab::selectionResultFromJson(sel), req, mb::test::kFastProfile);
        mb::lab::assessContext(m, mb::lab::promptLengthHistogram({120, 300}));
        store.setSelectionMigration(selId, mb::lab::toJson(m).dump());
    }
    auto report = [&](const std::string& format) {
        const std::string out = (m_dir / ("report." + format)).string();
        const auto r = mb::test::runCli({"report", "--db", m_db, "--run", std::to_string(run), "--selection",
                                         std::to_string(selId), "--format", format, "--out", out});
        EXPECT_EQ(r.exitCode, 0) << r.err;
        EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;
        return mb::test::slurp(out);
    };

    const std::string html = report("html");
    EXPECT_EQ(mb::test::wellFormedProblem(html), "");
    for (const char* t : kSectionTitles) EXPECT_NE(html.find(t), std::string::npos) << t;
    EXPECT_NE(html.find("<svg"), std::string::npos);
    EXPECT_NE(html.find("Recommendation: fast mode, decided by the cost rule"), std::string::npos);
    EXPECT_NE(html.find("cache warm-up</td><td>current"), std::string::npos) << "flowchart state";

    const std::string md = report("md");
    for (const char* t : kSectionTitles) EXPECT_NE(md.find(std::string("## ") + t), std::string::npos) << t;

    const auto j = nlohmann::json::parse(report("json"));
    EXPECT_EQ(j["selection"]["recommendation"], "fast");
    EXPECT_EQ(j["selection_id"], selId);
    EXPECT_EQ(j["run_ids"], nlohmann::json::array({run}));
    EXPECT_EQ(j["migration"]["node"], "D");
    EXPECT_EQ(j["sections"].size(), std::size(kSectionTitles));
    EXPECT_EQ(j["executive_summary"]["verdict_line"], "Recommendation: deploy fast mode, decided by the cost rule.");
    EXPECT_EQ(j["executive_summary"]["numbers"][0]["label"], "fast monthly bill");

    const auto rows = mb::test::readCsv(report("csv"));
    ASSERT_GT(rows.size(), 50u);
    EXPECT_EQ(rows[0][0], "section");
    bool costChart = false;
    for (const auto& row : rows) costChart = costChart || (row.size() == 5 && row[0] == "chart" && row[1] == "cost");
    EXPECT_TRUE(costChart);

    // PDF: pages, and text that can be extracted.
    const std::string pdf = report("pdf");
    ASSERT_GT(pdf.size(), 1000u);
    EXPECT_EQ(pdf.rfind("%PDF-", 0), 0u);
    EXPECT_NE(pdf.find("/Type /Page"), std::string::npos);
    if (std::system("command -v pdftotext >/dev/null 2>&1") != 0) {
        if (mb::test::runningInCi()) FAIL() << "pdftotext (poppler-utils) is required under CI";
        GTEST_SKIP() << "pdftotext not found (install poppler-utils, scripts/setup.sh): PDF text not checked";
    }
    const std::string text = (m_dir / "report.txt").string();
    ASSERT_EQ(std::system(("pdftotext -layout " + mb::test::shellQuote((m_dir / "report.pdf").string()) + " " +
                           mb::test::shellQuote(text))
                              .c_str()),
              0);
    const std::string extracted = mb::test::slurp(text);
    for (const char* t : {"Executive summary", "Recommendation", "Requirements", "Metrics", "Decision trace",
                          "Runs (raw data)", "Score formulas"})
        EXPECT_NE(extracted.find(t), std::string::npos) << t << " in:\n" << extracted.substr(0, 2000);
    EXPECT_LT(extracted.find("Executive summary"), extracted.find("Decision trace"));
    EXPECT_NE(extracted.find("#" + std::to_string(run)), std::string::npos);
}

TEST_F(SelectCli, ReportWithoutSelectionAndBadInput) {
    const int64_t run = storeRun(Behaviour{}, Behaviour{});
    const std::string out = (m_dir / "plain.md").string();
    const auto r = mb::test::runCli({"report", "--db", m_db, "--run", std::to_string(run), "--format", "md", "--out", out});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(mb::test::slurp(out).find("No selection was made"), std::string::npos);

    expectCleanError({"report", "--db", m_db, "--run", std::to_string(run), "--format", "docx", "--out", out},
                     "--format: expected html, pdf, md, json or csv");
    expectCleanError({"report", "--db", m_db, "--run", std::to_string(run), "--selection", "999", "--format", "html",
                      "--out", out},
                     "no selection 999");
    expectCleanError({"report", "--db", m_db, "--run", "4242", "--format", "html", "--out", out}, "no run 4242");
    expectCleanError({"report", "--db", m_db, "--run", std::to_string(run), "--format", "html", "--out",
                      "/nonexistent-dir/r.html"},
                     "cannot write /nonexistent-dir/r.html");
    const auto sel = selectJson({"--run", std::to_string(run), "--requirements",
                                 resource("requirements/latency-fast.json"), "--save"});
    const int64_t other = storeRun(Behaviour{}, Behaviour{});
    expectCleanError({"report", "--db", m_db, "--run", std::to_string(other), "--selection",
                      std::to_string(sel["selection_id"].get<int64_t>()), "--format", "html", "--out", out},
                     "was not made on run " + std::to_string(other));
}

// Runs the command under a file size limit of `bytes`, which the child inherits, with SIGXFSZ
// ignored: a write past the limit then fails (EFBIG) as on a full disk.
namespace {
mb::test::CliResult runCliWithFileSizeLimit(const std::vector<std::string>& args, rlim_t bytes) {
    rlimit old{};
    ::getrlimit(RLIMIT_FSIZE, &old);
    auto* oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit limited = old;
    limited.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &limited);
    auto r = mb::test::runCli(args);
    ::setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, oldHandler);
    return r;
}
} // namespace

// A write that fails part-way is an error, and the target keeps what it held: reports and
// exports are written beside it and renamed.
TEST_F(SelectCli, AFailedWriteIsAnErrorAndLeavesNoPartialFile) {
    std::vector<std::string> selectArgs = {"--requirements", resource("requirements/cost.json"), "--prices",
                                           resource("prices/example.json"), "--save"};
    int64_t run = 0;
    for (int i = 0; i < 3; ++i) {
        run = storeRun(Behaviour{.ttftMs = 400, .cachedTokens = 20, .jitterMs = 30},
                       Behaviour{.ttftMs = 1500, .jitterMs = 50}, 300);
        selectArgs.insert(selectArgs.end(), {"--run", std::to_string(run)});
    }
    const auto sel = selectJson(selectArgs);
    const std::string selId = std::to_string(sel["selection_id"].get<int64_t>());
    // Over what opening the store needs (its 32 KiB WAL index), under every file written below.
    constexpr rlim_t kLimit = 48 * 1024;
    std::vector<std::vector<std::string>> commands;
    for (const std::string format : {"html", "json", "csv", "pdf"})
        commands.push_back({"report", "--db", m_db, "--selection", selId, "--format", format, "--out",
                            (m_dir / ("report." + format)).string()});
    for (const std::string format : {"json", "csv"})
        commands.push_back({"runs", "export", std::to_string(run), "--format", format, "--db", m_db, "--out",
                            (m_dir / ("run." + format)).string()});
    for (const auto& args : commands) {
        const std::string out = args.back();
        // Unlimited, each output is bigger than the limit.
        const auto full = mb::test::runCli(args);
        ASSERT_EQ(full.exitCode, 0) << full.err;
        ASSERT_GT(fs::file_size(out), kLimit) << out;
        file(fs::path(out).filename().string(), "previous contents\n");
        const auto r = runCliWithFileSizeLimit(args, kLimit);
        EXPECT_EQ(r.exitCode, 2) << out << ": " << r.out << r.err;
        EXPECT_NE(r.err.find("cannot write " + out + ": File too large"), std::string::npos) << r.err;
        EXPECT_EQ(r.out.find("wrote"), std::string::npos) << r.out;
        const std::string left = mb::test::slurp(out);
        EXPECT_TRUE(left == "previous contents\n") << out << " was replaced by " << left.size() << " bytes";
    }
    for (const auto& e : fs::directory_iterator(m_dir))
        EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << "left behind: " << e.path();
}

// `runs delete` refuses a run that saved selections pooled, naming them; --force deletes them too.
TEST_F(SelectCli, RunsDeleteKeepsSavedSelectionsUnlessForced) {
    const int64_t run = storeRun(Behaviour{}, Behaviour{});
    const int64_t other = storeRun(Behaviour{}, Behaviour{});
    const auto sel = selectJson({"--run", std::to_string(run), "--run", std::to_string(other), "--requirements",
                                 resource("requirements/latency-fast.json"), "--save"});
    const std::string selId = std::to_string(sel["selection_id"].get<int64_t>());
    const auto refused = mb::test::runCli({"runs", "delete", std::to_string(other), "--db", m_db});
    EXPECT_EQ(refused.exitCode, 2) << refused.err;
    EXPECT_NE(refused.err.find("run " + std::to_string(other) + " is part of saved selection #" + selId + " ("),
              std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("runs #" + std::to_string(run) + " #" + std::to_string(other) + ", saved "),
              std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("--force"), std::string::npos) << refused.err;
    EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
    {
        auto store = mb::db::RunStore::open(m_db);
        EXPECT_TRUE(store.hasRun(other));
        EXPECT_EQ(store.listSelections().size(), 1u);
    }
    const auto forced = mb::test::runCli({"runs", "delete", std::to_string(other), "--force", "--db", m_db});
    EXPECT_EQ(forced.exitCode, 0) << forced.err;
    EXPECT_NE(forced.err.find("deleted run " + std::to_string(other) + " and saved selection #" + selId),
              std::string::npos)
        << forced.err;
    auto store = mb::db::RunStore::open(m_db);
    EXPECT_FALSE(store.hasRun(other));
    EXPECT_TRUE(store.listSelections().empty());
    // A run no selection uses goes without --force, as before.
    const auto plain = mb::test::runCli({"runs", "delete", std::to_string(run), "--db", m_db});
    EXPECT_EQ(plain.exitCode, 0) << plain.err;
    EXPECT_EQ(plain.err, "runs: deleted run " + std::to_string(run) + "\n");
}

// compare --repeat 3 stores three runs of one set-up; select reads their run-to-run variation.
TEST_F(SelectCli, CompareRepeatGivesSelectThreeRuns) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto cmp = mb::test::runCli({"compare", "--model", model.string(), "--workload", "shared-prefix",
                                       "--groups", "2", "--per-group", "2", "--prefix-tokens", "16",
                                       "--suffix-tokens", "4", "--output-tokens", "3", "--threads", "1", "--repeat",
                                       "3", "--db", m_db});
    ASSERT_EQ(cmp.exitCode, 0) << cmp.err;
    std::vector<std::string> args;
    const std::regex stored("stored run (\\d+)");
    for (auto it = std::sregex_iterator(cmp.err.begin(), cmp.err.end(), stored); it != std::sregex_iterator(); ++it)
        args.insert(args.end(), {"--run", (*it)[1].str()});
    ASSERT_EQ(args.size(), 6u) << cmp.err;
    EXPECT_NE(cmp.err.find("compare: repeat 3 of 3"), std::string::npos) << cmp.err;
    EXPECT_NE(cmp.err.find("select from all 3 repeats: modebench-cli select --db " + m_db + " " + args[0] + " " +
                           args[1]),
              std::string::npos)
        << cmp.err;
    args.insert(args.end(), {"--requirements", resource("requirements/latency-fast.json")});
    const auto sel = selectJson(args);
    EXPECT_EQ(sel["noise"]["method"], "runs");
    EXPECT_EQ(sel["run_ids"].size(), 3u);
    for (const auto& w : sel["warnings"]) EXPECT_EQ(w.get<std::string>().find("one run"), std::string::npos) << w;
    EXPECT_EQ(sel["scores"]["fast"]["spread"].back()["runs"], 3);
    EXPECT_EQ(sel["scores"]["fast"]["spread"].back()["key"], "requests_per_s");
}

// The whole path on a real model: compare stores a run, select decides, report writes HTML.
TEST_F(SelectCli, CompareSelectReportOnARealModel) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto cmp = mb::test::runCli({"compare", "--model", model.string(), "--workload", "shared-prefix",
                                       "--groups", "2", "--per-group", "3", "--prefix-tokens", "32",
                                       "--suffix-tokens", "8", "--output-tokens", "4", "--threads", "2", "--db", m_db});
    ASSERT_EQ(cmp.exitCode, 0) << cmp.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(cmp.err, m, std::regex("stored run (\\d+)"))) << cmp.err;
    const std::string run = m[1];
    const auto sel = selectJson({"--run", run, "--requirements", resource("requirements/latency-fast.json"),
                                 "--prices", resource("prices/example.json"), "--save"});
    // On a real run any verdict is possible; a recommendation names a mode, the others none.
    EXPECT_TRUE(sel["verdict"] == "recommended" ? sel["recommendation"] == "fast" || sel["recommendation"] == "regular"
                                                : sel["recommendation"].is_null())
        << sel["headline"];
    EXPECT_EQ(sel["trace"].size(), 6u);
    EXPECT_GT(sel["scores"]["fast"]["hit_rate"].get<double>(), 0.0) << "the shared prefixes hit the fast cache";
    EXPECT_EQ(sel["scores"]["regular"]["hit_rate"].get<double>(), 0.0);
    // The flowchart, walked for real from the command line: A, D (a refused model update),
    // E, F (a stored monitoring run), G, then H or the I -> F loop; the state is saved.
    const std::string selection = std::to_string(sel["selection_id"].get<int64_t>());
    const std::string prompts = (m_dir / "prompts.jsonl").string();
    std::ofstream(prompts) << "{\"prompt\": \"Once upon a time\"}\n{\"prompt\": \"The little dog\"}\n";
    const auto walk = mb::test::runCli({"migrate", "--db", m_db, "--selection", selection, "--prompts", prompts,
                                        "--threads", "2", "--json"});
    ASSERT_EQ(walk.exitCode, 0) << walk.err;
    const auto state = nlohmann::json::parse(walk.out);
    EXPECT_TRUE(state["node"] == "H" || state["node"] == "C") << walk.out;
    EXPECT_TRUE(state["warmup"]["reload_refused"].get<bool>()) << walk.out;
    EXPECT_GE(state["monitoring"].size(), 1u);
    const auto path = state["path"].dump();
    for (const char* n : {"\"A\"", "\"B\"", "\"D\"", "\"E\"", "\"F\"", "\"G\""}) EXPECT_NE(path.find(n), std::string::npos) << path;
    const auto bad = mb::test::runCli({"migrate", "--db", m_db, "--selection", "999"});
    EXPECT_EQ(bad.exitCode, 2);
    EXPECT_NE(bad.err.find("999"), std::string::npos) << bad.err;

    const std::string out = (m_dir / "real.html").string();
    const auto rep = mb::test::runCli({"report", "--db", m_db, "--selection", selection, "--format", "html", "--out", out});
    ASSERT_EQ(rep.exitCode, 0) << rep.err;
    const std::string html = mb::test::slurp(out);
    EXPECT_EQ(mb::test::wellFormedProblem(html), "");
    EXPECT_NE(html.find("stories260K.gguf"), std::string::npos);
}

// A repeat is another run: the same id twice is an error, and repeats of different
// workloads are allowed but warned about on stderr.
TEST_F(SelectCli, SameRunTwiceIsAnErrorAndDifferentWorkloadsWarn) {
    const int64_t run1 = storeRun(Behaviour{.ttftMs = 400}, Behaviour{.ttftMs = 1500});
    const int64_t run2 = storeRun(Behaviour{.ttftMs = 410}, Behaviour{.ttftMs = 1400});
    const int64_t other = storeRun(Behaviour{.ttftMs = 410}, Behaviour{.ttftMs = 1400}, 30, true,
                                   R"({"name":"chat","seed":3})");
    const std::string req = resource("requirements/latency-fast.json");
    expectCleanError({"select", "--db", m_db, "--run", std::to_string(run1), "--run", std::to_string(run1),
                      "--requirements", req},
                     "--run " + std::to_string(run1) + " is given more than once");
    const auto same = mb::test::runCli({"select", "--db", m_db, "--run", std::to_string(run1), "--run",
                                        std::to_string(run2), "--requirements", req});
    EXPECT_EQ(same.exitCode, 0) << same.err;
    EXPECT_EQ(same.err.find("warning"), std::string::npos) << same.err;
    const auto mixed = mb::test::runCli({"select", "--db", m_db, "--run", std::to_string(run1), "--run",
                                         std::to_string(other), "--requirements", req});
    EXPECT_EQ(mixed.exitCode, 0) << mixed.err;
    EXPECT_NE(mixed.err.find("select: warning: run " + std::to_string(other) + " has a different workload from run " +
                             std::to_string(run1)),
              std::string::npos)
        << mixed.err;
}

// A prompt-file run, selected and migrated for real: D primes the run's prompts, F replays
// them (not compare's default synthetic spec), the client-streaming question can be
// answered, and a relative inputs.prompt_file still reads after select --save.
TEST_F(SelectCli, MigrateReplaysAPromptFileRun) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const std::string prompts = file("prompts.txt", "Once upon a time\nThe little dog\nA girl named Lily\n");
    const auto cmp = mb::test::runCli({"compare", "--model", model.string(), "--prompts", prompts, "-n", "4",
                                       "--threads", "1", "--db", m_db});
    ASSERT_EQ(cmp.exitCode, 0) << cmp.err;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(cmp.err, m, std::regex("stored run (\\d+)"))) << cmp.err;
    const std::string run = m[1];
    const auto sel = selectJson({"--run", run, "--requirements", resource("requirements/latency-fast.json"), "--save"});
    const std::string selection = std::to_string(sel["selection_id"].get<int64_t>());

    const auto walk = mb::test::runCli({"migrate", "--db", m_db, "--selection", selection, "--threads", "1"});
    ASSERT_EQ(walk.exitCode, 0) << walk.err;
    EXPECT_NE(walk.out.find("client streams NOT ANSWERED (give --client-streams yes|no)"), std::string::npos)
        << walk.out;
    EXPECT_NE(walk.err.find("replaying the prompt file " + prompts + " (3 prompts)"), std::string::npos) << walk.err;
    const auto answered = mb::test::runCli(
        {"migrate", "--db", m_db, "--selection", selection, "--client-streams", "yes", "--json"});
    ASSERT_EQ(answered.exitCode, 0) << answered.err;
    const auto state = nlohmann::json::parse(answered.out);
    EXPECT_EQ(state["checklist"]["client_streams"], true);
    EXPECT_EQ(state["warmup"]["primed_prompts"], 3) << "D primes the run's own prompts";
    ASSERT_GE(state["monitoring"].size(), 1u);
    auto store = mb::db::RunStore::open(m_db);
    const auto monitoring = store.getRun(state["monitoring"][0]["run_id"].get<int64_t>(), mb::db::RunDetail::Full);
    EXPECT_EQ(nlohmann::json::parse(monitoring.info.workloadJson)["name"], "file:" + prompts);
    ASSERT_EQ(monitoring.candidates.size(), 1u);
    EXPECT_EQ(monitoring.candidates[0].requests.size(), 3u) << "the run's 3 prompts, not 64 synthetic ones";
    for (const auto& r : monitoring.candidates[0].requests) EXPECT_EQ(r.truncatedTokens, 0);
    EXPECT_EQ(nlohmann::json::parse(store.getSelection(std::stoll(selection)).migrationJson)["checklist"]
                                     ["client_streams"],
              true)
        << "the answer is saved with the walk-through";

    // Requirements beside their prompt file, named relatively: migrate runs elsewhere.
    fs::create_directories(m_dir / "reqdir");
    std::ofstream(m_dir / "reqdir" / "only_here.txt") << "a b c\n";
    std::ofstream(m_dir / "reqdir" / "req.json")
        << R"({"slo": {"ttft_ms": {"p95": 10000}}, "inputs": {"prompt_file": "only_here.txt"}})";
    const auto rel = selectJson({"--run", run, "--requirements", (m_dir / "reqdir" / "req.json").string(), "--save"});
    const auto relWalk = mb::test::runCli({"migrate", "--db", m_db, "--selection",
                                           std::to_string(rel["selection_id"].get<int64_t>()), "--json"});
    ASSERT_EQ(relWalk.exitCode, 0) << relWalk.err;
    EXPECT_EQ(nlohmann::json::parse(relWalk.out)["histogram"]["count"], 1) << "A read reqdir/only_here.txt";
}
