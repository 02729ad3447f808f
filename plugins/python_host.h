// The Python side of script plugins: the interpreter, and the host program it runs.
#pragma once

#include "plugins/chain.h"
#include "plugins/sandbox.h"

#include <string>
#include <string_view>

namespace mb::plugins {

// options.python, else /usr/bin/python3, else python3 on PATH; an absolute path. Throws
// PluginError when none is found.
std::string resolvePython(const ChainOptions& options);

// `python -I -S -B -c program` in the sandbox (with the interpreter's own prefix readable
// when it lives outside /usr).
SandboxSpec pythonSandboxSpec(const std::string& python, const char* program, const SandboxLimits& limits,
                              bool allowUnsandboxed);

// The plugin host: reads {"name", "source_base64"} (the script's exact bytes), execs it in a
// fresh module namespace, answers {"ready": true}, then one reply line per call line
// (docs/PLUGINS.md, "The protocol").
extern const char* const kPluginHost;

// Standard base64 (the script's bytes travel in JSON, which must be UTF-8).
std::string base64(std::string_view bytes);

} // namespace mb::plugins
