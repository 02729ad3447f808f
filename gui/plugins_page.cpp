// PluginsPage: approvals listed, added and revoked through the store thread; audits run there too.
#include "gui/plugins_page.h"

#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>

#include <nlohmann/json.hpp>

#include <pwd.h>
#include <unistd.h>

namespace mb::gui {

QString currentUserName() {
    if (const QString u = qEnvironmentVariable("USER"); !u.isEmpty()) return u;
    if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_name) return QString::fromLocal8Bit(pw->pw_name);
    return QStringLiteral("uid %1").arg(getuid());
}

namespace {

QPlainTextEdit* readOnlyText(const QString& name, bool wrap = false) {
    auto* t = new QPlainTextEdit;
    t->setObjectName(name);
    t->setReadOnly(true);
    t->setLineWrapMode(wrap ? QPlainTextEdit::WidgetWidth : QPlainTextEdit::NoWrap);
    t->setFont(QFont(QStringLiteral("monospace")));
    return t;
}

QPushButton* button(const QString& text, const QString& name) {
    auto* b = new QPushButton(text);
    b->setObjectName(name);
    return b;
}

// A chain of built-ins only is described at once (cheap); script entries start a
// sandboxed process when loaded, so those wait for a run (or the candidate editor).
QString describeChainFile(const QString& path, const QByteArray& text) {
    try {
        const auto doc = nlohmann::json::parse(text.toStdString());
        if (doc.contains("plugins") && doc["plugins"].is_array())
            for (const auto& e : doc["plugins"])
                if (e.is_object() && e.value("type", std::string()) == "script")
                    return QObject::tr("holds script entries: the candidate editor describes it with the approvals");
        plugins::ChainOptions o;
        o.baseDir = QFileInfo(path).absolutePath().toStdString();
        return QString::fromStdString(plugins::Chain::fromJson(doc, o).describe());
    } catch (const std::exception& e) {
        return QString::fromUtf8(e.what());
    }
}

} // namespace

