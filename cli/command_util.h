// Shared pieces of the modebench-cli commands: registration, errors, options and JSON output.
#pragma once

#include "engine/devices.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace mb::cli {

using Json = nlohmann::ordered_json;

// Bad input from the user (a missing file, an impossible value): main prints
// "modebench-cli: error: <what>" on one line and exits with code 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The command ran to its end but its result is a failure (e.g. compare: a candidate had no
// successful request): main prints the message and exits with code 1.
class RunFailed : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Each command file defines one of these; main.cpp calls them all.
void addGenerateCommand(CLI::App& root);
void addTokenizeCommand(CLI::App& root);
void addInfoCommand(CLI::App& root);
void addMakeModelCommand(CLI::App& root);
void addDevicesCommand(CLI::App& root);
void addCompareCommand(CLI::App& root);
void addQuantizeCommand(CLI::App& root);
void addBenchCommand(CLI::App& root);
void addPerplexityCommand(CLI::App& root);
void addComparePrecisionCommand(CLI::App& root);
void addRunsCommand(CLI::App& root);
void addServeCommand(CLI::App& root);
void addSelectCommand(CLI::App& root);
void addReportCommand(CLI::App& root);
void addMigrateCommand(CLI::App& root);
void addPluginsCommand(CLI::App& root);

// Default for --threads: the hardware threads this process may use.
int defaultThreads();
// Adds --threads N (1..1024) bound to `threads`, defaulting to defaultThreads().
void addThreadsOption(CLI::App& cmd, int& threads);
// Adds --device cpu|cuda|cuda:N bound to `device` (default cpu).
void addDeviceOption(CLI::App& cmd, std::string& device);
// The device --device asks for, checked against this machine: bad text or a CUDA index that
// does not exist is a UsageError; a CUDA request without a device (or without CUDA in the
// build) says so once on stderr and gives the CPU.
engine::Device resolveDeviceOption(const std::string& device);
// A finite number in [lo, hi] ((lo, hi] when `lowOpen`): NaN and infinities fail, and the
// message names the bounds as written ("must be a number in (0, 1e+06]"), unlike
// CLI::PositiveNumber, whose bound is DBL_MAX printed in full.
CLI::Validator numberIn(double lo, double hi, bool lowOpen = false);
inline CLI::Validator positiveUpTo(double hi) { return numberIn(0, hi, true); }
// --seed and every other seed option: a whole number in [0, 2^64). CLI11 would read "-1"
// into an unsigned seed as 2^64 - 1; this refuses it ("--seed: '-1' is not a seed (a whole
// number from 0)"). An int64_t option still refuses what is over its range when converting.
CLI::Validator seedNumber();
// Throws UsageError unless `path` names a readable regular file.
void requireReadableFile(const std::string& path, const std::string& what);

// The run store used when --db is not given: $XDG_DATA_HOME/modebench/modebench.db, or
// ~/.local/share/modebench/modebench.db when XDG_DATA_HOME is unset or not absolute.
std::string defaultDatabasePath();
// Adds --db PATH bound to `path` (left empty: the default).
CLI::Option* addDatabaseOption(CLI::App& cmd, std::string& path);
// `path` as given, or the default with its directory created (UsageError when it cannot be).
std::string databasePath(const std::string& path);

// Prints `j` on stdout followed by a newline (pretty when stdout is a terminal).
void printJson(const Json& j);
// Reads a whole text file; throws UsageError naming the path on failure.
std::string readTextFile(const std::string& path);

} // namespace mb::cli
