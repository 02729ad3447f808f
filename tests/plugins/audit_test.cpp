// The audit: hash and size, imports and calls, findings by category, parse errors, the report's text.
#include "script_testing.h"

#include "plugins/audit.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace mb::plugins {
namespace {

using test::scriptPath;

class Audit : public ::testing::Test {
protected:
    void SetUp() override { MB_REQUIRE_SANDBOX(); }
    static AuditReport audit(const std::string& name) { return auditScript(scriptPath(name), test::approvingOptions()); }
};

bool has(const AuditReport& r, const std::string& category, const std::string& severity, const std::string& what) {
    for (const AuditFinding& f : r.findings)
        if (f.category == category && f.severity == severity && f.what.find(what) != std::string::npos) return true;
    return false;
}

bool imports(const AuditReport& r, const std::string& module) {
    for (const AuditImport& i : r.imports)
        if (i.module == module) return true;
    return false;
}

TEST_F(Audit, APlainScriptHasNoFindings) {
    const AuditReport r = audit("upper.py");
    EXPECT_TRUE(r.parsed);
    EXPECT_EQ(r.sha256, sha256File(scriptPath("upper.py")));
    EXPECT_EQ(r.size, std::filesystem::file_size(scriptPath("upper.py")));
    EXPECT_TRUE(r.findings.empty()) << r.toText();
    EXPECT_TRUE(r.functions.at("on_text"));
    EXPECT_FALSE(r.functions.at("on_start"));
    EXPECT_EQ(r.verdict(), "no findings: nothing in it reaches beyond its text");
}

TEST_F(Audit, FlagsTheNetwork) {
    const AuditReport r = audit("network.py");
    EXPECT_TRUE(imports(r, "socket"));
    EXPECT_TRUE(has(r, "network", "high", "imports socket"));
    EXPECT_TRUE(has(r, "network", "high", "socket.socket(...)"));
    EXPECT_TRUE(has(r, "network", "high", "socket.create_connection(...)"));
}

TEST_F(Audit, FlagsFileWritesAndReads) {
    const AuditReport r = audit("files.py");
    EXPECT_TRUE(has(r, "filesystem", "medium", "open(..., 'w') writes a file"));
    EXPECT_TRUE(has(r, "filesystem", "low", "open(...) reads a file"));
}

TEST_F(Audit, FlagsTheEnvironmentAndOs) {
    const AuditReport r = audit("environment.py");
    EXPECT_TRUE(has(r, "environment", "medium", "os.environ"));
    EXPECT_TRUE(has(r, "import", "low", "imports os"));
}

TEST_F(Audit, FlagsProcesses) {
    const AuditReport r = audit("children.py");
    EXPECT_TRUE(has(r, "process", "high", "imports subprocess"));
    EXPECT_TRUE(has(r, "process", "high", "os.fork(...)"));
    EXPECT_TRUE(has(r, "process", "high", "subprocess.run(...)"));
    const AuditReport crash = audit("crash.py");
    EXPECT_TRUE(has(crash, "import", "low", "imports sys"));
    bool sawCall = false;
    for (const AuditCall& c : crash.calls) sawCall |= c.name == "os.abort" && c.line == 11;
    EXPECT_TRUE(sawCall);
}

TEST_F(Audit, FlagsDynamicCodeNativeCodeAndAliases) {
    const auto file = std::filesystem::temp_directory_path() / ("mb-audit-" + std::to_string(getpid()) + ".py");
    std::ofstream(file) << "import subprocess as sp\nfrom os import system as run\nimport ctypes\n"
                           "def on_text(chunk):\n    eval(chunk)\n    sp.Popen(['x'])\n    run('ls')\n"
                           "    __import__('socket')\n    getattr(chunk, chunk)\n    return ().__class__.__bases__\n";
    const AuditReport r = auditScript(file, test::approvingOptions());
    std::filesystem::remove(file);
    EXPECT_TRUE(has(r, "dynamic", "high", "eval(...)"));
    EXPECT_TRUE(has(r, "process", "high", "subprocess.Popen(...)"));
    EXPECT_TRUE(has(r, "process", "high", "os.system(...)"));
    EXPECT_TRUE(has(r, "native", "high", "imports ctypes"));
    EXPECT_TRUE(has(r, "dynamic", "high", "__import__(...)"));
    EXPECT_TRUE(imports(r, "socket")); // __import__('socket') counts as an import
    EXPECT_TRUE(has(r, "dynamic", "medium", "getattr with a computed name"));
    EXPECT_TRUE(has(r, "dynamic", "high", "__bases__"));
    EXPECT_NE(r.verdict().find("review before approving"), std::string::npos) << r.verdict();
}

TEST_F(Audit, AMissingOnTextIsAFinding) {
    const AuditReport r = audit("no_on_text.py");
    EXPECT_TRUE(has(r, "interface", "high", "no top-level on_text"));
    EXPECT_TRUE(r.functions.at("on_start"));
}

TEST_F(Audit, ASyntaxErrorIsAClearReport) {
    const auto file = std::filesystem::temp_directory_path() / ("mb-audit-bad-" + std::to_string(getpid()) + ".py");
    std::ofstream(file) << "def on_text(chunk):\n    return chunk\n\ndef broken(:\n";
    const AuditReport r = auditScript(file, test::approvingOptions());
    std::filesystem::remove(file);
    EXPECT_FALSE(r.parsed);
    EXPECT_EQ(r.parseLine, 4);
    EXPECT_FALSE(r.parseError.empty());
    EXPECT_EQ(r.toJson()["parsed"], false);
    EXPECT_EQ(r.toJson()["parse_error"]["line"], 4);
    EXPECT_EQ(r.verdict(), "not valid Python (line 4): it cannot run");
}

TEST_F(Audit, TheTextReportHasHashFindingsSandboxAndVerdict) {
    const AuditReport r = audit("children.py");
    const std::string text = r.toText();
    for (const std::string& part : {r.sha256, std::string("process:"), std::string("[high] line 13: subprocess.run(...)"),
                                    std::string("Sandbox it will get:"), std::string("landlock: Landlock ABI"),
                                    std::string("512 MiB memory"), std::string("Verdict: "),
                                    std::string("modebench-cli plugins approve")})
        EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
    const nlohmann::json j = r.toJson();
    EXPECT_EQ(j["sha256"], r.sha256);
    EXPECT_TRUE(j["sandbox"]["seccomp"]["holds"].get<bool>());
    EXPECT_EQ(j["findings"].size(), r.findings.size());
}

} // namespace
} // namespace mb::plugins