PluginsPage::PluginsPage(StoreClient* store, QWidget* parent) : QWidget(parent), m_store(store) {
    setObjectName(QStringLiteral("page.plugins"));
    auto* layout = new QVBoxLayout(this);

    auto* approvalsBox = new QGroupBox(tr("Approved script plugins (by sha256)"));
    auto* approvalsLayout = new QVBoxLayout(approvalsBox);
    m_table = new QTableWidget(0, 4);
    m_table->setObjectName(QStringLiteral("plugins.approvals"));
    m_table->setHorizontalHeaderLabels({tr("sha256"), tr("path"), tr("approved by"), tr("approved at")});
    m_table->horizontalHeader()->setSectionResizeMode(1, QHeaderView::Stretch);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    approvalsLayout->addWidget(m_table);
    auto* buttons = new QHBoxLayout;
    auto* refreshButton = button(tr("Refresh"), QStringLiteral("plugins.refresh"));
    auto* auditButton = button(tr("Audit script…"), QStringLiteral("plugins.audit"));
    m_approve = button(tr("Approve"), QStringLiteral("plugins.approve"));
    m_approve->setEnabled(false);
    m_approve->setToolTip(tr("Approve the audited script's sha256 (after a successful audit)"));
    m_revoke = button(tr("Revoke"), QStringLiteral("plugins.revoke"));
    m_revoke->setEnabled(false);
    for (QPushButton* b : {refreshButton, auditButton, m_approve, m_revoke}) buttons->addWidget(b);
    buttons->addStretch(1);
    approvalsLayout->addLayout(buttons);

    auto* auditBox = new QGroupBox(tr("Audit"));
    auto* auditLayout = new QVBoxLayout(auditBox);
    m_verdict = new QLabel(tr("No script audited yet."));
    m_verdict->setObjectName(QStringLiteral("plugins.verdict"));
    m_verdict->setWordWrap(true);
    m_report = readOnlyText(QStringLiteral("plugins.audit_report"));
    auditLayout->addWidget(m_verdict);
    auditLayout->addWidget(m_report, 1);

    auto* sandboxBox = new QGroupBox(tr("Sandbox on this machine"));
    auto* sandboxLayout = new QVBoxLayout(sandboxBox);
    m_sandbox = readOnlyText(QStringLiteral("plugins.sandbox"), true);
    m_sandbox->setPlainText(tr("probing…"));
    sandboxLayout->addWidget(m_sandbox);

    auto* chainBox = new QGroupBox(tr("Chain file (read-only)"));
    auto* chainLayout = new QVBoxLayout(chainBox);
    auto* chainRow = new QHBoxLayout;
    m_chain = new QLineEdit;
    m_chain->setObjectName(QStringLiteral("plugins.chain"));
    m_chain->setPlaceholderText(tr("a plugin chain JSON file (docs/PLUGINS.md)"));
    auto* chainBrowse = button(tr("Browse…"), QStringLiteral("plugins.chain_browse"));
    chainRow->addWidget(m_chain, 1);
    chainRow->addWidget(chainBrowse);
    chainLayout->addLayout(chainRow);
    m_chainText = readOnlyText(QStringLiteral("plugins.chain_text"), true);
    chainLayout->addWidget(m_chainText, 1);

    auto* lower = new QSplitter;
    lower->addWidget(auditBox);
    auto* right = new QSplitter(Qt::Vertical);
    right->addWidget(sandboxBox);
    right->addWidget(chainBox);
    lower->addWidget(right);
    lower->setStretchFactor(0, 3);
    lower->setStretchFactor(1, 2);
    auto* outer = new QSplitter(Qt::Vertical);
    outer->addWidget(approvalsBox);
    outer->addWidget(lower);
    outer->setStretchFactor(1, 2);
    layout->addWidget(outer, 1);
    m_status = new QLabel;
    m_status->setObjectName(QStringLiteral("plugins.status"));
    m_status->setWordWrap(true);
    layout->addWidget(m_status);

    connect(refreshButton, &QPushButton::clicked, this, &PluginsPage::refresh);
    connect(auditButton, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Script plugin"), QString(), tr("Python (*.py)"));
        if (!f.isEmpty()) auditFile(f);
    });
    connect(m_approve, &QPushButton::clicked, this, [this] {
        bool ok = false;
        const QString by = QInputDialog::getText(this, tr("Approve script"), tr("Approved by"), QLineEdit::Normal,
                                                 currentUserName(), &ok);
        if (ok && !by.trimmed().isEmpty()) approve(by.trimmed());
    });
    connect(m_revoke, &QPushButton::clicked, this, &PluginsPage::revokeSelected);
    connect(m_table, &QTableWidget::itemSelectionChanged, this,
            [this] { m_revoke->setEnabled(!m_table->selectedItems().isEmpty()); });
    connect(chainBrowse, &QPushButton::clicked, this, [this] {
        const QString f = QFileDialog::getOpenFileName(this, tr("Plugin chain"), QString(), tr("Plugin chains (*.json)"));
        if (!f.isEmpty()) showChain(f);
    });
    connect(m_chain, &QLineEdit::editingFinished, this, [this] { showChain(m_chain->text().trimmed()); });
    connectStore();
    m_sandboxRequest = m_store->probeSandbox();
}

void PluginsPage::connectStore() {
    connect(m_store, &StoreClient::pluginApprovalsListed, this, [this](qint64 id, const PluginApprovalList& list) {
        if (id == m_listRequest) showApprovals(list);
    });
    connect(m_store, &StoreClient::pluginApproved, this, [this](qint64 id, const QString& sha256) {
        if (id != m_changeRequest) return;
        setStatus(tr("Approved %1 (sha256 %2).").arg(QFileInfo(m_auditPath).fileName(), sha256), false);
        refresh();
    });
    connect(m_store, &StoreClient::pluginRevoked, this, [this](qint64 id, const QString& sha256, bool was) {
        if (id != m_changeRequest) return;
        setStatus(was ? tr("Revoked %1.").arg(sha256) : tr("%1 was not approved.").arg(sha256), !was);
        refresh();
    });
    connect(m_store, &StoreClient::scriptAudited, this, [this](qint64 id, const plugins::AuditReport& report) {
        if (id == m_auditRequest) showAudit(report);
    });
    connect(m_store, &StoreClient::sandboxProbed, this, [this](qint64 id, const QString& description) {
        if (id == m_sandboxRequest) m_sandbox->setPlainText(description);
    });
    connect(m_store, &StoreClient::failed, this, [this](qint64 id, const QString& message) {
        if (id == m_auditRequest) {
            m_verdict->setText(tr("The audit failed: %1").arg(message));
            m_verdict->setStyleSheet(QStringLiteral("color:#c0392b;font-weight:bold"));
            m_report->clear();
        } else if (id == m_sandboxRequest) {
            m_sandbox->setPlainText(message);
        } else if (id == m_listRequest || id == m_changeRequest) {
            setStatus(message, true);
        }
    });
}

