// The JSON-line exchange with a sandboxed script: deadlines, size limits, and clear failures.
#include "plugins/script_process.h"

#include "plugins/plugin.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>

namespace mb::plugins {

namespace {

constexpr size_t kStderrKeep = 4096;

int msLeft(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count(), 1 << 30));
}

std::string quoteStart(const std::string& s) {
    std::string shown = s.substr(0, 60);
    for (char& c : shown)
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    return "'" + shown + (s.size() > 60 ? "…'" : "'");
}

std::string lastLine(const std::string& text) {
    size_t end = text.find_last_not_of("\r\n \t");
    if (end == std::string::npos) return {};
    const size_t begin = text.rfind('\n', end);
    return text.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
}

} // namespace

ScriptProcess::ScriptProcess(const SandboxSpec& spec, std::string name) : m_proc(spec), m_name(std::move(name)) {
    for (int fd : {m_proc.stdinFd(), m_proc.stdoutFd(), m_proc.stderrFd()})
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

nlohmann::json ScriptProcess::call(const nlohmann::json& msg, const std::string& call, double timeoutMs,
                                   const std::string& expect) {
    const auto deadline = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(timeoutMs * 1000));
    send(msg.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", call, deadline, timeoutMs);
    const std::string line = receiveLine(call, deadline, timeoutMs);
    nlohmann::json reply = nlohmann::json::parse(line, nullptr, false);
    const bool shaped = reply.is_object() && (reply.contains("error") || (expect == "text" ? reply.contains("text") &&
                                                                               reply["text"].is_string()
                                                                         : reply.contains(expect)));
    if (!shaped) {
        m_proc.kill();
        throw PluginError(m_name + " answered something that is not a JSON line: " + quoteStart(line));
    }
    if (reply.contains("error")) {
        m_proc.kill();
        const std::string what = reply["error"].is_string() ? reply["error"].get<std::string>() : reply["error"].dump();
        throw PluginError(m_name + ": " + call + " raised " + what);
    }
    return reply;
}

// Writes the whole line, waiting for room in the socket (a large first line) up to the deadline.
void ScriptProcess::send(const std::string& line, const std::string& call, Clock::time_point deadline, double timeoutMs) {
    size_t done = 0;
    while (done < line.size()) {
        const ssize_t n = ::send(m_proc.stdinFd(), line.data() + done, line.size() - done, MSG_NOSIGNAL);
        if (n > 0) {
            done += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) exited(); // EPIPE: it is gone
        pollfd p{m_proc.stdinFd(), POLLOUT, 0};
        if (poll(&p, 1, msLeft(deadline)) == 0) timedOut(call, timeoutMs);
        drainStderr(0);
    }
}

std::string ScriptProcess::receiveLine(const std::string& call, Clock::time_point deadline, double timeoutMs) {
    char buf[65536];
    for (;;) {
        const size_t nl = m_stdout.find('\n');
        if (nl != std::string::npos) {
            std::string line = m_stdout.substr(0, nl);
            m_stdout.erase(0, nl + 1);
            return line;
        }
        if (m_stdout.size() > kMaxLine) {
            m_proc.kill();
            throw PluginError(m_name + " answered a line longer than 1 MiB: " + quoteStart(m_stdout));
        }
        pollfd p[2] = {{m_proc.stdoutFd(), POLLIN, 0}, {m_stderrOpen ? m_proc.stderrFd() : -1, POLLIN, 0}};
        const int left = msLeft(deadline);
        if (left == 0) timedOut(call, timeoutMs);
        if (poll(p, 2, left) < 0 && errno != EINTR) exited();
        if (p[1].revents) drainStderr(0);
        if (!p[0].revents) continue;
        const ssize_t n = read(m_proc.stdoutFd(), buf, sizeof buf);
        if (n == 0) exited();
        if (n > 0) m_stdout.append(buf, static_cast<size_t>(n));
        else if (errno != EAGAIN && errno != EINTR) exited();
    }
}

// Keeps the last few KiB of what it wrote to stderr (for the failure message).
void ScriptProcess::drainStderr(int waitMs) {
    char buf[8192];
    while (m_stderrOpen) {
        pollfd p{m_proc.stderrFd(), POLLIN, 0};
        if (poll(&p, 1, waitMs) <= 0) return;
        const ssize_t n = read(m_proc.stderrFd(), buf, sizeof buf);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) m_stderrOpen = false;
        if (n <= 0) return;
        m_stderr.append(buf, static_cast<size_t>(n));
        if (m_stderr.size() > kStderrKeep) m_stderr.erase(0, m_stderr.size() - kStderrKeep);
    }
}

void ScriptProcess::exited() {
    const std::string status = m_proc.waitStatus(500);
    drainStderr(50);
    const std::string last = lastLine(m_stderr);
    throw PluginError(m_name + " exited (" + status + ")" + (last.empty() ? "" : ": " + last));
}

void ScriptProcess::timedOut(const std::string& call, double timeoutMs) {
    m_proc.kill();
    throw PluginError(m_name + ": " + call + " timed out after " + std::to_string(std::llround(timeoutMs)) + " ms");
}

} // namespace mb::plugins
