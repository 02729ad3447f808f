// How much memory this process may use, for checks before large allocations.
#pragma once

#include <cstdint>

namespace mb::engine {

// Memory this process may use, in bytes: physical memory, or the cgroup (v2) memory.max
// when lower; 0 when neither can be read. Read once per process.
uint64_t memoryLimitBytes();

} // namespace mb::engine
