// The sandbox's parent side: scratch folder, pipes, fork, uid mapping, setup errors, reaping.
#include "plugins/sandbox.h"

#include "plugins/plugin.h"
#include "plugins/sandbox_child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace mb::plugins {

namespace {

constexpr uid_t kNobody = 65534;

// Folders every sandboxed Python needs to read (and execute from); missing ones are skipped.
const char* const kSystemReadable[] = {"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc",
                                       "/proc/self", "/dev/null", "/dev/zero", "/dev/urandom", "/dev/random"};

struct Pair {
    int fd[2] = {-1, -1};
    ~Pair() {
        for (int f : fd)
            if (f >= 0) close(f);
    }
    int take(int i) {
        const int f = fd[i];
        fd[i] = -1;
        return f;
    }
};

std::string errnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

std::filesystem::path makeScratch() {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/modebench-plugin-XXXXXX";
    if (!mkdtemp(tmpl.data())) throw PluginError("cannot create the plugin's scratch folder: " + errnoText("mkdtemp"));
    return tmpl; // mkdtemp makes it 0700
}

bool writeFile(const std::string& path, const std::string& text) {
    const int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int err = errno;
    close(fd);
    errno = err;
    return ok;
}

std::vector<char*> cStrings(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (std::string& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

} // namespace

SandboxedProcess::SandboxedProcess(const SandboxSpec& spec) {
    const SandboxInfo& probe = probeSandbox();
    const std::vector<std::string> missing = probe.missing();
    if (!missing.empty() && !spec.allowUnsandboxed) {
        std::string what;
        for (const std::string& m : missing) what += (what.empty() ? "" : "; ") + m;
        throw PluginError("the sandbox cannot be set up here: " + what + " (allow unsandboxed scripts to run anyway)");
    }
    m_layers = probe;
    m_scratch = makeScratch();
    try {
        spawn(spec);
    } catch (...) {
        cleanUp();
        throw;
    }
}

// Everything the child uses is built here, before fork; the child only makes system calls.
void SandboxedProcess::spawn(const SandboxSpec& spec) {
    std::vector<std::string> args{spec.program};
    args.insert(args.end(), spec.args.begin(), spec.args.end());
    std::vector<std::string> env{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + m_scratch.string(),
                                 "TMPDIR=" + m_scratch.string(), "PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8"};
    std::vector<std::string> readable(std::begin(kSystemReadable), std::end(kSystemReadable));
    for (const auto& p : spec.readable) readable.push_back(p.string());
    std::vector<char*> argv = cStrings(args), envp = cStrings(env), readPaths = cStrings(readable);
    const std::string scratch = m_scratch.string();

    Pair in, out, err, fail, ready, go;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in.fd) != 0) throw PluginError(errnoText("socketpair"));
    if (pipe2(out.fd, O_CLOEXEC) != 0 || pipe2(err.fd, O_CLOEXEC) != 0 || pipe2(fail.fd, O_CLOEXEC) != 0 ||
        pipe2(ready.fd, O_CLOEXEC) != 0 || pipe2(go.fd, O_CLOEXEC) != 0)
        throw PluginError(errnoText("pipe2"));
    detail::ChildPlan plan;
    plan.program = spec.program.c_str();
    plan.argv = argv.data();
    plan.envp = envp.data();
    plan.in = in.fd[1], plan.out = out.fd[1], plan.err = err.fd[1];
    plan.failFd = fail.fd[1];
    plan.rlimits = m_layers.holds("rlimits");
    plan.namespaces = m_layers.holds("namespaces");
    plan.landlock = m_layers.holds("landlock");
    plan.seccomp = m_layers.holds("seccomp");
    if (plan.namespaces) plan.readyFd = ready.fd[1], plan.goFd = go.fd[0];
    plan.limits = spec.limits;
    plan.scratch = scratch.c_str();
    plan.readPaths = readPaths.data();
    plan.readPathCount = readable.size();
    plan.landlockAbi = m_layers.landlockAbi;
    plan.filter = plan.seccomp ? detail::seccompProgram(nullptr) : nullptr;

