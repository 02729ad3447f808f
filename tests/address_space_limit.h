// Capping a test process's address space just above what it uses now (for death tests).
#pragma once

#include <sys/resource.h>

#include <cstddef>
#include <fstream>
#include <string>

namespace mb::test {

// Address-space limits mean nothing under a sanitizer that reserves terabytes of shadow.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kAddressSpaceLimitWorks = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
inline constexpr bool kAddressSpaceLimitWorks = false;
#else
inline constexpr bool kAddressSpaceLimitWorks = true;
#endif
#else
inline constexpr bool kAddressSpaceLimitWorks = true;
#endif

// This process's VmSize in bytes (from /proc/self/status), 0 when unreadable.
inline size_t virtualMemoryBytes() {
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);)
        if (line.rfind("VmSize:", 0) == 0) return std::stoull(line.substr(7)) * 1024; // "VmSize:  1234 kB"
    return 0;
}

// Sets RLIMIT_AS to the current VmSize plus `headroom` bytes: allocations and thread stacks
// beyond that fail. Call it in a death test's child; false when it could not be set.
inline bool limitAddressSpace(size_t headroom) {
    const size_t now = virtualMemoryBytes();
    if (now == 0) return false;
    const rlimit limit{now + headroom, now + headroom};
    return ::setrlimit(RLIMIT_AS, &limit) == 0;
}

} // namespace mb::test
