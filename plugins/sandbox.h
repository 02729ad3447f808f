// The script plugins' sandbox: a child process behind rlimits, namespaces, Landlock and seccomp.
#pragma once

#include <nlohmann/json.hpp>

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace mb::plugins {

// What the sandboxed process may use (docs/PLUGINS.md, "The sandbox").
struct SandboxLimits {
    int cpuSeconds = 10;                 // RLIMIT_CPU: SIGXCPU, then SIGKILL a second later
    int64_t memoryBytes = 512LL << 20;   // RLIMIT_AS: allocations beyond fail (MemoryError)
    int64_t fileBytes = 16LL << 20;      // RLIMIT_FSIZE: the largest file it may write
    int openFiles = 64;                  // RLIMIT_NOFILE
    nlohmann::json toJson() const;
};

// One protection layer and whether it holds on this machine.
struct SandboxLayer {
    std::string name;   // "rlimits", "environment", "namespaces", "landlock", "seccomp"
    bool holds = false;
    std::string what;   // what it gives, one line
    std::string reason; // why not, one line (empty when it holds)
};

// Which layers hold here (probeSandbox) or held for one process (SandboxedProcess::layers).
struct SandboxInfo {
    std::vector<SandboxLayer> layers;
    int landlockAbi = 0;

    bool holds(const std::string& layer) const;
    // The protections a script must have; each names the layers that give it.
    bool networkIsolated() const { return holds("namespaces") || holds("seccomp"); }
    bool writesRestricted() const { return holds("landlock"); }
    bool noChildProcesses() const { return holds("seccomp"); }
    // "no network isolation (namespaces: ...; seccomp: ...)" for each protection missing.
    std::vector<std::string> missing() const;
    std::string describe() const; // several lines, one per layer
    nlohmann::json toJson() const;
};

// The layers this machine offers, probed once per process (a forked child tries the
// namespaces; Landlock's ABI is asked; seccomp is compiled in or not).
const SandboxInfo& probeSandbox();

// What to run, and how.
struct SandboxSpec {
    std::string program;                   // absolute path of the executable
    std::vector<std::string> args;         // argv[1...]
    std::vector<std::filesystem::path> readable; // folders it may read besides the system's
    SandboxLimits limits;
    bool allowUnsandboxed = false;         // run with the layers that hold when some are missing
};

// A running sandboxed child: its stdin (a socket, so writes never raise SIGPIPE), stdout and
// stderr (pipes), its own session and scratch directory. The destructor kills its process
// group, reaps it and removes the scratch directory.
class SandboxedProcess {
public:
    // Throws PluginError: "the sandbox cannot be set up here: no filesystem write
    // restriction (landlock: ...)" or "sandbox setup failed: landlock_restrict_self: ...".
    explicit SandboxedProcess(const SandboxSpec& spec);
    ~SandboxedProcess();
    SandboxedProcess(const SandboxedProcess&) = delete;
    SandboxedProcess& operator=(const SandboxedProcess&) = delete;

    int stdinFd() const { return m_in; }
    int stdoutFd() const { return m_out; }
    int stderrFd() const { return m_err; }
    pid_t pid() const { return m_pid; }
    const std::filesystem::path& scratch() const { return m_scratch; }
    const SandboxInfo& layers() const { return m_layers; } // the layers this process got
    const std::string& uidMap() const { return m_uidMap; }  // "0 → 65534" or empty

    void kill();               // SIGKILL to its process group (idempotent)
    // Waits for it (up to `graceMs`, then kills it): "status 1", "signal 9".
    std::string waitStatus(int graceMs = 200);

private:
    void spawn(const SandboxSpec& spec);
    void mapIds(int readyFd, int goFd);
    void cleanUp();
    pid_t m_pid = -1;
    int m_in = -1, m_out = -1, m_err = -1;
    bool m_reaped = false;
    int m_status = 0;
    std::filesystem::path m_scratch;
    SandboxInfo m_layers;
    std::string m_uidMap;
};

} // namespace mb::plugins
