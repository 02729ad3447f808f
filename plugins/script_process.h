// One sandboxed Python speaking JSON lines: a line out, one reply line back by a deadline.
#pragma once

#include "plugins/sandbox.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>

namespace mb::plugins {

class ScriptProcess {
public:
    // `name` starts every error: "script p.py", "audit of p.py". Throws PluginError.
    ScriptProcess(const SandboxSpec& spec, std::string name);

    // Sends `msg` and waits for the reply, both within `timeoutMs`. `call` names the call in
    // errors ("on_text"). The reply is a JSON object with the key `expect` ("text": a
    // string); {"error": "..."} throws "script p.py: on_text raised ValueError: ...". Any
    // failure kills the process.
    nlohmann::json call(const nlohmann::json& msg, const std::string& call, double timeoutMs,
                        const std::string& expect = "text");

    const SandboxedProcess& process() const { return m_proc; }
    void stop() { m_proc.kill(); }

    static constexpr size_t kMaxLine = 1 << 20; // 1 MiB per reply line

private:
    using Clock = std::chrono::steady_clock;
    void send(const std::string& line, const std::string& call, Clock::time_point deadline, double timeoutMs);
    std::string receiveLine(const std::string& call, Clock::time_point deadline, double timeoutMs);
    void drainStderr(int waitMs);
    [[noreturn]] void exited();
    [[noreturn]] void timedOut(const std::string& call, double timeoutMs);
    SandboxedProcess m_proc;
    std::string m_name;
    std::string m_stdout; // bytes after the last reply line
    std::string m_stderr; // its last few KiB of stderr
    bool m_stderrOpen = true;
};

} // namespace mb::plugins