void PluginsPage::refresh() {
    m_listRequest = m_store->listPluginApprovals();
}

void PluginsPage::auditFile(const QString& path) {
    m_audit.reset();
    m_auditPath = QFileInfo(path).absoluteFilePath();
    m_approve->setEnabled(false);
    m_verdict->setText(tr("Auditing %1…").arg(path));
    m_verdict->setStyleSheet({});
    m_report->clear();
    m_auditRequest = m_store->auditScript(path, m_allowUnsandboxed);
}

bool PluginsPage::canApprove() const {
    return m_audit && m_audit->parsed;
}

void PluginsPage::showAudit(const plugins::AuditReport& report) {
    m_audit = report;
    m_report->setPlainText(QString::fromStdString(report.toText()));
    const bool high = report.count("high") > 0;
    const QString color = !report.parsed ? QStringLiteral("#c0392b") : high ? QStringLiteral("#d35400")
                                         : report.findings.empty() ? QStringLiteral("#27ae60") : QStringLiteral("#b7950b");
    m_verdict->setText(QStringLiteral("%1: %2").arg(QFileInfo(m_auditPath).fileName(),
                                                   QString::fromStdString(report.verdict())));
    m_verdict->setStyleSheet(QStringLiteral("color:%1;font-weight:bold").arg(color));
    m_approve->setEnabled(canApprove());
    if (!report.parsed)
        setStatus(tr("It does not parse as Python, so it cannot be approved: %1")
                      .arg(QString::fromStdString(report.parseError)),
                  true);
}

void PluginsPage::approve(const QString& approvedBy) {
    if (!canApprove()) return;
    db::PluginApproval a;
    a.sha256 = m_audit->sha256;
    a.path = m_auditPath.toStdString();
    a.approvedBy = approvedBy.toStdString();
    a.auditJson = m_audit->toJson().dump();
    m_changeRequest = m_store->approvePlugin(a);
}

void PluginsPage::revokeSelected() {
    const int row = m_table->currentRow();
    if (row < 0 || row >= static_cast<int>(m_approvals.size())) return;
    m_changeRequest = m_store->revokePlugin(QString::fromStdString(m_approvals[static_cast<size_t>(row)].sha256));
}

void PluginsPage::showApprovals(const PluginApprovalList& list) {
    m_approvals = list;
    m_table->setRowCount(static_cast<int>(list.size()));
    for (int r = 0; r < static_cast<int>(list.size()); ++r) {
        const auto& a = list[static_cast<size_t>(r)];
        const QString sha = QString::fromStdString(a.sha256);
        auto* shaItem = new QTableWidgetItem(sha.left(16) + QStringLiteral("…"));
        shaItem->setToolTip(sha);
        m_table->setItem(r, 0, shaItem);
        m_table->setItem(r, 1, new QTableWidgetItem(QString::fromStdString(a.path)));
        m_table->setItem(r, 2, new QTableWidgetItem(QString::fromStdString(a.approvedBy)));
        m_table->setItem(r, 3, new QTableWidgetItem(QString::fromStdString(a.approvedAt)));
    }
    m_revoke->setEnabled(!m_table->selectedItems().isEmpty());
    emit approvalsListed();
}

void PluginsPage::showChain(const QString& path) {
    m_chain->setText(path);
    QFile f(path);
    if (path.isEmpty() || !f.open(QIODevice::ReadOnly)) {
        m_chainText->setPlainText(path.isEmpty() ? QString() : tr("cannot read %1").arg(path));
        return;
    }
    const QByteArray text = f.readAll();
    m_chainText->setPlainText(tr("# %1\n\n").arg(describeChainFile(path, text)) + QString::fromUtf8(text));
}

void PluginsPage::setStatus(const QString& text, bool error) {
    m_status->setText(text);
    m_status->setStyleSheet(error ? QStringLiteral("color:#c0392b") : QString());
}

} // namespace mb::gui
