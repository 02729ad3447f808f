// Physical memory and the cgroup's memory.max, whichever is lower.
#include "engine/memory_limit.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace mb::engine {

namespace {
uint64_t readMemoryLimit() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
    uint64_t limit = pages > 0 && pageSize > 0
                         ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize)
                         : 0;
    std::ifstream in("/sys/fs/cgroup/memory.max"); // "max" or a byte count
    std::string v;
    if (in >> v && !v.empty() &&
        std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
        try {
            const uint64_t cgroup = std::stoull(v);
            if (cgroup > 0 && (limit == 0 || cgroup < limit)) limit = cgroup;
        } catch (const std::exception&) { // out of range: no limit worth reading
        }
    }
    return limit;
}
} // namespace

uint64_t memoryLimitBytes() {
    // Read once: every per-request KV cache checks it at admission, which must not open /sys.
    static const uint64_t limit = readMemoryLimit();
    return limit;
}

} // namespace mb::engine
