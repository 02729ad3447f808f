// The audit of a script plugin: its hash, what it imports and calls, and the sandbox it gets.
#pragma once

#include "plugins/chain.h"
#include "plugins/sandbox.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace mb::plugins {

struct AuditImport {
    std::string module; // "os.path", "subprocess"
    int line = 0;
};

struct AuditCall {
    std::string name; // dotted, aliases resolved: "subprocess.run", "open", "<expr>.write_text"
    int line = 0;
};

// Something the reviewer should look at: category "process", "network", "filesystem",
// "environment", "dynamic", "native", "import" or "interface"; severity "high", "medium", "low".
struct AuditFinding {
    std::string category;
    std::string severity;
    std::string what; // "subprocess.run(...) starts a process"
    int line = 0;
};

struct AuditReport {
    std::filesystem::path script;
    std::string sha256;
    uintmax_t size = 0;
    bool parsed = false;
    std::string parseError; // when !parsed: the message, at parseLine
    int parseLine = 0;
    std::vector<AuditImport> imports;
    std::vector<AuditCall> calls;
    std::vector<AuditFinding> findings;
    std::map<std::string, bool> functions; // on_start, on_text, on_end: defined at top level
    SandboxInfo sandbox;                    // what it will get here
    SandboxLimits limits;

    int count(const std::string& severity) const;
    std::string verdict() const; // "3 findings (1 high): review before approving"
    nlohmann::json toJson() const;
    std::string toText() const;
};

// Reads and hashes the script and analyses it with Python's own `ast` module, run in the
// plugin sandbox (parsing executes nothing, but the file is untrusted input). Throws
// PluginError when the file cannot be read or the analyser cannot run.
AuditReport auditScript(const std::filesystem::path& script, const ChainOptions& options);

namespace detail {
// The analyser's answer for `source` (audit_analyzer.cpp).
nlohmann::json analyzeSource(const std::string& source, const std::string& name, const ChainOptions& options,
                             const SandboxLimits& limits);
} // namespace detail

} // namespace mb::plugins
