// `compare --sweep` end to end on stories260K: one stored run per level, then `select` sizes the
// capacity from them and the deployment's autoscaler takes the measured replicas.
#include "cli/cli_runner.h"
#include "db/run_store.h"
#include "lab/capacity.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <regex>

using mb::test::expectCleanError;
using mb::test::runCli;
using mb::test::slurp;
using mb::test::TempDir;

namespace {

// Run ids from "--run N" in the sweep's select hint.
std::vector<std::string> hintedRuns(const std::string& err) {
    std::vector<std::string> ids;
    const std::string line = err.substr(err.find("size the capacity"));
    const std::regex run("--run ([0-9]+)");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), run); it != std::sregex_iterator(); ++it)
        ids.push_back((*it)[1]);
    return ids;
}

const std::vector<std::string> kSmall = {"-w", "chat", "--requests", "6", "--input-tokens", "16", "--output-tokens", "3",
                                         "--threads", "1"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

} // namespace

TEST(SweepCli, AConcurrencySweepStoresOneRunPerLevelAndSelectSizesTheCapacity) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    const std::string db = (dir / "runs.db").string();
    const auto sweep = runCli(with({"compare", "-m", model.string(), "--db", db, "--sweep", "concurrency",
                                    "--sweep-levels", "1,2"},
                                   kSmall));
    ASSERT_EQ(sweep.exitCode, 0) << sweep.err;
    EXPECT_NE(sweep.err.find("sweep: concurrency 2 (level 2 of 2)"), std::string::npos) << sweep.err;
    EXPECT_NE(sweep.out.find("c=2"), std::string::npos) << sweep.out;
    const auto ids = hintedRuns(sweep.err);
    ASSERT_EQ(ids.size(), 2u) << sweep.err;
    {
        const auto store = mb::db::RunStore::open(db);
        for (size_t i = 0; i < ids.size(); ++i) {
            const auto run = store.getRun(std::stoll(ids[i]), mb::db::RunDetail::Summaries);
            const auto tag = mb::lab::sweepTagOf(run);
            ASSERT_TRUE(tag.has_value()) << run.info.configJson;
            EXPECT_EQ(tag->kind, mb::lab::SweepKind::Concurrency);
            EXPECT_EQ(tag->level, double(i + 1));
            EXPECT_NE(run.info.name.find("(sweep: concurrency " + std::to_string(i + 1) + ")"), std::string::npos);
            EXPECT_NE(run.info.workloadJson.find("\"concurrency\":" + std::to_string(i + 1)), std::string::npos);
        }
    }
    const auto cmp = runCli(with({"compare", "-m", model.string(), "--db", db}, kSmall));
    ASSERT_EQ(cmp.exitCode, 0) << cmp.err;
    const std::string comparison = std::to_string(std::stoll(cmp.err.substr(cmp.err.find("stored run ") + 11)));

    const std::string req = (dir / "req.json").string();
    std::ofstream(req) << R"({"slo": {"ttft_ms": {"p95": 60000}}, "monthly": {"requests": 10000000}})";
    const auto sel = runCli({"select", "--db", db, "--json", "--run", comparison, "--run", ids[0], "--run", ids[1],
                             "--requirements", req, "--export-deploy", (dir / "deploy").string(),
                             "--deploy-candidate", "fast"});
    ASSERT_EQ(sel.exitCode, 0) << sel.err;
    const auto j = nlohmann::json::parse(sel.out);
    ASSERT_EQ(j["capacity"].size(), 2u);
    EXPECT_EQ(j["capacity"][0]["mode"], "fast");
    EXPECT_EQ(j["capacity"][0]["points"].size(), 2u);
    EXPECT_TRUE(j["capacity"][0]["sized"].get<bool>()) << j["capacity"][0].dump();
    EXPECT_GE(j["capacity"][0]["replicas"].get<int>(), 1);
    EXPECT_EQ(j["scores"]["fast"]["requests"], 6); // the decision is the comparison run's alone
    const std::string hpa = slurp(dir / "deploy" / "hpa.yaml");
    EXPECT_EQ(hpa.find("NOT MEASURED"), std::string::npos) << hpa;
    EXPECT_NE(hpa.find("measured (compare --sweep concurrency, runs " + ids[0] + ", " + ids[1] + ")"),
              std::string::npos)
        << hpa;
    // The text output says the same in sentences.
    const auto text = runCli({"select", "--db", db, "--run", comparison, "--run", ids[0], "--run", ids[1],
                              "--requirements", req});
    EXPECT_NE(text.out.find("capacity (from the sweep's runs):"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("per replica C = "), std::string::npos) << text.out;
    // Only sweep runs cannot decide.
    expectCleanError(runCli({"select", "--db", db, "--run", ids[0], "--run", ids[1], "--requirements", req}),
                     "give the comparison run(s)");
}

TEST(SweepCli, ARateSweepProbesFirstThenRunsTheDerivedRates) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    const std::string db = (dir / "runs.db").string();
    const auto r = runCli(with({"compare", "-m", model.string(), "--db", db, "--sweep", "rates", "--sweep-points",
                                "2", "--no-prime"},
                               kSmall));
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("sweep: concurrency-1 probe (level 1 of 3)"), std::string::npos) << r.err;
    const auto ids = hintedRuns(r.err);
    ASSERT_EQ(ids.size(), 3u) << r.err;
    const auto store = mb::db::RunStore::open(db);
    const auto probe = mb::lab::sweepTagOf(store.getRun(std::stoll(ids[0]), mb::db::RunDetail::Summaries));
    ASSERT_TRUE(probe.has_value());
    EXPECT_TRUE(probe->probe);
    const auto first = mb::lab::sweepTagOf(store.getRun(std::stoll(ids[1]), mb::db::RunDetail::Summaries));
    const auto last = mb::lab::sweepTagOf(store.getRun(std::stoll(ids[2]), mb::db::RunDetail::Summaries));
    ASSERT_TRUE(first && last);
    EXPECT_EQ(first->kind, mb::lab::SweepKind::Rates);
    EXPECT_GT(first->level, 0);
    // 0.5× the slower candidate's probe rate to 4× the faster's: at least 8× apart (3 significant digits).
    EXPECT_GE(last->level / first->level, 7.9);
}

TEST(SweepCli, BadSweepOptionsAreOneLineErrors) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const std::string m = model.string();
    expectCleanError(runCli({"compare", "-m", m, "--no-store", "--sweep", "concurrency", "--repeat", "2"}),
                     "--sweep and --repeat");
    expectCleanError(runCli({"compare", "-m", m, "--no-store", "--sweep", "concurrency", "--concurrency", "2"}),
                     "--sweep sets the load");
    expectCleanError(runCli({"compare", "-m", m, "--no-store", "--sweep", "rates", "--rate", "2"}),
                     "--sweep sets the load");
    expectCleanError(runCli({"compare", "-m", m, "--no-store", "--sweep", "concurrency", "--sweep-levels", "2,1"}),
                     "--sweep-levels: must be strictly increasing");
    expectCleanError(runCli({"compare", "-m", m, "--no-store", "--sweep", "concurrency", "--sweep-levels", "1.5"}),
                     "whole numbers");
    expectCleanError(runCli({"compare", "-m", m, "--no-store", "--sweep", "concurrency", "--burstiness", "0.5"}),
                     "--sweep rates");
    expectCleanError(runCli({"compare", "-m", m, "--no-store", "--sweep-levels", "1,2"}), "--sweep");
    expectCleanError(runCli({"compare", "-m", m, "--no-store", "--sweep", "bursts"}), "--sweep");
}
