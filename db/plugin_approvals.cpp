// The plugin_approvals table: approve, revoke, look up and list script plugins by hash.
#include "db/plugin_approvals.h"

#include "db/sqlite.h"

#include <algorithm>

namespace mb::db {

namespace {

bool isSha256(const std::string& s) {
    return s.size() == 64 && std::all_of(s.begin(), s.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

PluginApproval rowOf(Statement& s) {
    return {s.columnText(0), s.columnText(1), s.columnText(2), s.columnText(3), s.columnText(4)};
}

constexpr const char* kColumns = "sha256, path, approved_by, approved_at, audit_json";

} // namespace

nlohmann::json approvalRecord(const PluginApproval& a) {
    const nlohmann::json audit = nlohmann::json::parse(a.auditJson, nullptr, false);
    nlohmann::json counts = {{"high", 0}, {"medium", 0}, {"low", 0}};
    std::string verdict;
    if (audit.is_object()) {
        verdict = audit.value("verdict", "");
        if (audit.contains("findings") && audit["findings"].is_array())
            for (const auto& f : audit["findings"])
                if (f.is_object() && f.contains("severity") && f["severity"].is_string() &&
                    counts.contains(f["severity"].get<std::string>()))
                    counts[f["severity"].get<std::string>()] = counts[f["severity"].get<std::string>()].get<int>() + 1;
    }
    return {{"approved_by", a.approvedBy}, {"approved_at", a.approvedAt}, {"verdict", verdict}, {"findings", counts}};
}

nlohmann::json PluginApprovals::recordOf(const std::string& sha256) const {
    const auto a = find(sha256);
    return a ? approvalRecord(*a) : nlohmann::json();
}

std::optional<PluginApproval> PluginApprovals::find(const std::string& sha256) const {
    Connection c = openDatabase(m_path);
    Statement s = c.prepare(std::string("SELECT ") + kColumns + " FROM plugin_approvals WHERE sha256 = ?");
    s.bind(1, sha256);
    if (!s.step()) return std::nullopt;
    return rowOf(s);
}

bool PluginApprovals::isApproved(const std::string& sha256) const {
    return isSha256(sha256) && find(sha256).has_value();
}

void PluginApprovals::approve(const PluginApproval& a) const {
    if (!isSha256(a.sha256)) throw DbError("plugin approval: '" + a.sha256 + "' is not a sha256 (64 lower-case hex digits)");
    if (a.approvedBy.empty()) throw DbError("plugin approval: say who approves it");
    Connection c = openDatabase(m_path);
    Statement s = c.prepare(std::string("INSERT OR REPLACE INTO plugin_approvals (") + kColumns +
                            ") VALUES (?, ?, ?, ?, ?)");
    s.bind(1, a.sha256).bind(2, a.path).bind(3, a.approvedBy);
    s.bind(4, a.approvedAt.empty() ? isoNowUtc() : a.approvedAt).bind(5, a.auditJson.empty() ? "{}" : a.auditJson);
    s.run();
}

bool PluginApprovals::revoke(const std::string& sha256) const {
    Connection c = openDatabase(m_path);
    Statement s = c.prepare("DELETE FROM plugin_approvals WHERE sha256 = ?");
    s.bind(1, sha256);
    s.run();
    return c.changes() > 0;
}

std::vector<PluginApproval> PluginApprovals::list() const {
    Connection c = openDatabase(m_path);
    Statement s = c.prepare(std::string("SELECT ") + kColumns + " FROM plugin_approvals ORDER BY approved_at DESC, sha256");
    std::vector<PluginApproval> out;
    while (s.step()) out.push_back(rowOf(s));
    return out;
}

} // namespace mb::db
