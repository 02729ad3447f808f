// Helpers for the script plugin tests: the test scripts, approved factories, skipping without a sandbox.
#pragma once

#include "plugins/chain.h"
#include "plugins/sandbox.h"
#include "plugins/script_plugin.h"
#include "plugins/sha256.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace mb::plugins::test {

inline std::string scriptPath(const std::string& name) {
    return std::string(MODEBENCH_SOURCE_DIR) + "/tests/plugins/scripts/" + name;
}

// Every hash approved; Debian's interpreter (not whatever python3 is first on PATH).
inline ChainOptions approvingOptions() {
    ChainOptions o;
    o.approved = [](const std::string&) { return true; };
    o.python = "/usr/bin/python3";
    return o;
}

inline nlohmann::json scriptEntry(const std::string& name, nlohmann::json extra = nlohmann::json::object()) {
    nlohmann::json j = {{"type", "script"}, {"path", scriptPath(name)}, {"sha256", sha256File(scriptPath(name))}};
    j.update(extra);
    return j;
}

inline std::shared_ptr<const PluginFactory> approvedScript(const std::string& name,
                                                           nlohmann::json extra = nlohmann::json::object()) {
    return makeScriptPlugin(scriptEntry(name, std::move(extra)), approvingOptions());
}

// One call of a fresh instance: start, text(chunk), and end unless the text call ended.
inline std::string runOnce(const PluginFactory& f, const std::string& chunk) {
    auto p = f.make();
    p->start(RequestInfo{});
    Emit e = p->text(chunk);
    return e.end ? e.text : e.text + p->end().text;
}

// The message of the PluginError `f` throws, or "" when it throws none.
template <class F>
std::string errorOf(F&& f) {
    try {
        f();
    } catch (const PluginError& e) {
        return e.what();
    }
    return {};
}

} // namespace mb::plugins::test

// Skips (fails where the CI environment variable is set) when a sandbox layer is missing here.
#define MB_REQUIRE_SANDBOX()                                                                      \
    do {                                                                                          \
        const auto missing = ::mb::plugins::probeSandbox().missing();                              \
        if (!missing.empty()) {                                                                   \
            if (std::getenv("CI")) FAIL() << "the sandbox is incomplete here: " << missing[0];    \
            GTEST_SKIP() << "the sandbox is incomplete here: " << missing[0];                     \
        }                                                                                         \
    } while (0)
