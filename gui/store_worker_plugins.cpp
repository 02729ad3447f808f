// StoreWorker's plugin verbs: approvals by hash in the open database, script audits and the sandbox probe.
#include "gui/store_worker.h"

#include <stdexcept>

namespace mb::gui {

db::PluginApprovals StoreWorker::approvals() const {
    if (!m_store || m_path.isEmpty()) throw std::runtime_error("no database is open (choose one in Settings)");
    return db::PluginApprovals(m_path.toStdString());
}

void StoreWorker::listPluginApprovals(qint64 requestId) {
    try {
        emit pluginApprovalsListed(requestId, approvals().list());
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::approvePlugin(qint64 requestId, const db::PluginApproval& approval) {
    try {
        approvals().approve(approval);
        emit pluginApproved(requestId, QString::fromStdString(approval.sha256));
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::revokePlugin(qint64 requestId, const QString& sha256) {
    try {
        const bool was = approvals().revoke(sha256.toStdString());
        emit pluginRevoked(requestId, sha256, was);
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::auditScript(qint64 requestId, const QString& path, bool allowUnsandboxed) {
    try {
        plugins::ChainOptions o;
        o.allowUnsandboxed = allowUnsandboxed;
        emit scriptAudited(requestId, plugins::auditScript(path.toStdString(), o));
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

void StoreWorker::probeSandbox(qint64 requestId) {
    try {
        emit sandboxProbed(requestId, QString::fromStdString(plugins::probeSandbox().describe()));
    } catch (const std::exception& e) {
        emit failed(requestId, QString::fromUtf8(e.what()));
    }
}

} // namespace mb::gui
