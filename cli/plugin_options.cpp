// Plugin-chain options and loading a chain file against the run store's approvals.
#include "cli/plugin_options.h"

#include "cli/command_util.h"
#ifdef MODEBENCH_HAVE_STORE
#include "db/plugin_approvals.h"
#endif

namespace mb::cli {

void addPluginOptions(CLI::App& cmd, PluginArgs& args, bool perCandidate) {
    cmd.add_option("--plugins", args.both,
                   "Output plugin chain (JSON, docs/PLUGINS.md) applied to every response")
        ->check(CLI::ExistingFile);
    if (perCandidate) {
        cmd.add_option("--a-plugins", args.a, "Plugin chain for candidate A only (overrides --plugins)")
            ->check(CLI::ExistingFile);
        cmd.add_option("--b-plugins", args.b, "Plugin chain for candidate B only (overrides --plugins); "
                                              "--a X --b X --b-plugins F is a with/without A/B")
            ->check(CLI::ExistingFile);
    }
    cmd.add_flag("--allow-unsandboxed", args.allowUnsandboxed,
                 "Run script plugins even where a sandbox layer is missing (recorded with the run)");
    cmd.add_option("--python", args.python, "Python 3 interpreter for script plugins (default /usr/bin/python3)");
}

plugins::ChainOptions chainOptions(const std::string& dbPath, const PluginArgs& args) {
    plugins::ChainOptions o;
    o.allowUnsandboxed = args.allowUnsandboxed;
    o.python = args.python;
#ifdef MODEBENCH_HAVE_STORE
    if (!dbPath.empty()) {
        const db::PluginApprovals approvals(dbPath);
        o.approved = [approvals](const std::string& sha256) { return approvals.isApproved(sha256); };
        o.approvalRecord = [approvals](const std::string& sha256) { return approvals.recordOf(sha256); };
    }
#else
    (void)dbPath;
#endif
    return o;
}

std::shared_ptr<const plugins::Chain> loadPluginChain(const std::string& file, const std::string& dbPath,
                                                      const PluginArgs& args) {
    if (file.empty()) return nullptr;
    try {
        return std::make_shared<const plugins::Chain>(plugins::Chain::load(file, chainOptions(dbPath, args)));
    } catch (const plugins::PluginError& e) {
        throw UsageError(e.what());
    } catch (const std::exception& e) { // the store: a broken database file
        throw UsageError("plugins " + file + ": " + e.what());
    }
}

} // namespace mb::cli
