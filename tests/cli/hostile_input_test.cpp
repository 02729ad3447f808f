// modebench-cli on hostile input: negative seeds, too many threads, absurdly long prompt lines.
#include "cli/cli_runner.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace {

using mb::test::CliResult;
using mb::test::expectCleanError;
using mb::test::runCli;
using mb::test::TempDir;

// Every option that takes a seed refuses a negative one with the same words; generate once
// read "-1" as 2^64 - 1 and ran.
TEST(HostileInput, EveryCommandRefusesNegativeSeedsAlike) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    const std::string m = model.string(), requirements = (dir / "req.json").string();
    std::ofstream(requirements) << "{}";
    const std::vector<std::vector<std::string>> commands = {
        {"generate", "-m", m, "--prompt", "Once", "--max-tokens", "2", "--seed", "-1"},
        {"bench", "-m", m, "--seed", "-1"},
        {"make-model", "--preset", "tiny", "--out", (dir / "x.gguf").string(), "--seed", "-1"},
        {"select", "--db", (dir / "r.db").string(), "--run", "1", "--requirements", requirements, "--seed", "-1"},
        {"compare", "-m", m, "--seed", "-1"},
        {"compare", "-m", m, "--sample-seed", "-1"},
    };
    for (const auto& args : commands) {
        SCOPED_TRACE(args[0] + " " + args[args.size() - 2]);
        const CliResult r = runCli(args);
        expectCleanError(r, args[args.size() - 2] + ": '-1' is not a seed (a whole number from 0)");
    }
    expectCleanError(runCli({"generate", "-m", m, "--prompt", "Once", "--seed", "12x"}), "'12x' is not a seed");
    // The largest unsigned seed is still one.
    const CliResult top = runCli({"generate", "-m", m, "--prompt", "Once", "--max-tokens", "2", "--temperature", "1",
                                  "--seed", "18446744073709551615"});
    EXPECT_EQ(top.exitCode, 0) << top.err;
}

// --threads 1024 is in range, but under an address-space limit the OS refuses most of their
// stacks: one line saying so, never "terminate called without an active exception".
TEST(HostileInput, ThreadsTheSystemRefusesAreOneLine) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    for (const char* command : {"generate", "bench"}) {
        SCOPED_TRACE(command);
        std::vector<std::string> args = {command, "-m", model.string(), "--threads", "1024"};
        if (std::string(command) == "generate") args.insert(args.end(), {"--prompt", "Once", "--max-tokens", "2"});
        // 1 GiB: a hundred 8 MiB stacks at most. Before the fix the process aborted, or hung in
        // the abort: `timeout` turns a hang into a failure instead of a stuck suite.
        const CliResult r = runCli(args, "ulimit -v 1048576; timeout 120");
        expectCleanError(r, "cannot start 1024 threads: only ");
        EXPECT_NE(r.err.find("use fewer --threads"), std::string::npos) << r.err;
    }
}

// A prompt file with a 17 MiB line: the file and line in one line, not std::bad_alloc.
TEST(HostileInput, APromptFileLineOverTheLimitNamesFileAndLine) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    TempDir dir;
    const std::string prompts = (dir / "p.txt").string();
    std::ofstream(prompts) << "Once upon a time\n" << std::string(size_t{17} << 20, 'a') << "\nThe end\n";
    const CliResult r = runCli({"compare", "-m", model.string(), "--prompts", prompts, "--no-store"});
    expectCleanError(r, "p.txt:2: the line is longer than 16 MiB");
}

} // namespace
