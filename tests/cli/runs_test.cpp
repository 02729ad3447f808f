// modebench-cli and the run store end to end: compare --db, then every `runs` command, and bad
// stores.
#include "cli/cli_runner.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

using Result = mb::test::CliResult;
using mb::test::expectCleanError;
using mb::test::slurp;

class Scratch {
public:
    Scratch() : m_path(fs::temp_directory_path() / ("mb_runs_" + std::to_string(::getpid()))) {
        fs::remove_all(m_path);
        fs::create_directories(m_path);
    }
    ~Scratch() { fs::remove_all(m_path); }
    std::string operator/(const std::string& name) const { return (m_path / name).string(); }

private:
    fs::path m_path;
};

Result run(const std::vector<std::string>& args, const std::string& env = {}) {
    return mb::test::runCli(args, env);
}

nlohmann::json parse(const std::string& text) {
    try {
        return nlohmann::json::parse(text);
    } catch (const std::exception&) {
        ADD_FAILURE() << "not JSON: " << text;
        return {};
    }
}

std::vector<std::string> compareArgs(const std::string& model) {
    return {"compare",
            "--model",
            model,
            "--workload",
            "shared-prefix",
            "--groups",
            "2",
            "--per-group",
            "2",
            "--prefix-tokens",
            "32",
            "--suffix-tokens",
            "8",
            "--output-tokens",
            "4",
            "--threads",
            "2"};
}

} // namespace

TEST(CliRuns, CompareStoresThenEveryRunsCommand) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Scratch dir;
    const std::string db = dir / "store.db";
    auto args = compareArgs(model.string());
    for (const char* a : {"--db", db.c_str(), "--name", "first", "--tag", "smoke", "--tag", "cpu"})
        args.push_back(a);
    const auto cmp = run(args);
    ASSERT_EQ(cmp.exitCode, 0) << cmp.err;
    EXPECT_NE(cmp.out.find("TTFT p50"), std::string::npos); // the table is unchanged
    EXPECT_NE(cmp.err.find("compare: stored run 1 in " + db), std::string::npos) << cmp.err;

    // list
    const auto list = run({"runs", "list", "--json", "--db", db});
    ASSERT_EQ(list.exitCode, 0) << list.err;
    const auto runs = parse(list.out);
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0]["id"], 1);
    EXPECT_EQ(runs[0]["name"], "first");
    EXPECT_EQ(runs[0]["status"], "complete");
    EXPECT_EQ(runs[0]["tags"], nlohmann::json::parse(R"(["smoke", "cpu"])"));
    EXPECT_TRUE(runs[0]["created_at"].is_string());
    ASSERT_EQ(runs[0]["candidates"].size(), 2u);
    EXPECT_EQ(runs[0]["candidates"][0]["profile"], "fast");
    EXPECT_EQ(runs[0]["candidates"][1]["profile"], "regular");
    EXPECT_NE(run({"runs", "list", "--db", db}).out.find("first"), std::string::npos);

    // show
    const auto show = parse(run({"runs", "show", "1", "--json", "--db", db}).out);
    EXPECT_EQ(show["candidates"][0]["request_count"], 4);
    EXPECT_EQ(show["workload"]["shared_prefix"]["groups"], 2);
    EXPECT_EQ(show["config"]["threads"], 2);
    EXPECT_TRUE(show["environment"]["cpu"]["model"].is_string());
    EXPECT_TRUE(show["environment"]["compiler"].is_string());
    EXPECT_EQ(show["candidates"][0]["model_sha256"].get<std::string>().size(), 64u);
    EXPECT_GT(show["candidates"][0]["summary"]["prefix_cache"]["hit_rate"].get<double>(), 0.5);
    const auto showText = run({"runs", "show", "1", "--db", db});
    EXPECT_NE(showText.out.find("TTFT p50"), std::string::npos) << showText.out;

    // export json + csv
    const std::string json = dir / "run.json", csv = dir / "run.csv";
    ASSERT_EQ(run({"runs", "export", "1", "--format", "json", "--out", json, "--db", db}).exitCode,
              0);
    const auto doc = parse(slurp(json));
    EXPECT_EQ(doc["format"], "modebench-run");
    ASSERT_EQ(doc["candidates"][1]["requests"].size(), 4u);
    EXPECT_EQ(doc["candidates"][1]["requests"][0]["token_times_ms"].size(),
              doc["candidates"][1]["requests"][0]["output_tokens"].get<size_t>());
    ASSERT_EQ(run({"runs", "export", "1", "--format", "csv", "--out", csv, "--db", db}).exitCode,
              0);
    std::istringstream lines(slurp(csv));
    std::string header, line;
    std::getline(lines, header);
    EXPECT_EQ(header.rfind("run_id,candidate,profile,index,status", 0), 0u);
    int rows = 0;
    while (std::getline(lines, line)) ++rows;
    EXPECT_EQ(rows, 8);

    // import, diff
    const auto imported = run({"runs", "import", json, "--db", db});
    ASSERT_EQ(imported.exitCode, 0) << imported.err;
    EXPECT_EQ(imported.out, "2\n");
    const std::string json2 = dir / "run2.json";
    ASSERT_EQ(run({"runs", "export", "2", "--out", json2, "--db", db}).exitCode, 0);
    auto doc2 = parse(slurp(json2));
    auto strip = [](nlohmann::json d) {
        d.erase("exported_at");
        d["run"].erase("id");
        for (auto& c : d["candidates"]) c.erase("id");
        return d;
    };
    EXPECT_EQ(strip(doc2), strip(doc));
    const auto diff = run({"runs", "diff", "1", "2", "--db", db});
    ASSERT_EQ(diff.exitCode, 0) << diff.err;
    EXPECT_NE(diff.out.find("#2 b regular"), std::string::npos) << diff.out;
    const auto diffJson = parse(run({"runs", "diff", "1", "2", "--json", "--db", db}).out);
    ASSERT_EQ(diffJson["columns"].size(), 4u);
    EXPECT_EQ(diffJson["columns"][0]["values"]["ttft_ms.p50"],
              diffJson["columns"][2]["values"]["ttft_ms.p50"]);

    // rename, tag, delete
    EXPECT_EQ(run({"runs", "rename", "2", "copy", "--db", db}).exitCode, 0);
    // A blank name is refused like a blank tag, and the name stays.
    expectCleanError(run({"runs", "rename", "2", "", "--db", db}), "a run name cannot be empty");
    expectCleanError(run({"runs", "rename", "2", " \t ", "--db", db}), "a run name cannot be empty");
    expectCleanError(run({"runs", "tag", "2", "  ", "--db", db}), "a tag cannot be empty");
    EXPECT_EQ(run({"runs", "tag", "2", "imported", "--db", db}).out, "smoke cpu imported\n");
    const auto afterEdit = parse(run({"runs", "list", "--json", "--db", db}).out);
    EXPECT_EQ(afterEdit[0]["name"], "copy");
    EXPECT_EQ(run({"runs", "delete", "2", "--db", db}).exitCode, 0);
    EXPECT_EQ(parse(run({"runs", "list", "--json", "--db", db}).out).size(), 1u);
    expectCleanError(run({"runs", "show", "2", "--db", db}), "no run 2");
}

