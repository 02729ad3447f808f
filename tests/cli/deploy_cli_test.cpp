// `modebench-cli select --export-deploy DIR` on stored synthetic runs: the files and their options,
// --deploy-candidate, and the refusals (no recommendation, a file in the way), each one line,
// exit 2.
#include "cli/cli_runner.h"
#include "db/sqlite_run_sink.h"
#include "lab/selection_fixtures.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using mb::test::Behaviour;

namespace {

const char* kFiles[] = {"vllm.sh",      "sglang.sh", "llama-server.sh", "modebench-serve.sh",
                        "profile.json", "hpa.yaml",  "README.md"};

class DeployCli : public ::testing::Test {
protected:
    void SetUp() override {
        m_db = (m_dir / "runs.db").string();
        // Fast: TTFT 400 ms, regular 1500 ms; the latency rule then picks fast.
        auto run = mb::test::syntheticRun(0, Behaviour{.ttftMs = 400, .cachedTokens = 20},
                                          Behaviour{.ttftMs = 1500}, 30);
        mb::db::SqliteRunSink sink(m_db);
        m_run = std::to_string(sink.beginRun(run.info));
        for (const auto& c : run.candidates) {
            const int64_t cid = sink.addCandidate(std::stoll(m_run), c.info);
            for (const auto& r : c.requests) sink.requestFinished(cid, r);
            sink.finishCandidate(cid, c.summaryJson, c.series);
        }
        sink.finishRun(std::stoll(m_run), mb::lab::RunStatus::Complete, "{}");
    }

    mb::test::CliResult select(const std::string& requirements, std::vector<std::string> more) {
        std::vector<std::string> args = {"select", "--db",           m_db,        "--run",
                                         m_run,    "--requirements", requirements};
        args.insert(args.end(), more.begin(), more.end());
        return mb::test::runCli(args);
    }
    std::string latencyFast() const {
        return (fs::path(MODEBENCH_SOURCE_DIR) / "resources" / "requirements" / "latency-fast.json")
            .string();
    }
    // Both candidates miss a 10 ms TTFT bound: none feasible, no recommendation.
    std::string impossible() const {
        const std::string p = (m_dir / "impossible.json").string();
        std::ofstream(p) << R"({"slo": {"ttft_ms": {"p95": 10}}})";
        return p;
    }

    mb::test::TempDir m_dir;
    std::string m_db, m_run;
};

} // namespace

