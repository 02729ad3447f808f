// modebench-cli plugins and compare --plugins: audit, approval by hash, re-approval on change, records and cost.
#include "cli_runner.h"
#include "db/run_store.h"
#include "lab/run_config.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace {

using mb::test::runCli;
using Json = nlohmann::json;
namespace fs = std::filesystem;

const fs::path kSample = fs::path(MODEBENCH_SOURCE_DIR) / "docs" / "plugins" / "title_case.py";

// Writes a chain with one script entry of `script` under `sha256`.
std::string scriptChain(const fs::path& dir, const fs::path& script, const std::string& sha256) {
    const std::string path = (dir / "chain.json").string();
    std::ofstream(path) << Json{{"plugins", {{{"type", "script"}, {"path", script.string()}, {"sha256", sha256}}}}}.dump();
    return path;
}

std::string auditedHash(const fs::path& script) {
    const auto r = runCli({"plugins", "audit", script.string(), "--json"});
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return Json::parse(r.out)["sha256"].get<std::string>();
}

TEST(PluginsCli, AuditFlagsWhatAScriptReachesFor) {
    const fs::path network = fs::path(MODEBENCH_SOURCE_DIR) / "tests" / "plugins" / "scripts" / "network.py";
    const auto r = runCli({"plugins", "audit", network.string(), "--json"});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const Json j = Json::parse(r.out);
    EXPECT_EQ(j["sha256"].get<std::string>().size(), 64u);
    bool networkFinding = false;
    for (const auto& f : j["findings"]) networkFinding |= f["category"] == "network";
    EXPECT_TRUE(networkFinding) << r.out;
    const auto text = runCli({"plugins", "audit", kSample.string()});
    EXPECT_NE(text.out.find("no findings"), std::string::npos) << text.out;
}

TEST(PluginsCli, AScriptRunsOnlyApprovedByHashAndAgainAfterAChange) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    mb::test::TempDir dir;
    const std::string db = (dir / "runs.db").string();
    const fs::path script = dir / "title_case.py";
    fs::copy_file(kSample, script);
    const std::string sha = auditedHash(script);
    const std::string chain = scriptChain(dir.path(), script, sha);
    const std::vector<std::string> compare = {"compare", "-m", model.string(), "-w", "chat", "--requests", "3",
                                              "--output-tokens", "16", "--threads", "1", "--db", db,
                                              "--plugins", chain, "--json", (dir / "c.json").string()};
    mb::test::expectCleanError(runCli(compare), "is not approved");

    const auto approve = runCli({"plugins", "approve", script.string(), "--by", "reviewer", "--db", db});
    ASSERT_EQ(approve.exitCode, 0) << approve.err;
    EXPECT_NE(approve.out.find(sha), std::string::npos);
    const auto list = runCli({"plugins", "list", "--db", db, "--json"});
    ASSERT_EQ(list.exitCode, 0) << list.err;
    EXPECT_EQ(Json::parse(list.out)[0]["approved_by"], "reviewer");

    const auto ran = runCli(compare);
    ASSERT_EQ(ran.exitCode, 0) << ran.err;
    EXPECT_NE(ran.out.find("plugins ms p50"), std::string::npos) << ran.out;
    const Json j = Json::parse(mb::test::slurp(dir / "c.json"));
    for (const char* side : {"a", "b"}) {
        ASSERT_TRUE(j[side]["summary"].contains("postprocess")) << side;
        EXPECT_EQ(j[side]["plugins"]["plugins"][0]["sha256"], sha);
        const Json& r0 = j[side]["requests"][0];
        EXPECT_NE(r0["raw_output"], r0["output"]) << side; // the first letter is capitalised
        EXPECT_GT(r0["postprocess_ms"].get<double>(), 0.0);
    }
    // The stored run records the exact chain and hash, and its requests both outputs.
    const auto runs = mb::db::RunStore::open(db).listRuns();
    ASSERT_EQ(runs.size(), 1u);
    const auto run = mb::db::RunStore::open(db).getRun(runs[0].id);
    const mb::lab::RunConfig c = mb::lab::runConfigFromText(run.info.configJson);
    EXPECT_EQ(c.side("b")->plugins["plugins"][0]["sha256"], sha);
    ASSERT_FALSE(run.candidates[0].requests.empty());
    const auto& stored = run.candidates[0].requests[0];
    EXPECT_TRUE(stored.postprocessed);
    EXPECT_EQ(stored.output, j["a"]["requests"][0]["output"].get<std::string>());
    EXPECT_EQ(stored.text, j["a"]["requests"][0]["raw_output"].get<std::string>());

    // A changed file is another script: refused until its new hash is approved.
    std::ofstream(script, std::ios::app) << "\n# changed\n";
    mb::test::expectCleanError(runCli(compare), "changed");
    const std::string sha2 = auditedHash(script);
    EXPECT_NE(sha2, sha);
    mb::test::expectCleanError(runCli(compare), "changed"); // the chain still names the old hash
    scriptChain(dir.path(), script, sha2);
    mb::test::expectCleanError(runCli(compare), "is not approved");
    ASSERT_EQ(runCli({"plugins", "approve", script.string(), "--db", db}).exitCode, 0);
    EXPECT_EQ(runCli(compare).exitCode, 0);
    // Revoked: refused again.
    ASSERT_EQ(runCli({"plugins", "revoke", sha2, "--db", db}).exitCode, 0);
    mb::test::expectCleanError(runCli(compare), "is not approved");
}

TEST(PluginsCli, BuiltInChainsAndAWithWithoutAB) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    mb::test::TempDir dir;
    const std::string chain = (dir / "upper.json").string();
    std::ofstream(chain) << R"({"plugins": [{"type": "regex_replace", "pattern": "[aeiou]", "replacement": "_"}]})";
    const auto r = runCli({"compare", "-m", model.string(), "--a", "regular", "--b", "regular", "--b-plugins", chain,
                           "-w", "chat", "--requests", "2", "--output-tokens", "12", "--threads", "1", "--no-store",
                           "--json", (dir / "c.json").string()});
    ASSERT_EQ(r.exitCode, 0) << r.err;
    const Json j = Json::parse(mb::test::slurp(dir / "c.json"));
    EXPECT_FALSE(j["a"]["summary"].contains("postprocess"));
    EXPECT_TRUE(j["b"]["summary"].contains("postprocess"));
    const std::string out = j["b"]["requests"][0]["output"];
    EXPECT_EQ(out.find_first_of("aeiou"), std::string::npos) << out;
    EXPECT_EQ(j["a"]["requests"][0]["output"], j["a"]["requests"][0]["raw_output"]);

    std::ofstream(chain) << R"({"plugins": [{"type": "word_filter"}]})";
    mb::test::expectCleanError(runCli({"compare", "-m", model.string(), "--plugins", chain, "--no-store"}), "words");
    std::ofstream(chain) << R"({"plugins": [{"type": "teleport"}]})";
    mb::test::expectCleanError(runCli({"compare", "-m", model.string(), "--plugins", chain, "--no-store"}),
                               "unknown plugin type 'teleport'");
}

} // namespace
