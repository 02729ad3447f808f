// Running the modebench-cli binary from tests: exit code, stdout and stderr.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace mb::test {

struct CliResult {
    int exitCode = -1;
    std::string out;
    std::string err;
};

inline std::string shellQuote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

inline std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Runs MODEBENCH_CLI_PATH with `args`; `env` is prepended as shell assignments
// (e.g. "XDG_DATA_HOME='/tmp/x'").
inline CliResult runCli(const std::vector<std::string>& args, const std::string& env = {}) {
    namespace fs = std::filesystem;
    const fs::path errFile = fs::temp_directory_path() / ("mb_cli_err_" + std::to_string(::getpid()));
    std::string cmd = env.empty() ? std::string() : env + " ";
    cmd += shellQuote(MODEBENCH_CLI_PATH);
    for (const auto& a : args) cmd.append(" ").append(shellQuote(a));
    cmd.append(" 2>").append(shellQuote(errFile.string()));
    CliResult r;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = ::pclose(p);
    r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = slurp(errFile);
    fs::remove(errFile);
    return r;
}

// One line on stderr naming `mentions`, exit code 2 (README: bad input).
inline void expectCleanError(const CliResult& r, const std::string& mentions) {
    EXPECT_EQ(r.exitCode, 2) << r.err;
    EXPECT_NE(r.err.find(mentions), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// A fresh directory under the temp directory, removed with the object.
class TempDir {
public:
    TempDir() : m_path(std::filesystem::temp_directory_path() / ("mb_cli_" + std::to_string(::getpid()))) {
        std::filesystem::create_directories(m_path);
    }
    ~TempDir() { std::filesystem::remove_all(m_path); }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::filesystem::path operator/(const std::string& name) const { return m_path / name; }
    const std::filesystem::path& path() const { return m_path; }

private:
    std::filesystem::path m_path;
};

} // namespace mb::test
