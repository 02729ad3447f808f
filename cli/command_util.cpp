// Helpers shared by the command files.
#include "cli/command_util.h"

#ifdef MODEBENCH_HAVE_STORE
#include "db/default_path.h"
#endif

#include "kernels/cpu/thread_pool.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace mb::cli {

int defaultThreads() { return kernels::ThreadPool::hardwareThreads(); }

void addThreadsOption(CLI::App& cmd, int& threads) {
    threads = defaultThreads();
    cmd.add_option("--threads,-t", threads, "Compute threads (default: all available)")
        ->check(CLI::Range(1, 1024))
        ->capture_default_str();
}

CLI::Validator numberIn(double lo, double hi, bool lowOpen) {
    char range[96];
    std::snprintf(range, sizeof range, "%c%g, %g]", lowOpen ? '(' : '[', lo, hi);
    const std::string bounds = range;
    return CLI::Validator(
        [lo, hi, lowOpen, bounds](std::string& text) -> std::string {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            const bool parsed = !text.empty() && end == text.c_str() + text.size();
            if (!parsed || !std::isfinite(v) || v > hi || (lowOpen ? v <= lo : v < lo))
                return "'" + text + "' is not a number in " + bounds;
            return {};
        },
        "NUMBER in " + bounds);
}

CLI::Validator seedNumber() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            uint64_t value = 0;
            const char* end = text.data() + text.size();
            const auto [at, ec] = std::from_chars(text.data(), end, value);
            if (text.empty() || ec != std::errc() || at != end) return "'" + text + "' is not a seed (a whole number from 0)";
            return {};
        },
        "SEED");
}

void addDeviceOption(CLI::App& cmd, std::string& device) {
    device = "cpu";
    cmd.add_option("--device", device, "Where the engine runs: cpu, cuda or cuda:N (see `devices`)")
        ->capture_default_str();
}

engine::Device resolveDeviceOption(const std::string& device) {
    engine::DeviceChoice choice;
    try {
        choice = engine::resolveDevice(device);
    } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--device: ") + e.what());
    }
    static bool said = false; // once per process, however many candidates ask
    if (!choice.note.empty() && !said) {
        std::cerr << "modebench-cli: note: " << choice.note << '\n';
        said = true;
    }
    return choice.device;
}

void requireReadableFile(const std::string& path, const std::string& what) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) throw UsageError(what + " not found: " + path);
    if (!std::filesystem::is_regular_file(path, ec)) throw UsageError(what + " is not a regular file: " + path);
    std::ifstream probe(path, std::ios::binary);
    if (!probe) throw UsageError(what + " cannot be read: " + path);
}

std::string defaultDatabasePath() {
#ifdef MODEBENCH_HAVE_STORE
    try {
        return db::defaultDatabasePath();
    } catch (const std::runtime_error& e) {
        throw UsageError(e.what());
    }
#else
    throw UsageError("this build has no run store (built with MODEBENCH_STORE=OFF)");
#endif
}

CLI::Option* addDatabaseOption(CLI::App& cmd, std::string& path) {
    return cmd.add_option("--db", path,
                          "Run store (SQLite); default $XDG_DATA_HOME/modebench/modebench.db or "
                          "~/.local/share/modebench/modebench.db");
}

std::string databasePath(const std::string& path) {
    if (!path.empty()) return path;
    const std::string def = defaultDatabasePath();
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(def).parent_path(), ec);
    if (ec) throw UsageError("cannot create " + std::filesystem::path(def).parent_path().string() + ": " + ec.message());
    return def;
}

void printJson(const Json& j) {
    // Token texts can hold partial UTF-8 sequences; replace rather than throw.
    const int indent = isatty(STDOUT_FILENO) ? 2 : -1;
    std::cout << j.dump(indent, ' ', false, Json::error_handler_t::replace) << '\n' << std::flush;
}

std::string readTextFile(const std::string& path) {
    requireReadableFile(path, "file");
    // One allocation of the file's size (a stream buffer and its copy once held three).
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    const std::streamoff size = in.tellg();
    if (!in || size < 0) throw UsageError("cannot read " + path);
    std::string text(static_cast<size_t>(size), '\0');
    in.seekg(0);
    in.read(text.data(), size);
    if (in.bad()) throw UsageError("cannot read " + path);
    text.resize(static_cast<size_t>(in.gcount()));
    return text;
}

} // namespace mb::cli
