// `modebench-cli plugins`: audit a script plugin, approve or revoke it by hash, list approvals, show the sandbox.
#include "cli/command_util.h"
#include "cli/plugin_options.h"

#include "db/plugin_approvals.h"
#include "plugins/audit.h"
#include "plugins/sandbox.h"

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <pwd.h>
#include <unistd.h>

namespace mb::cli {

namespace {

struct PluginsArgs {
    std::string file, sha256, by, db;
    bool json = false;
    PluginArgs plugin;
};

plugins::AuditReport audit(const PluginsArgs& a) {
    requireReadableFile(a.file, "script plugin");
    try {
        return plugins::auditScript(a.file, chainOptions("", a.plugin));
    } catch (const plugins::PluginError& e) {
        throw UsageError(e.what());
    }
}

// Who approves when --by is not given: the login name of this process's user.
std::string currentUser() {
    if (const char* u = std::getenv("USER"); u && *u) return u;
    if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_name) return pw->pw_name;
    return "uid " + std::to_string(getuid());
}

void runAudit(const PluginsArgs& a) {
    const plugins::AuditReport r = audit(a);
    if (a.json) printJson(Json(r.toJson()));
    else std::cout << r.toText();
}

void runApprove(const PluginsArgs& a) {
    const plugins::AuditReport r = audit(a);
    if (!r.parsed) throw UsageError(a.file + " does not parse as Python, so it cannot be approved: " + r.parseError);
    std::cerr << r.toText();
    db::PluginApproval approval;
    approval.sha256 = r.sha256;
    approval.path = std::filesystem::absolute(a.file).string();
    approval.approvedBy = a.by.empty() ? currentUser() : a.by;
    approval.auditJson = r.toJson().dump();
    const std::string path = databasePath(a.db);
    db::PluginApprovals(path).approve(approval);
    std::cout << "approved " << a.file << " (sha256 " << r.sha256 << ") by " << approval.approvedBy << " in " << path
              << "\nits chain entry: {\"type\": \"script\", \"path\": \"" << a.file << "\", \"sha256\": \"" << r.sha256
              << "\"}\n";
}

void runRevoke(const PluginsArgs& a) {
    const std::string path = databasePath(a.db);
    if (!db::PluginApprovals(path).revoke(a.sha256)) throw UsageError("no approval of " + a.sha256 + " in " + path);
    std::cout << "revoked " << a.sha256 << '\n';
}

void runList(const PluginsArgs& a) {
    const auto list = db::PluginApprovals(databasePath(a.db)).list();
    if (a.json) {
        Json j = Json::array();
        for (const auto& p : list)
            j.push_back({{"sha256", p.sha256}, {"path", p.path}, {"approved_by", p.approvedBy},
                         {"approved_at", p.approvedAt}, {"audit", Json::parse(p.auditJson, nullptr, false)}});
        printJson(j);
        return;
    }
    if (list.empty()) std::cout << "no approved script plugins\n";
    for (const auto& p : list) std::cout << p.sha256 << "  " << p.approvedAt << "  " << p.approvedBy << "  " << p.path << '\n';
}

void runSandbox(const PluginsArgs& a) {
    const plugins::SandboxInfo s = plugins::probeSandbox();
    if (a.json) printJson(Json(s.toJson()));
    else std::cout << s.describe() << '\n';
}

} // namespace

void addPluginsCommand(CLI::App& root) {
    auto a = std::make_shared<PluginsArgs>();
    CLI::App* cmd = root.add_subcommand("plugins", "Audit, approve and list script plugins (docs/PLUGINS.md)");
    cmd->require_subcommand(1);
    CLI::App* au = cmd->add_subcommand("audit", "Static report of a script plugin: imports, risky calls, sha256, sandbox");
    au->add_option("file", a->file, "The Python script")->required();
    au->add_flag("--json", a->json, "The report as JSON");
    au->add_option("--python", a->plugin.python, "Python 3 interpreter (default /usr/bin/python3)");
    au->callback([a] { runAudit(*a); });
    CLI::App* ap = cmd->add_subcommand("approve", "Audit a script plugin and approve it by its sha256 in the store");
    ap->add_option("file", a->file, "The Python script")->required();
    ap->add_option("--by", a->by, "Who approves (default: this user)");
    addDatabaseOption(*ap, a->db);
    ap->add_option("--python", a->plugin.python, "Python 3 interpreter (default /usr/bin/python3)");
    ap->callback([a] { runApprove(*a); });
    CLI::App* rv = cmd->add_subcommand("revoke", "Withdraw an approval");
    rv->add_option("sha256", a->sha256, "The approved hash")->required();
    addDatabaseOption(*rv, a->db);
    rv->callback([a] { runRevoke(*a); });
    CLI::App* ls = cmd->add_subcommand("list", "Approved script plugins: hash, when, by whom, where the file was");
    addDatabaseOption(*ls, a->db);
    ls->add_flag("--json", a->json, "As JSON, with each approval's audit");
    ls->callback([a] { runList(*a); });
    CLI::App* sb = cmd->add_subcommand("sandbox", "The sandbox layers script plugins get on this machine");
    sb->add_flag("--json", a->json, "As JSON");
    sb->callback([a] { runSandbox(*a); });
}

} // namespace mb::cli
