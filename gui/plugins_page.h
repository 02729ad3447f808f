// The Plugins page: approved script plugins, auditing and approving a script, revoking, the sandbox and a chain file's text.
#pragma once

#include "gui/store_client.h"

#include <QWidget>

#include <optional>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableWidget;

namespace mb::gui {

// UI thread. Everything that touches the database or runs Python (the audit, the sandbox
// probe) goes through the StoreClient's thread; answers for other request ids are
// ignored. Widgets are named "plugins.<name>": approvals (a table, newest first: sha256,
// path, approved by, approved at), refresh, audit, approve, revoke, audit_report, verdict,
// sandbox, chain, chain_browse, chain_text, status.
class PluginsPage : public QWidget {
    Q_OBJECT
public:
    explicit PluginsPage(StoreClient* store, QWidget* parent = nullptr);

    void refresh();                        // the approvals of the open store
    void auditFile(const QString& path);   // the "Audit script…" button without its dialog
    void approve(const QString& approvedBy); // the audited script (the button asks who)
    void revokeSelected();
    void showChain(const QString& path);   // a chain file's text, read-only
    void setAllowUnsandboxed(bool on) { m_allowUnsandboxed = on; } // audits where a layer is missing (Settings)
    bool canApprove() const;
    const std::optional<plugins::AuditReport>& audit() const { return m_audit; }
    const PluginApprovalList& approvals() const { return m_approvals; }

signals:
    void approvalsListed(); // after refresh(), and after each approval or revocation

private:
    void showApprovals(const PluginApprovalList& list);
    void showAudit(const plugins::AuditReport& report);
    void setStatus(const QString& text, bool error);
    void connectStore();

    StoreClient* m_store;
    bool m_allowUnsandboxed = false;
    PluginApprovalList m_approvals;
    std::optional<plugins::AuditReport> m_audit;
    QString m_auditPath;
    qint64 m_listRequest = 0, m_auditRequest = 0, m_changeRequest = 0, m_sandboxRequest = 0;
    QTableWidget* m_table;
    QPushButton* m_approve;
    QPushButton* m_revoke;
    QPlainTextEdit* m_report;
    QLabel* m_verdict;
    QPlainTextEdit* m_sandbox;
    QLineEdit* m_chain;
    QPlainTextEdit* m_chainText;
    QLabel* m_status;
};

// Who approves by default: the login name of this process's user.
QString currentUserName();

} // namespace mb::gui
