// llama.cpp's server as a test peer: started from $LLAMA_CPP_BIN on a free loopback port, stopped with the object.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace mb::test {

// $LLAMA_CPP_BIN/llama-server, or empty when LLAMA_CPP_BIN is unset or lacks it.
inline std::string llamaServerPath() {
    const char* bin = std::getenv("LLAMA_CPP_BIN");
    if (!bin || !*bin) return {};
    const std::filesystem::path p = std::filesystem::path(bin) / "llama-server";
    return std::filesystem::exists(p) ? p.string() : std::string();
}

// Skips the test, saying why, where no llama.cpp server is available (CI has none).
#define MB_REQUIRE_LLAMA_SERVER(var)                                                                        \
    const std::string var = ::mb::test::llamaServerPath();                                                  \
    if (var.empty())                                                                                        \
    GTEST_SKIP() << "LLAMA_CPP_BIN is unset or has no llama-server: the peer tests need llama.cpp's server " \
                    "built from its public source (docs/REMOTE.md)"

// A port nobody listens on now (bound, read, released).
inline int freeLoopbackPort() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

class LlamaServer {
public:
    // Starts `server` on `model` with extra flags; waits (up to 60 s) for /health to say ok.
    LlamaServer(const std::string& server, const std::string& model, std::vector<std::string> flags)
        : port(freeLoopbackPort()) {
        std::vector<std::string> args = {server, "-m", model, "--host", "127.0.0.1", "--port", std::to_string(port),
                                         "-t", "2", "--log-disable"};
        args.insert(args.end(), flags.begin(), flags.end());
        std::vector<char*> argv;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        posix_spawn_file_actions_t io;
        posix_spawn_file_actions_init(&io);
        posix_spawn_file_actions_addopen(&io, 1, "/dev/null", O_WRONLY, 0);
        posix_spawn_file_actions_addopen(&io, 2, "/dev/null", O_WRONLY, 0);
        if (posix_spawn(&m_pid, server.c_str(), &io, nullptr, argv.data(), environ) != 0) m_pid = -1;
        posix_spawn_file_actions_destroy(&io);
        httplib::Client c("127.0.0.1", port);
        for (int i = 0; i < 600 && m_pid > 0 && !ready; ++i) {
            const auto r = c.Get("/health");
            ready = r && r->status == 200;
            if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
    }
    ~LlamaServer() {
        if (m_pid <= 0) return;
        ::kill(m_pid, SIGTERM);
        int status = 0;
        ::waitpid(m_pid, &status, 0);
    }
    LlamaServer(const LlamaServer&) = delete;
    LlamaServer& operator=(const LlamaServer&) = delete;

    std::string url() const { return "remote:http://127.0.0.1:" + std::to_string(port) + "/v1"; }

    const int port;
    bool ready = false;

private:
    pid_t m_pid = -1;
};

} // namespace mb::test
