// Inside the sandbox's fork: the plan prepared before fork, and the child's setup up to exec.
#pragma once

#include "plugins/sandbox.h"

#include <linux/filter.h>

#include <string>
#include <vector>

namespace mb::plugins::detail {

// Everything the child needs, allocated by the parent before fork: between fork and exec
// the child only makes system calls (no malloc, no locks).
struct ChildPlan {
    const char* program = nullptr;
    char* const* argv = nullptr;
    char* const* envp = nullptr;
    int in = -1, out = -1, err = -1;   // become 0, 1, 2
    int failFd = -1;                   // CLOEXEC: a ChildFailure arrives here if setup fails
    int readyFd = -1, goFd = -1;       // namespaces: "unshared" to the parent, "ids mapped" back
    bool rlimits = false, namespaces = false, landlock = false, seccomp = false;
    SandboxLimits limits;
    const char* scratch = nullptr;
    const char* const* readPaths = nullptr; // folders readable and executable
    size_t readPathCount = 0;
    int landlockAbi = 0;
    const sock_fprog* filter = nullptr;
};

// What the child writes to failFd before it exits with status 127.
struct ChildFailure {
    char step[56] = {};
    int error = 0; // errno
};

[[noreturn]] void runSandboxChild(const ChildPlan& plan);

// The highest Landlock ABI the kernel offers (0: none), and why not in `why`.
int landlockAbi(std::string* why);

// The seccomp filter as a BPF program, built once (libseccomp); nullptr and `why` when
// this build or kernel has none.
const sock_fprog* seccompProgram(std::string* why);

} // namespace mb::plugins::detail
