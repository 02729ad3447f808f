// The sandbox's child side: rlimits, namespaces, Landlock, capabilities and seccomp, then exec.
#include "plugins/sandbox_child.h"

#ifdef MODEBENCH_HAVE_SECCOMP
#include <seccomp.h>
#endif

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace mb::plugins::detail {

namespace {

// Landlock's interface, spelled out here: Debian 12's headers stop at ABI 2.
constexpr uint32_t kLandlockVersion = 1u << 0; // LANDLOCK_CREATE_RULESET_VERSION
constexpr int kRulePathBeneath = 1;             // LANDLOCK_RULE_PATH_BENEATH
constexpr uint64_t kFsExecute = 1ull << 0, kFsWriteFile = 1ull << 1, kFsReadFile = 1ull << 2,
                   kFsReadDir = 1ull << 3, kFsRefer = 1ull << 13, kFsTruncate = 1ull << 14,
                   kFsIoctlDev = 1ull << 15;
constexpr uint64_t kNetBindTcp = 1ull << 0, kNetConnectTcp = 1ull << 1;
constexpr uint64_t kScopeAbstractUnix = 1ull << 0, kScopeSignal = 1ull << 1;

struct LandlockRulesetAttr {
    uint64_t handledFs = 0;
    uint64_t handledNet = 0; // ABI 4
    uint64_t scoped = 0;     // ABI 6
};
struct __attribute__((packed)) LandlockPathBeneath {
    uint64_t allowed = 0;
    int32_t parentFd = -1;
};

uint64_t handledFs(int abi) {
    uint64_t fs = (1ull << 13) - 1; // ABI 1: execute ... make_sym
    if (abi >= 2) fs |= kFsRefer;
    if (abi >= 3) fs |= kFsTruncate;
    if (abi >= 5) fs |= kFsIoctlDev;
    return fs;
}

[[noreturn]] void fail(const ChildPlan& p, const char* step) {
    ChildFailure f;
    f.error = errno;
    for (size_t i = 0; step[i] && i + 1 < sizeof f.step; ++i) f.step[i] = step[i];
    [[maybe_unused]] ssize_t n = write(p.failFd, &f, sizeof f);
    _exit(127);
}

// Moves fd above the standard three (so dup2 onto 0..2 cannot clobber it).
int lift(const ChildPlan& p, int fd, bool cloexec) {
    if (fd < 0) return -1;
    const int moved = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 10);
    if (moved < 0) fail(p, "fcntl(F_DUPFD)");
    return moved;
}

// 0, 1, 2 from the plan's pipes; every other descriptor closed but the control ones.
void setUpDescriptors(ChildPlan& p) {
    p.failFd = lift(p, p.failFd, true);
    p.readyFd = lift(p, p.readyFd, true);
    p.goFd = lift(p, p.goFd, true);
    const int in = lift(p, p.in, false), out = lift(p, p.out, false), err = lift(p, p.err, false);
    if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) fail(p, "dup2");
    int keep[3] = {p.failFd, p.readyFd, p.goFd};
    std::sort(keep, keep + 3);
    unsigned from = 3;
    for (int k : keep) {
        if (k < 0) continue;
        if (static_cast<unsigned>(k) > from) syscall(SYS_close_range, from, static_cast<unsigned>(k) - 1, 0);
        from = static_cast<unsigned>(k) + 1;
    }
    syscall(SYS_close_range, from, ~0u, 0);
}

void setLimit(const ChildPlan& p, int resource, rlim_t soft, rlim_t hard, const char* step) {
    const rlimit r{soft, hard};
    if (setrlimit(resource, &r) != 0) fail(p, step);
}

void setUpLimits(const ChildPlan& p) {
    const SandboxLimits& l = p.limits;
    setLimit(p, RLIMIT_CPU, static_cast<rlim_t>(l.cpuSeconds), static_cast<rlim_t>(l.cpuSeconds) + 1, "setrlimit(RLIMIT_CPU)");
    setLimit(p, RLIMIT_AS, static_cast<rlim_t>(l.memoryBytes), static_cast<rlim_t>(l.memoryBytes), "setrlimit(RLIMIT_AS)");
    setLimit(p, RLIMIT_FSIZE, static_cast<rlim_t>(l.fileBytes), static_cast<rlim_t>(l.fileBytes), "setrlimit(RLIMIT_FSIZE)");
    setLimit(p, RLIMIT_NOFILE, static_cast<rlim_t>(l.openFiles), static_cast<rlim_t>(l.openFiles), "setrlimit(RLIMIT_NOFILE)");
    setLimit(p, RLIMIT_CORE, 0, 0, "setrlimit(RLIMIT_CORE)");
}

