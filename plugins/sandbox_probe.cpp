// Which sandbox layers hold on this machine, and how they are described and recorded.
#include "plugins/sandbox.h"

#include "plugins/sandbox_child.h"

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mb::plugins {

namespace {

// A forked child tries the namespaces (the parent must keep its own).
std::string probeNamespaces() {
    const pid_t pid = fork();
    if (pid < 0) return std::string("fork: ") + std::strerror(errno);
    if (pid == 0) _exit(unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) == 0 ? 0 : errno);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
    const int err = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
    return std::string("unshare(CLONE_NEWUSER | CLONE_NEWNET): ") + (err ? std::strerror(err) : "the probe died") +
           " (user namespaces disabled? see user.max_user_namespaces)";
}

SandboxInfo probe() {
    SandboxInfo info;
    info.layers.push_back({"rlimits", true, "CPU time, address space, file size, open files, no core dumps", ""});
    info.layers.push_back({"environment", true,
                           "a clean environment (no API keys), no inherited descriptors, its own session, no_new_privs", ""});
    const std::string ns = probeNamespaces();
    info.layers.push_back({"namespaces", ns.empty(),
                           "new user, network, IPC and UTS namespaces: no network interface up, uid 0 inside is nobody outside",
                           ns});
    std::string why;
    info.landlockAbi = detail::landlockAbi(&why);
    std::string what = "Landlock ABI " + std::to_string(info.landlockAbi) +
                       ": writes only in its scratch folder, reads only system folders";
    if (info.landlockAbi >= 4) what += ", no TCP bind or connect";
    if (info.landlockAbi >= 6) what += ", no signals or abstract sockets outside";
    info.layers.push_back({"landlock", info.landlockAbi > 0, info.landlockAbi > 0 ? what : "", why});
    why.clear();
    const bool seccomp = detail::seccompProgram(&why) != nullptr;
    info.layers.push_back({"seccomp", seccomp,
                           "no sockets, no child processes (fork, clone), no ptrace, mount, namespaces, bpf, keyctl or io_uring",
                           why});
    return info;
}

const SandboxLayer* find(const SandboxInfo& info, const std::string& name) {
    for (const SandboxLayer& l : info.layers)
        if (l.name == name) return &l;
    return nullptr;
}

std::string reasonOf(const SandboxInfo& info, const std::string& name) {
    const SandboxLayer* l = find(info, name);
    return name + ": " + (l ? l->reason : "not probed");
}

} // namespace

nlohmann::json SandboxLimits::toJson() const {
    return {{"cpu_seconds", cpuSeconds}, {"memory_mb", memoryBytes >> 20}, {"file_mb", fileBytes >> 20},
            {"open_files", openFiles}};
}

bool SandboxInfo::holds(const std::string& layer) const {
    const SandboxLayer* l = find(*this, layer);
    return l && l->holds;
}

std::vector<std::string> SandboxInfo::missing() const {
    std::vector<std::string> out;
    if (!holds("rlimits")) out.push_back("no resource limits (" + reasonOf(*this, "rlimits") + ")");
    if (!networkIsolated())
        out.push_back("no network isolation (" + reasonOf(*this, "namespaces") + "; " + reasonOf(*this, "seccomp") + ")");
    if (!writesRestricted()) out.push_back("no filesystem write restriction (" + reasonOf(*this, "landlock") + ")");
    if (!noChildProcesses()) out.push_back("no child-process block (" + reasonOf(*this, "seccomp") + ")");
    return out;
}

std::string SandboxInfo::describe() const {
    std::string s;
    for (const SandboxLayer& l : layers)
        s += "  " + l.name + ": " + (l.holds ? l.what : "MISSING — " + l.reason) + "\n";
    return s;
}

nlohmann::json SandboxInfo::toJson() const {
    nlohmann::json j = nlohmann::json::object();
    for (const SandboxLayer& l : layers) {
        nlohmann::json e = {{"holds", l.holds}};
        if (l.holds) e["what"] = l.what;
        else e["reason"] = l.reason;
        j[l.name] = e;
    }
    if (landlockAbi > 0) j["landlock"]["abi"] = landlockAbi;
    j["missing"] = missing();
    return j;
}

const SandboxInfo& probeSandbox() {
    static const SandboxInfo info = probe();
    return info;
}

} // namespace mb::plugins
