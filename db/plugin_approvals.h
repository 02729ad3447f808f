// Script plugins approved by hash (PRODUCT.md §11): who approved which sha256, when, having seen which audit.
#pragma once

#include "db/schema.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mb::db {

struct PluginApproval {
    std::string sha256;     // 64 lower-case hex digits: the file's bytes as audited
    std::string path;       // where the file was when approved (informative; the hash decides)
    std::string approvedBy;
    std::string approvedAt; // ISO-8601 UTC
    std::string auditJson;  // the audit report the approver saw
};

// The approvals in one store file (the run store's database). Each call opens the file,
// migrates it when needed, and closes it, so the checks a chain makes while loading see
// approvals made since by another process.
// What a run records of an approval: {approved_by, approved_at, verdict, findings: {high,
// medium, low}} from the audit the approver saw.
nlohmann::json approvalRecord(const PluginApproval& approval);

class PluginApprovals {
public:
    explicit PluginApprovals(std::string databasePath) : m_path(std::move(databasePath)) {}

    bool isApproved(const std::string& sha256) const;
    std::optional<PluginApproval> find(const std::string& sha256) const;
    // Records (or renews) an approval; throws DbError on a malformed hash or empty approver.
    void approve(const PluginApproval& approval) const;
    bool revoke(const std::string& sha256) const; // false when it was not approved
    std::vector<PluginApproval> list() const;     // newest first
    // approvalRecord of `sha256`'s approval, null when there is none (for ChainOptions).
    nlohmann::json recordOf(const std::string& sha256) const;

private:
    std::string m_path;
};

} // namespace mb::db
