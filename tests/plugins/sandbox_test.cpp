// The sandbox: which layers hold, a clean environment, the uid map, setup errors, scratch cleanup.
#include "script_testing.h"

#include "plugins/plugin.h"

#include <gtest/gtest.h>

#include <poll.h>
#include <unistd.h>

#include <filesystem>

namespace mb::plugins {
namespace {

// Everything the process writes to stdout until it exits.
std::string outputOf(SandboxedProcess& p) {
    std::string out;
    char buf[4096];
    for (;;) {
        pollfd fd{p.stdoutFd(), POLLIN, 0};
        if (poll(&fd, 1, 5000) <= 0) break;
        const ssize_t n = read(p.stdoutFd(), buf, sizeof buf);
        if (n <= 0) break;
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

SandboxSpec shell(const std::string& command) {
    SandboxSpec s;
    s.program = "/bin/sh";
    s.args = {"-c", command};
    return s;
}

TEST(Sandbox, ProbeNamesEveryLayerAndWhyOneIsMissing) {
    const SandboxInfo& info = probeSandbox();
    ASSERT_EQ(info.layers.size(), 5u);
    for (const SandboxLayer& l : info.layers) {
        EXPECT_FALSE(l.name.empty());
        EXPECT_EQ(l.holds, l.reason.empty()) << l.name << ": " << l.reason;
    }
    const nlohmann::json j = info.toJson();
    for (const char* layer : {"rlimits", "environment", "namespaces", "landlock", "seccomp"})
        EXPECT_TRUE(j.contains(layer)) << layer;
    EXPECT_NE(info.describe().find("landlock"), std::string::npos);
    std::cout << "sandbox layers here:\n" << info.describe();
}

TEST(Sandbox, AllLayersHoldHere) {
    MB_REQUIRE_SANDBOX();
    const SandboxInfo& info = probeSandbox();
    EXPECT_TRUE(info.networkIsolated());
    EXPECT_TRUE(info.writesRestricted());
    EXPECT_TRUE(info.noChildProcesses());
    EXPECT_GE(info.landlockAbi, 1);
}

TEST(Sandbox, TheChildGetsOnlyTheCleanEnvironmentAndItsScratchFolder) {
    MB_REQUIRE_SANDBOX();
    setenv("MODEBENCH_API_KEY", "secret", 1);
    // builtins only: the shell cannot start a process in the sandbox
    auto p = std::make_unique<SandboxedProcess>(shell("echo $PATH; echo $HOME; pwd; echo ${MODEBENCH_API_KEY:-none}"));
    const std::filesystem::path scratch = p->scratch();
    EXPECT_TRUE(std::filesystem::is_directory(scratch));
    const std::string out = outputOf(*p);
    EXPECT_EQ(out, "/usr/bin:/bin\n" + scratch.string() + "\n" + scratch.string() + "\nnone\n") << out;
    EXPECT_EQ(p->waitStatus(), "status 0");
    if (geteuid() == 0) EXPECT_EQ(p->uidMap(), "0 → 65534 (nobody)");
    p.reset();
    EXPECT_FALSE(std::filesystem::exists(scratch)); // the scratch folder goes with the process
}

TEST(Sandbox, TheShellCannotStartAProcessNorWriteOutsideScratch) {
    MB_REQUIRE_SANDBOX();
    SandboxedProcess p(shell("echo x > here && echo scratch; echo x > /tmp/modebench-sandbox-test && echo wrote; /bin/true && echo started"));
    EXPECT_EQ(outputOf(p), "scratch\n");
    EXPECT_FALSE(std::filesystem::exists("/tmp/modebench-sandbox-test"));
}

TEST(Sandbox, ASetupFailureReachesTheParentWithItsStep) {
    MB_REQUIRE_SANDBOX();
    SandboxSpec s;
    s.program = "/no/such/interpreter";
    const std::string err = test::errorOf([&] { SandboxedProcess p(s); });
    EXPECT_EQ(err, "sandbox setup failed: execve: No such file or directory");
}

TEST(Sandbox, TheLimitsHold) {
    MB_REQUIRE_SANDBOX();
    SandboxedProcess p(shell("ulimit -t; ulimit -v; ulimit -f; ulimit -n; ulimit -c"));
    // sh reports -f in 512-byte blocks and -v in KiB
    EXPECT_EQ(outputOf(p), "10\n524288\n32768\n64\n0\n");
}

} // namespace
} // namespace mb::plugins