// New user, network, IPC and UTS namespaces; the parent writes our uid and gid maps.
void setUpNamespaces(const ChildPlan& p) {
    if (unshare(CLONE_NEWUSER | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) != 0) fail(p, "unshare");
    const char ready = 'r';
    if (write(p.readyFd, &ready, 1) != 1) fail(p, "write(ready)");
    int parentErrno = 0;
    if (read(p.goFd, &parentErrno, sizeof parentErrno) != static_cast<ssize_t>(sizeof parentErrno)) fail(p, "read(go)");
    if (parentErrno != 0) {
        errno = parentErrno;
        fail(p, "uid_map");
    }
    close(p.readyFd);
    close(p.goFd);
    // The maps do not change our credentials: become the mapped uid and gid 0 (raw system
    // calls: glibc's wrappers would signal other threads, and this fork has none).
    syscall(SYS_setgroups, 0, nullptr); // refused where setgroups is denied: nothing to drop then
    if (syscall(SYS_setresgid, 0, 0, 0) != 0) fail(p, "setresgid");
    if (syscall(SYS_setresuid, 0, 0, 0) != 0) fail(p, "setresuid");
}

void addPathRule(const ChildPlan& p, int ruleset, const char* path, uint64_t dirRights, uint64_t handled) {
    const int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return;
        fail(p, "open(landlock path)");
    }
    struct stat st {};
    if (fstat(fd, &st) != 0) fail(p, "fstat(landlock path)");
    const uint64_t fileRights = kFsExecute | kFsWriteFile | kFsReadFile | kFsTruncate | kFsIoctlDev;
    LandlockPathBeneath rule;
    rule.allowed = (S_ISDIR(st.st_mode) ? dirRights : dirRights & fileRights) & handled;
    rule.parentFd = fd;
    if (syscall(SYS_landlock_add_rule, ruleset, kRulePathBeneath, &rule, 0) != 0) fail(p, "landlock_add_rule");
    close(fd);
}

// Reads where the plan says, writes only in the scratch folder; TCP and signals out of reach.
void setUpLandlock(const ChildPlan& p) {
    LandlockRulesetAttr attr;
    attr.handledFs = handledFs(p.landlockAbi);
    if (p.landlockAbi >= 4) attr.handledNet = kNetBindTcp | kNetConnectTcp;
    if (p.landlockAbi >= 6) attr.scoped = kScopeAbstractUnix | kScopeSignal;
    const size_t size = p.landlockAbi >= 6 ? 24 : p.landlockAbi >= 4 ? 16 : 8;
    const int ruleset = static_cast<int>(syscall(SYS_landlock_create_ruleset, &attr, size, 0));
    if (ruleset < 0) fail(p, "landlock_create_ruleset");
    for (size_t i = 0; i < p.readPathCount; ++i)
        addPathRule(p, ruleset, p.readPaths[i], kFsExecute | kFsReadFile | kFsReadDir, attr.handledFs);
    addPathRule(p, ruleset, p.scratch, attr.handledFs, attr.handledFs);
    if (syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) fail(p, "landlock_restrict_self");
    close(ruleset);
}

// Root (inside the namespace or, unsandboxed, outside) keeps no capability across exec.
void dropCapabilities(const ChildPlan& p) {
    if (geteuid() != 0) return;
    const unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                               SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED;
    if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) != 0) fail(p, "prctl(PR_SET_SECUREBITS)");
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2] = {};
    if (syscall(SYS_capset, &header, data) != 0) fail(p, "capset");
}

} // namespace

void runSandboxChild(const ChildPlan& planIn) {
    ChildPlan p = planIn; // a copy on the child's stack: the descriptors move
    if (setsid() < 0) fail(p, "setsid");
    setUpDescriptors(p);
    if (p.rlimits) setUpLimits(p);
    if (p.namespaces) setUpNamespaces(p);
    if (chdir(p.scratch) != 0) fail(p, "chdir(scratch)");
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail(p, "prctl(PR_SET_NO_NEW_PRIVS)");
    if (p.landlock) setUpLandlock(p);
    dropCapabilities(p);
    if (p.seccomp && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, p.filter, 0, 0) != 0) fail(p, "prctl(PR_SET_SECCOMP)");
    execve(p.program, p.argv, p.envp);
    fail(p, "execve");
}

