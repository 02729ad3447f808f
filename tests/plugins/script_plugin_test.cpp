// Script plugins: the protocol, failures that keep the factory serving, approval by hash, the sandbox from inside.
#include "script_testing.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace mb::plugins {
namespace {

using test::approvedScript;
using test::errorOf;
using test::runOnce;
using test::scriptEntry;
using test::scriptPath;

TEST(ScriptPlugin, EchoesAndPassesTheRequestAndItsConfigToOnStart) {
    MB_REQUIRE_SANDBOX();
    const auto f = approvedScript("echo.py", {{"config", {{"report", true}, {"words", {"a", "b"}}}}});
    auto p = f->make();
    p->start(RequestInfo{7, "fast", 12, 64});
    EXPECT_EQ(p->text("héllo ").text, "héllo ");
    const Emit end = p->end();
    const nlohmann::json request = nlohmann::json::parse(end.text);
    EXPECT_EQ(request["id"], 7);
    EXPECT_EQ(request["mode"], "fast");
    EXPECT_EQ(request["prompt_tokens"], 12);
    EXPECT_EQ(request["max_tokens"], 64);
    EXPECT_EQ(request["config"]["words"], nlohmann::json({"a", "b"}));
    EXPECT_EQ(f->type(), "script");
    EXPECT_EQ(f->describe(), "script(echo.py " + sha256File(scriptPath("echo.py")).substr(0, 8) + ")");
}

TEST(ScriptPlugin, UpperCasesAndEndsTheResponseWithAReason) {
    MB_REQUIRE_SANDBOX();
    const auto f = approvedScript("upper.py");
    auto p = f->make();
    p->start(RequestInfo{});
    EXPECT_EQ(p->text("abc ").text, "ABC ");
    const Emit e = p->text("def STOP ghi");
    EXPECT_EQ(e.text, "DEF ");
    EXPECT_TRUE(e.end);
    EXPECT_EQ(e.reason, "saw STOP");
}

TEST(ScriptPlugin, NoStateCrossesRequests) {
    MB_REQUIRE_SANDBOX();
    const auto f = approvedScript("words.py");
    auto a = f->make();
    a->start(RequestInfo{});
    EXPECT_EQ(a->text("left over").text, "[left] ");
    auto b = f->make(); // a fresh process: nothing of a's held "over"
    b->start(RequestInfo{});
    EXPECT_EQ(b->end().text, "");
    EXPECT_EQ(a->end().text, "[over]");
}

TEST(ScriptPlugin, HoldsBackACutCharacterAndTheScriptHoldsBackWords) {
    MB_REQUIRE_SANDBOX();
    const auto f = approvedScript("words.py");
    auto p = f->make();
    p->start(RequestInfo{});
    EXPECT_EQ(p->text("h\xc3").text, "");           // "é" cut after its first byte: held here
    EXPECT_EQ(p->text("\xa9llo w\xc3").text, "[héllo] ");
    EXPECT_EQ(p->text("\xb6rld \xff!").text, "[wörld] "); // the invalid byte arrives as U+FFFD
    EXPECT_EQ(p->end().text, "[\xef\xbf\xbd!]");
}

TEST(ScriptPlugin, ATimeoutFailsThatRequestAndTheFactoryKeepsServing) {
    MB_REQUIRE_SANDBOX();
    const auto f = approvedScript("slow.py", {{"timeout_ms", 300}});
    auto p = f->make();
    p->start(RequestInfo{});
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(errorOf([&] { p->text("sleep"); }), "script slow.py: on_text timed out after 300 ms");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
    EXPECT_EQ(errorOf([&] { p->end(); }), "script slow.py: on_text timed out after 300 ms"); // stays failed
    EXPECT_EQ(runOnce(*f, "next"), "next");
    EXPECT_EQ(f->record()["timeout_ms"], 300);
}

TEST(ScriptPlugin, CrashesFailTheRequestWithAClearStatus) {
    MB_REQUIRE_SANDBOX();
    const auto f = approvedScript("crash.py");
    EXPECT_EQ(errorOf([&] { runOnce(*f, "raise"); }), "script crash.py: on_text raised ValueError: bad chunk");
    EXPECT_EQ(errorOf([&] { runOnce(*f, "exit"); }), "script crash.py exited (status 3)");
    EXPECT_EQ(errorOf([&] { runOnce(*f, "abort"); }), "script crash.py exited (signal 6)");
    EXPECT_EQ(runOnce(*f, "fine"), "fine");
}

TEST(ScriptPlugin, GarbageOnStdoutIsAClearFailure) {
    MB_REQUIRE_SANDBOX();
    const auto f = approvedScript("garbage.py");
    EXPECT_EQ(errorOf([&] { runOnce(*f, "x"); }), "script garbage.py answered something that is not a JSON line: 'hello there'");
}

TEST(ScriptPlugin, AScriptWithoutOnTextIsRefusedAtConfiguration) {
    MB_REQUIRE_SANDBOX();
    EXPECT_EQ(errorOf([&] { approvedScript("no_on_text.py"); }),
              "script no_on_text.py: loading raised NameError: the script defines no on_text(chunk) function");
}

TEST(ScriptPlugin, RecordsPathHashSandboxAndTimeout) {
    MB_REQUIRE_SANDBOX();
    const auto f = approvedScript("echo.py");
    const nlohmann::json r = f->record();
    EXPECT_EQ(r["type"], "script");
    EXPECT_EQ(r["path"], scriptPath("echo.py"));
    EXPECT_EQ(r["sha256"], sha256File(scriptPath("echo.py")));
    EXPECT_TRUE(r["sandbox"]["landlock"]["holds"].get<bool>());
    EXPECT_EQ(r["sandbox"]["limits"]["memory_mb"], 512);
    EXPECT_EQ(r["timeout_ms"], 2000);
}

// --- approval and configuration -------------------------------------------------------

TEST(ScriptApproval, AnUnapprovedHashIsRefused) {
    const std::string hash = sha256File(scriptPath("echo.py"));
    ChainOptions none = test::approvingOptions();
    none.approved = nullptr;
    const std::string want = "script plugin echo.py (sha256 " + hash.substr(0, 8) +
                             "…) is not approved: audit it and approve it by hash (modebench-cli plugins approve " +
                             scriptPath("echo.py") + ")";
    EXPECT_EQ(errorOf([&] { makeScriptPlugin(scriptEntry("echo.py"), none); }), want);
    ChainOptions other = test::approvingOptions();
    other.approved = [](const std::string& h) { return h == std::string(64, '0'); };
    EXPECT_EQ(errorOf([&] { makeScriptPlugin(scriptEntry("echo.py"), other); }), want);
}

TEST(ScriptApproval, AFileChangedAfterItsHashWasRecordedIsRefused) {
    const auto dir = std::filesystem::temp_directory_path() / ("mb-script-approval-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(scriptPath("echo.py"), dir / "p.py", std::filesystem::copy_options::overwrite_existing);
    const nlohmann::json entry = {{"type", "script"}, {"path", "p.py"}, {"sha256", sha256File((dir / "p.py").string())}};
    std::ofstream(dir / "p.py", std::ios::app) << "\nimport os\n";
    ChainOptions o = test::approvingOptions();
    o.baseDir = dir;
    const std::string err = errorOf([&] { makeScriptPlugin(entry, o); });
    EXPECT_NE(err.find("script plugin p.py changed since its sha256 was recorded"), std::string::npos) << err;
    EXPECT_NE(err.find("modebench-cli plugins audit p.py"), std::string::npos) << err;
    std::filesystem::remove_all(dir);
}

TEST(ScriptApproval, ConfigurationErrorsAreClear) {
    const ChainOptions o = test::approvingOptions();
    EXPECT_EQ(errorOf([&] { makeScriptPlugin({{"type", "script"}, {"path", scriptPath("echo.py")}}, o); }),
              "script plugin echo.py needs its \"sha256\": run `modebench-cli plugins audit " + scriptPath("echo.py") +
                  "` to see it");
    EXPECT_EQ(errorOf([&] { makeScriptPlugin(scriptEntry("echo.py", {{"colour", "red"}}), o); }),
              "script plugin: unknown key \"colour\" (known: type, path, sha256, timeout_ms, cpu_seconds, memory_mb, config)");
    EXPECT_EQ(errorOf([&] { makeScriptPlugin({{"type", "script"}}, o); }),
              "script plugin: \"path\" (the script's file) is required");
    EXPECT_EQ(errorOf([&] { makeScriptPlugin(scriptEntry("echo.py", {{"memory_mb", 1}}), o); }),
              "script plugin: \"memory_mb\" must be an integer from 64 to 1048576");
    ChainOptions py = o;
    py.python = "/no/such/python3";
    EXPECT_EQ(errorOf([&] { makeScriptPlugin(scriptEntry("echo.py"), py); }),
              "the Python interpreter /no/such/python3 was not found or is not executable");
}

// --- the sandbox, seen from inside a script -------------------------------------------

class ScriptSandbox : public ::testing::Test {
protected:
    void SetUp() override { MB_REQUIRE_SANDBOX(); }
};

TEST_F(ScriptSandbox, NoNetwork) {
    const auto f = approvedScript("network.py");
    EXPECT_EQ(runOnce(*f, "socket"), "PermissionError");
    EXPECT_EQ(runOnce(*f, "connect"), "PermissionError");
    EXPECT_EQ(runOnce(*f, "unix"), "PermissionError");
}

TEST_F(ScriptSandbox, WritesOnlyInItsScratchFolder) {
    const auto f = approvedScript("files.py");
    EXPECT_EQ(runOnce(*f, "scratch"), "ok");
    EXPECT_EQ(runOnce(*f, "/etc/modebench-plugin-test"), "PermissionError");
    const char* home = std::getenv("HOME");
    if (home && *home) EXPECT_EQ(runOnce(*f, std::string(home) + "/modebench-plugin-test"), "PermissionError");
    const std::string tmp = (std::filesystem::temp_directory_path() / "modebench-plugin-test").string();
    EXPECT_EQ(runOnce(*f, tmp), "PermissionError");
    EXPECT_FALSE(std::filesystem::exists("/etc/modebench-plugin-test"));
    EXPECT_FALSE(std::filesystem::exists(tmp));
}

TEST_F(ScriptSandbox, SeesNoneOfTheParentsEnvironment) {
    setenv("MODEBENCH_API_KEY", "secret", 1);
    const auto f = approvedScript("environment.py");
    const nlohmann::json env = nlohmann::json::parse(runOnce(*f, "env"));
    EXPECT_FALSE(env.contains("MODEBENCH_API_KEY"));
    for (const auto& [key, value] : env.items())
        EXPECT_TRUE(key == "PATH" || key == "LANG" || key == "HOME" || key == "TMPDIR" || key == "LC_CTYPE" ||
                    key.rfind("PYTHON", 0) == 0)
            << key;
    EXPECT_EQ(env["PATH"], "/usr/bin:/bin");
}

TEST_F(ScriptSandbox, StartsNoProcess) {
    const auto f = approvedScript("children.py");
    EXPECT_EQ(runOnce(*f, "fork"), "PermissionError");
    EXPECT_EQ(runOnce(*f, "subprocess"), "PermissionError");
}

TEST_F(ScriptSandbox, TheMemoryLimitHolds) {
    const auto f = approvedScript("memory.py");
    const std::string err = errorOf([&] { runOnce(*f, "x"); });
    EXPECT_TRUE(err == "script memory.py: on_text raised MemoryError" || err.find("exited (signal") != std::string::npos)
        << err;
}

} // namespace
} // namespace mb::plugins
