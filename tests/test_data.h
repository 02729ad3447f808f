// Locating ../shared/data in tests: skip with a message when absent, fail under CI.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace mb::test {

// The directory MODEBENCH_TEST_DATA_DIR names (set by CMake, overridable by the
// environment variable of the same name).
inline std::filesystem::path dataDir() {
    if (const char* env = std::getenv("MODEBENCH_TEST_DATA_DIR"); env && *env) return env;
    return MODEBENCH_TEST_DATA_DIR;
}

inline bool runningInCi() {
    const char* ci = std::getenv("CI");
    return ci && *ci && std::string(ci) != "0" && std::string(ci) != "false";
}

} // namespace mb::test

// Use at the top of a test: returns the path of `rel` inside the data directory, or
// skips (fails when CI is set) when it is missing.
#define MB_REQUIRE_DATA(var, rel)                                                              \
    const std::filesystem::path var = ::mb::test::dataDir() / (rel);                          \
    if (!std::filesystem::exists(var)) {                                                      \
        if (::mb::test::runningInCi())                                                        \
            FAIL() << "test data missing under CI: " << var.string();                         \
        GTEST_SKIP() << "test data not found: " << var.string()                               \
                     << " (set MODEBENCH_TEST_DATA_DIR or place ../shared/data beside the checkout)"; \
    }
