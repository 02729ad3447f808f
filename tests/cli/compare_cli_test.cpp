// `modebench-cli compare` end to end: failures explained, options its workload would ignore refused.
#include "cli/cli_runner.h"
#include "db/run_store.h"
#include "lab/run_config.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using mb::test::expectCleanError;
using mb::test::runCli;
using mb::test::slurp;
using mb::test::TempDir;

TEST(CompareCli, ACandidateWithNoSuccessfulRequestIsExplainedAndExitsOne) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    // 609-token prompts (BOS + 600 + 8): fast truncates them to its model's 511, regular rejects them.
    const auto r = runCli({"compare", "--model", model.string(), "--groups", "2", "--per-group", "1",
                           "--prefix-tokens", "600", "--suffix-tokens", "8", "--output-tokens", "2", "--threads", "1",
                           "--no-store"});
    EXPECT_EQ(r.exitCode, 1) << r.err;
    EXPECT_NE(r.err.find("b (regular): 2 of 2 requests failed"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("2x rejected: the prompt has 609 tokens"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("no successful request"), std::string::npos) << r.err;
    // No sample, no figure: "-" rather than 0.0 ms.
    const auto row = r.out.find("TTFT p50 (ms)");
    ASSERT_NE(row, std::string::npos) << r.out;
    const std::string line = r.out.substr(row, r.out.find('\n', row) - row);
    EXPECT_NE(line.find(" -"), std::string::npos) << line;
}

TEST(CompareCli, OptionsTheWorkloadWouldIgnoreAreRefused) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    const std::string m = model.string();
    expectCleanError(runCli({"compare", "-m", m, "--requests", "8"}), "--groups x --per-group requests (now 8 x 8)");
    expectCleanError(runCli({"compare", "-m", m, "-w", "multi-turn", "--requests", "2"}), "conversations x turns");
    expectCleanError(runCli({"compare", "-m", m, "-w", "chat", "--groups", "2"}), "apply to the shared-prefix");
    expectCleanError(runCli({"compare", "-m", m, "-w", "chat", "--burstiness", "0.5"}), "give --rate too");
    const std::string prompts = (dir / "p.txt").string();
    std::ofstream(prompts) << "Once upon a time\nThe cat sat\n";
    expectCleanError(runCli({"compare", "-m", m, "--prompts", prompts, "--requests", "4"}), "each of its prompts once");
    // Bounds read as written; NaN and negative seeds are not silently replaced.
    for (const char* bad : {"nan", "0", "1e-300", "inf"}) {
        const auto r = runCli({"compare", "-m", m, "--rate", bad});
        expectCleanError(r, "is not a number in [0.001, 1e+06]");
        EXPECT_LT(r.err.size(), 200u) << r.err;
    }
    expectCleanError(runCli({"compare", "-m", m, "--seed", "-5"}), "--seed");
    // A workload too big to build is refused before any memory is taken.
    expectCleanError(runCli({"compare", "-m", m, "-w", "chat", "--requests", "1048576", "--input-tokens", "1000"}),
                     "the limit is");
}

TEST(CompareCli, ModelBWithAnotherVocabularyIsRefused) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    const std::string tiny = (dir / "tiny.gguf").string();
    ASSERT_EQ(runCli({"make-model", "--preset", "tiny", "--out", tiny}).exitCode, 0);
    expectCleanError(runCli({"compare", "-m", model.string(), "--model-b", tiny, "--no-store"}),
                     "--model-b: its vocabulary");
}

TEST(CompareCli, PromptFileRunsWithWarmupsAndJsonOnStdout) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    const std::string prompts = (dir / "p.txt").string();
    std::ofstream(prompts) << "Once upon a time\nThe cat sat\nA dog ran\n";
    const auto r = runCli({"compare", "-m", model.string(), "--prompts", prompts, "-n", "3", "--warmup", "2",
                           "--threads", "1", "--no-store", "--json", "-"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    EXPECT_NE(r.err.find("3 requests + 2 warm-up"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("TTFT p50"), std::string::npos) << r.err; // the table moved to stderr
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["a"]["requests"].size(), 3u);
    EXPECT_EQ(j["workload"]["requests"], 3);
    EXPECT_EQ(j["workload"]["warmup_requests"], 2);
    EXPECT_EQ(j["workload"]["shared_prefix"]["groups"], 0); // not the default workload's shape
}

// issue 19 item 9: a file's kind is never guessed from its content. A one-line JSONL prompt
// file parses as one JSON object, so it used to be read as a workload spec and fail on
// "workload spec: max_tokens: unknown key"; now --workload says it is not a spec and points
// at --prompts.
TEST(CompareCli, APromptFileGivenAsWorkloadIsRefusedWithAHint) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    const std::string file = (dir / "long.jsonl").string();
    std::ofstream(file) << R"({"prompt": "Once upon a time", "max_tokens": 32})" << '\n';
    const auto r = runCli({"compare", "-m", model.string(), "--workload", file, "--no-store"});
    expectCleanError(r, "--workload " + file + ": not a workload spec");
    EXPECT_NE(r.err.find("give --prompts " + file), std::string::npos) << r.err;
    // Two lines are no JSON document at all: the same one-line refusal, not a parser dump.
    std::ofstream(file, std::ios::app) << R"({"prompt": "The cat"})" << '\n';
    expectCleanError(runCli({"compare", "-m", model.string(), "--workload", file, "--no-store"}), "--prompts " + file);
    // And as --prompts it runs.
    const auto ok = runCli({"compare", "-m", model.string(), "--prompts", file, "-n", "2", "--threads", "1",
                            "--no-store"});
    EXPECT_EQ(ok.exitCode, 0) << ok.err;
    EXPECT_NE(ok.err.find("compare: 2 requests"), std::string::npos) << ok.err;
}

// The stored configuration is lab::RunConfig's: read back through the one type.
TEST(CompareCli, StoredConfigReadsBackThroughRunConfig) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    const std::string prompts = (dir / "p.txt").string(), db = (dir / "runs.db").string();
    std::ofstream(prompts) << "Once upon a time\nThe cat sat\n";
    const auto r = runCli({"compare", "-m", model.string(), "--prompts", prompts, "-n", "3", "--threads", "1",
                           "--slo-ttft-ms", "900", "--db", db});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const auto runs = mb::db::RunStore::open(db).listRuns();
    ASSERT_EQ(runs.size(), 1u);
    const auto run = mb::db::RunStore::open(db).getRun(runs[0].id);
    const mb::lab::RunConfig c = mb::lab::runConfigFromText(run.info.configJson);
    EXPECT_EQ(c.source, "cli");
    ASSERT_EQ(c.candidates.size(), 2u);
    EXPECT_EQ(c.candidates[0].model, model.string());
    EXPECT_EQ(c.candidates[1].profile, "regular");
    ASSERT_TRUE(c.sampling);
    EXPECT_EQ(c.sampling->temperature, 0.0f);
    EXPECT_EQ(c.promptFile, std::filesystem::absolute(prompts).string());
    EXPECT_EQ(c.maxTokens, 3);
    EXPECT_EQ(c.sloTtftMs, 900);
    EXPECT_FALSE(c.sloE2eMs) << run.info.configJson;
    EXPECT_EQ(mb::lab::toJson(c).dump(), nlohmann::ordered_json::parse(run.info.configJson).dump())
        << "what compare stores is exactly what the type writes";
}