TEST(CliRuns, DefaultStoreFollowsXdgDataHome) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Scratch dir;
    const std::string env = "XDG_DATA_HOME=" + mb::test::shellQuote(dir / "xdg");
    const auto cmp = run(compareArgs(model.string()), env);
    ASSERT_EQ(cmp.exitCode, 0) << cmp.err;
    const std::string expected = dir / "xdg/modebench/modebench.db";
    EXPECT_TRUE(fs::exists(expected));
    EXPECT_NE(cmp.err.find("stored run 1 in " + expected), std::string::npos) << cmp.err;
    EXPECT_EQ(parse(run({"runs", "list", "--json"}, env).out).size(), 1u);
    // --no-store records nothing.
    auto noStore = compareArgs(model.string());
    noStore.push_back("--no-store");
    ASSERT_EQ(run(noStore, env).exitCode, 0);
    EXPECT_EQ(parse(run({"runs", "list", "--json"}, env).out).size(), 1u);
}

TEST(CliRuns, BadStoresGiveOneLineAndExitCode2) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    Scratch dir;
    const std::string text = dir / "notes.txt";
    std::ofstream(text) << "not a database\n";
    auto args = compareArgs(model.string());
    args.push_back("--db");
    args.push_back(text);
    expectCleanError(run(args), text + " is not a ModeBench database (not SQLite)");
    expectCleanError(run({"runs", "list", "--db", text}), "not SQLite");
    expectCleanError(run({"runs", "import", text, "--db", dir / "ok.db"}), "is not JSON");
    EXPECT_EQ(slurp(text), "not a database\n");
    EXPECT_FALSE(fs::exists(text + "-wal"));
    fs::create_directories(dir / "adir");
    expectCleanError(run({"runs", "list", "--db", dir / "adir"}), "a directory");
    expectCleanError(run({"runs", "list", "--db", dir / "missing.db"}), "no database at");
    EXPECT_FALSE(fs::exists(dir / "missing.db")); // reading never creates a store
    auto missingDir = compareArgs(model.string());
    missingDir.push_back("--db");
    missingDir.push_back(dir / "no/such/dir/x.db");
    expectCleanError(run(missingDir), "cannot open");
    const std::string ok = dir / "ok.db";
    ASSERT_EQ(run({"runs", "import", ok, "--db", ok}).exitCode, 2); // no such file: nothing created
    EXPECT_FALSE(fs::exists(ok));
    std::ofstream(dir / "empty.db").flush();
    expectCleanError(run({"runs", "diff", "1", "5", "--db", dir / "empty.db"}), "no run 1");
    expectCleanError(run({"runs", "export", "1", "--format", "xml", "--db", dir / "empty.db"}),
                     "xml");
}