int landlockAbi(std::string* why) {
    const long abi = syscall(SYS_landlock_create_ruleset, nullptr, 0, kLandlockVersion);
    if (abi >= 1) return static_cast<int>(abi);
    if (why) {
        *why = errno == ENOSYS    ? "the kernel has no Landlock (Linux 5.13+ with CONFIG_SECURITY_LANDLOCK)"
               : errno == EOPNOTSUPP ? "Landlock is disabled (add landlock to the lsm= boot parameter)"
                                    : std::string("landlock_create_ruleset: ") + std::strerror(errno);
    }
    return 0;
}

#ifndef MODEBENCH_HAVE_SECCOMP
const sock_fprog* seccompProgram(std::string* why) {
    if (why) *why = "this build has no libseccomp (install libseccomp-dev and rebuild)";
    return nullptr;
}
#else
namespace {

struct Filter {
    std::vector<sock_filter> code;
    sock_fprog program{};
    std::string error;
};

// Default allow; what could reach the network, start processes, or leave the sandbox fails.
std::string buildFilter(scmp_filter_ctx ctx) {
    const int eperm[] = {
        SCMP_SYS(socket), SCMP_SYS(socketpair), SCMP_SYS(fork), SCMP_SYS(vfork), SCMP_SYS(ptrace),
        SCMP_SYS(mount), SCMP_SYS(umount2), SCMP_SYS(pivot_root), SCMP_SYS(chroot), SCMP_SYS(unshare),
        SCMP_SYS(setns), SCMP_SYS(bpf), SCMP_SYS(perf_event_open), SCMP_SYS(keyctl), SCMP_SYS(add_key),
        SCMP_SYS(request_key), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev),
        SCMP_SYS(io_uring_setup), SCMP_SYS(io_uring_enter), SCMP_SYS(io_uring_register),
        SCMP_SYS(userfaultfd), SCMP_SYS(kexec_load), SCMP_SYS(kexec_file_load), SCMP_SYS(init_module),
        SCMP_SYS(finit_module), SCMP_SYS(delete_module), SCMP_SYS(open_by_handle_at),
        SCMP_SYS(name_to_handle_at), SCMP_SYS(fsopen), SCMP_SYS(fsmount), SCMP_SYS(fspick),
        SCMP_SYS(move_mount), SCMP_SYS(open_tree), SCMP_SYS(mount_setattr), SCMP_SYS(pidfd_getfd),
        SCMP_SYS(reboot), SCMP_SYS(swapon), SCMP_SYS(swapoff), SCMP_SYS(acct), SCMP_SYS(quotactl),
    };
    for (int nr : eperm)
        if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) != 0) return "seccomp_rule_add failed";
    // Threads (CLONE_THREAD) stay allowed; new processes do not.
    if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0)) != 0)
        return "seccomp_rule_add(clone) failed";
    // clone3's flags sit behind a pointer a filter cannot read: ENOSYS makes libc fall back to clone.
    if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0) != 0) return "seccomp_rule_add(clone3) failed";
    return {};
}

// The filter exported as BPF (into a memfd: libseccomp 2.5 exports to a descriptor).
void exportFilter(scmp_filter_ctx ctx, Filter& f) {
    const int fd = memfd_create("modebench-seccomp", MFD_CLOEXEC);
    if (fd < 0) {
        f.error = std::string("memfd_create: ") + std::strerror(errno);
        return;
    }
    if (seccomp_export_bpf(ctx, fd) != 0) f.error = "seccomp_export_bpf failed";
    const off_t size = lseek(fd, 0, SEEK_END);
    if (f.error.empty() && (size <= 0 || size % static_cast<off_t>(sizeof(sock_filter)) != 0)) f.error = "seccomp filter has an odd size";
    if (f.error.empty()) {
        f.code.resize(static_cast<size_t>(size) / sizeof(sock_filter));
        if (pread(fd, f.code.data(), static_cast<size_t>(size), 0) != size) f.error = "reading the seccomp filter failed";
    }
    close(fd);
    f.program.len = static_cast<unsigned short>(f.code.size());
    f.program.filter = f.code.data();
}

} // namespace

const sock_fprog* seccompProgram(std::string* why) {
    static Filter filter;
    static std::once_flag once;
    std::call_once(once, [] {
        if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
            filter.error = "the kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)";
            return;
        }
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
        if (!ctx) {
            filter.error = "seccomp_init failed";
            return;
        }
        filter.error = buildFilter(ctx);
        if (filter.error.empty()) exportFilter(ctx, filter);
        seccomp_release(ctx);
    });
    if (!filter.error.empty()) {
        if (why) *why = filter.error;
        return nullptr;
    }
    return &filter.program;
}
#endif

} // namespace mb::plugins::detail
