// Script plugins: a Python 3 script run out of process in a sandbox, speaking JSON lines.
#pragma once

#include "plugins/chain.h"

#include <memory>

namespace mb::plugins {

// {"type": "script", "path": "p.py", "sha256": "..."}: refuses (PluginError) a script
// whose file's hash differs from `sha256`, one not approved by hash, and, unless
// options.allowUnsandboxed, one the sandbox cannot be set up for.
std::shared_ptr<const PluginFactory> makeScriptPlugin(const nlohmann::json& config, const ChainOptions& options);

} // namespace mb::plugins