TEST_F(DeployCli, WritesTheRecommendedCandidatesLaunchSettings) {
    const fs::path dir = m_dir / "deploy" / "fast"; // missing: created
    const auto r = select(latencyFast(), {"--export-deploy", dir.string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.out.find("recommendation: fast"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("deployment of the fast candidate (recommended):"), std::string::npos)
        << r.out;
    for (const char* name : kFiles) {
        EXPECT_TRUE(fs::is_regular_file(dir / name)) << name;
        EXPECT_NE(r.out.find("wrote " + (dir / name).string() + "\n"), std::string::npos)
            << name << " in " << r.out;
    }
    const std::string vllm = mb::test::slurp(dir / "vllm.sh");
    for (const char* o : {"vllm serve \"$MODEL\"", "--enable-prefix-caching", "--max-num-seqs 1",
                          "--max-model-len 32768"})
        EXPECT_NE(vllm.find(o), std::string::npos) << o << " in\n" << vllm;
    EXPECT_NE(vllm.find("MODEL=${MODEL:-/models/synthetic.gguf}"), std::string::npos)
        << "the run's model";
    const std::string sglang = mb::test::slurp(dir / "sglang.sh");
    EXPECT_NE(sglang.find("--max-running-requests 1"), std::string::npos) << sglang;
    EXPECT_EQ(sglang.find("--disable-radix-cache"), std::string::npos) << sglang;
    const std::string llama = mb::test::slurp(dir / "llama-server.sh");
    for (const char* o : {"-np 1", "--ctx-size 32768", "--cache-reuse 16"})
        EXPECT_NE(llama.find(o), std::string::npos) << o << " in\n" << llama;
    EXPECT_NE(mb::test::slurp(dir / "modebench-serve.sh").find("modebench-cli serve"),
              std::string::npos);
    const auto profile = nlohmann::json::parse(mb::test::slurp(dir / "profile.json"));
    EXPECT_EQ(profile["base"], "fast");
    EXPECT_EQ(profile["prefix_cache"], true);
    const std::string hpa = mb::test::slurp(dir / "hpa.yaml");
    EXPECT_NE(hpa.find("kind: HorizontalPodAutoscaler"), std::string::npos);
    EXPECT_NE(hpa.find("NOT MEASURED"), std::string::npos)
        << "select has no capacity sweep to read";
    EXPECT_NE(hpa.find("averageValue: \"2\""), std::string::npos)
        << "latency-fast.json's TTFT p95 bound, 2 s";
    EXPECT_NE(mb::test::slurp(dir / "README.md").find("recommended by the selection"),
              std::string::npos);
    EXPECT_NE(fs::status(dir / "vllm.sh").permissions() & fs::perms::owner_exec, fs::perms::none);

    // --json names the files; a second export replaces them.
    const auto j = select(latencyFast(), {"--export-deploy", dir.string(), "--json"});
    ASSERT_EQ(j.exitCode, 0) << j.err;
    const auto doc = nlohmann::json::parse(j.out);
    EXPECT_EQ(doc["deployment"]["candidate"], "fast");
    EXPECT_EQ(doc["deployment"]["recommended"], true);
    EXPECT_EQ(doc["deployment"]["files"].size(), 7u);
    EXPECT_EQ(doc["deployment"]["files"][0], (dir / "vllm.sh").string());
}

TEST_F(DeployCli, NoRecommendationExportsNothingUnlessACandidateIsNamed) {
    const fs::path dir = m_dir / "none";
    const auto refused = select(impossible(), {"--export-deploy", dir.string()});
    mb::test::expectCleanError(refused, "none_feasible");
    EXPECT_NE(refused.err.find("--deploy-candidate fast|regular"), std::string::npos)
        << refused.err;
    EXPECT_TRUE(refused.out.empty()) << refused.out;
    EXPECT_FALSE(fs::exists(dir)) << "nothing exported";

    const auto named =
        select(impossible(), {"--export-deploy", dir.string(), "--deploy-candidate", "regular"});
    ASSERT_EQ(named.exitCode, 0) << named.err;
    EXPECT_NE(
        named.out.find("deployment of the regular candidate (named with --deploy-candidate):"),
        std::string::npos)
        << named.out;
    const std::string vllm = mb::test::slurp(dir / "vllm.sh");
    for (const char* o :
         {"--no-enable-prefix-caching", "--max-num-seqs 8", "--max-num-batched-tokens 2048"})
        EXPECT_NE(vllm.find(o), std::string::npos) << o << " in\n" << vllm;
    EXPECT_NE(mb::test::slurp(dir / "README.md")
                  .find("named by the user (the selection's verdict: none_feasible)"),
              std::string::npos);
}

TEST_F(DeployCli, BadDirectoriesAndOptionsAreOneLineErrors) {
    const fs::path plain = m_dir / "plain";
    std::ofstream(plain) << "not a directory";
    mb::test::expectCleanError(select(latencyFast(), {"--export-deploy", plain.string()}),
                               plain.string() + " exists and is not a directory");
    mb::test::expectCleanError(select(latencyFast(), {"--deploy-candidate", "fast"}),
                               "--export-deploy");
    mb::test::expectCleanError(select(latencyFast(), {"--export-deploy", (m_dir / "x").string(),
                                                      "--deploy-candidate", "turbo"}),
                               "--deploy-candidate");
    EXPECT_FALSE(fs::exists(m_dir / "x"));
    const auto help = mb::test::runCli({"select", "--help"});
    EXPECT_EQ(help.exitCode, 0);
    for (const char* s : {"--export-deploy", "--deploy-candidate", "hpa.yaml", "no_clear_winner"})
        EXPECT_NE(help.out.find(s), std::string::npos) << s;
}
