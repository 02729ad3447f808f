// The plugin-chain options commands share (--plugins, --a-plugins, --b-plugins, --allow-unsandboxed) and loading a chain with the store's approvals.
#pragma once

#include "plugins/chain.h"

#include <CLI/CLI.hpp>

#include <memory>
#include <string>

namespace mb::cli {

struct PluginArgs {
    std::string both, a, b;        // chain files: for every candidate, for A, for B
    bool allowUnsandboxed = false; // run script plugins where the sandbox is incomplete
    std::string python;            // the interpreter for script plugins ("" = /usr/bin/python3)
};

// --plugins FILE (and, with `perCandidate`, --a-plugins / --b-plugins), --allow-unsandboxed, --python.
void addPluginOptions(CLI::App& cmd, PluginArgs& args, bool perCandidate);

// How chains load here: scripts approved in the store at `dbPath` (none without a store).
plugins::ChainOptions chainOptions(const std::string& dbPath, const PluginArgs& args);

// The chain in `file`, or null when `file` is empty; UsageError naming the file on failure.
std::shared_ptr<const plugins::Chain> loadPluginChain(const std::string& file, const std::string& dbPath,
                                                      const PluginArgs& args);

// The chain for candidate `label` ("a" or "b"): its own file, else --plugins.
inline const std::string& chainFileFor(const PluginArgs& args, const std::string& label) {
    const std::string& own = label == "a" ? args.a : args.b;
    return own.empty() ? args.both : own;
}

} // namespace mb::cli