    m_pid = fork();
    if (m_pid < 0) throw PluginError(errnoText("fork"));
    if (m_pid == 0) detail::runSandboxChild(plan);
    close(in.take(1)), close(out.take(1)), close(err.take(1)), close(fail.take(1));
    close(ready.take(1)), close(go.take(0));
    if (plan.namespaces) mapIds(ready.fd[0], go.fd[1]);
    close(go.take(1));

    detail::ChildFailure failure;
    ssize_t n;
    while ((n = read(fail.fd[0], &failure, sizeof failure)) < 0 && errno == EINTR) {
    }
    m_in = in.take(0), m_out = out.take(0), m_err = err.take(0);
    if (n == static_cast<ssize_t>(sizeof failure)) {
        waitStatus(1000);
        failure.step[sizeof failure.step - 1] = 0;
        throw PluginError(std::string("sandbox setup failed: ") + failure.step + ": " + std::strerror(failure.error));
    }
}

// The child's uid and gid maps, written from outside: uid 0 inside is nobody outside when
// we may (we run as root), else our own ids. The answer (0 or an errno) goes back on goFd.
void SandboxedProcess::mapIds(int readyFd, int goFd) {
    char c = 0;
    ssize_t n;
    while ((n = read(readyFd, &c, 1)) < 0 && errno == EINTR) {
    }
    if (n != 1) return; // it failed before unsharing: its failure report says why
    const std::string proc = "/proc/" + std::to_string(m_pid) + "/";
    int answer = 0;
    bool uid = writeFile(proc + "uid_map", "0 " + std::to_string(kNobody) + " 1\n");
    const bool nobody = uid;
    bool gid = uid && writeFile(proc + "gid_map", "0 " + std::to_string(kNobody) + " 1\n");
    if (!gid) {
        writeFile(proc + "setgroups", "deny\n");
        if (!uid) uid = writeFile(proc + "uid_map", "0 " + std::to_string(geteuid()) + " 1\n");
        gid = uid && writeFile(proc + "gid_map", "0 " + std::to_string(getegid()) + " 1\n");
    }
    if (!uid || !gid) answer = errno ? errno : EPERM;
    else if (nobody && chown(m_scratch.c_str(), kNobody, static_cast<gid_t>(-1)) != 0) answer = errno;
    if (answer == 0) m_uidMap = nobody ? "0 → 65534 (nobody)" : "0 → " + std::to_string(geteuid());
    [[maybe_unused]] ssize_t w = write(goFd, &answer, sizeof answer);
}

SandboxedProcess::~SandboxedProcess() { cleanUp(); }

void SandboxedProcess::cleanUp() {
    kill();
    waitStatus(0);
    for (int* fd : {&m_in, &m_out, &m_err})
        if (*fd >= 0) close(*fd), *fd = -1;
    std::error_code ec;
    if (!m_scratch.empty()) std::filesystem::remove_all(m_scratch, ec);
}

void SandboxedProcess::kill() {
    if (m_pid > 0 && !m_reaped) ::kill(-m_pid, SIGKILL), ::kill(m_pid, SIGKILL);
}

std::string SandboxedProcess::waitStatus(int graceMs) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(graceMs);
    while (m_pid > 0 && !m_reaped) {
        const pid_t r = waitpid(m_pid, &m_status, WNOHANG);
        if (r == m_pid || (r < 0 && errno != EINTR)) {
            m_reaped = true;
            break;
        }
        if (std::chrono::steady_clock::now() >= until) {
            kill();
            while (waitpid(m_pid, &m_status, 0) < 0 && errno == EINTR) {
            }
            m_reaped = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (WIFSIGNALED(m_status)) return "signal " + std::to_string(WTERMSIG(m_status));
    return "status " + std::to_string(WEXITSTATUS(m_status));
}

} // namespace mb::plugins
