// The UI thread's handle on the store thread ("mb-store-reader"): verbs with request ids, answers as signals.
#pragma once

#include "gui/store_worker.h"

#include <QThread>

namespace mb::gui {

// Owned by the UI thread. Each verb returns a request id at once; the answer arrives as
// one of the signals below (queued, on the UI thread) carrying that id, or failed().
// The destructor quits and waits for the thread.
class StoreClient final : public QObject {
    Q_OBJECT
public:
    explicit StoreClient(QObject* parent = nullptr);
    ~StoreClient() override;

    qint64 open(const QString& path);
    qint64 listRuns(const db::RunFilter& filter = {});
    qint64 loadRun(qint64 runId);
    qint64 openRun(qint64 runId); // StoreWorker::openRun
    qint64 renameRun(qint64 runId, const QString& name);
    qint64 setTags(qint64 runId, const QStringList& tags);
    qint64 deleteRun(qint64 runId, bool withSelections = false); // StoreWorker::deleteRun
    qint64 exportRun(qint64 runId, const QString& format, const QString& outPath);
    qint64 compareRuns(const std::vector<int64_t>& runIds);
    qint64 select(const SelectionRequest& request);
    qint64 listSelections();
    qint64 saveMigration(qint64 selectionId, const QString& migrationJson);
    qint64 buildReport(qint64 runId, qint64 selectionId = 0);
    qint64 exportReport(const lab::Report& report, const QString& format, const QString& outPath);
    qint64 listPluginApprovals();
    qint64 approvePlugin(const db::PluginApproval& approval);
    qint64 revokePlugin(const QString& sha256);
    qint64 auditScript(const QString& path, bool allowUnsandboxed = false);
    qint64 probeSandbox();

    QString path() const { return m_path; } // the last path opened successfully

signals:
    void opened(qint64 requestId, const QString& path);
    void runsListed(qint64 requestId, const mb::gui::RunListingList& runs);
    void runLoaded(qint64 requestId, const mb::db::StoredRun& run);
    void runOpened(qint64 requestId, const mb::db::StoredRun& run, const mb::gui::SummaryList& summaries);
    void runChanged(qint64 requestId, qint64 runId);
    void runDeleted(qint64 requestId, qint64 runId, const mb::gui::SelectionList& deletedSelections);
    void runHasSelections(qint64 requestId, qint64 runId, const mb::gui::SelectionList& selections);
    void runExported(qint64 requestId, const QString& path);
    void runsCompared(qint64 requestId, const mb::db::RunDiff& diff);
    void selected(qint64 requestId, const mb::lab::SelectionResult& result, qint64 selectionId);
    void selectionsListed(qint64 requestId, const mb::gui::SelectionList& selections);
    void migrationSaved(qint64 requestId, qint64 selectionId);
    void reportBuilt(qint64 requestId, const mb::lab::Report& report);
    void reportExported(qint64 requestId, const QString& path);
    void pluginApprovalsListed(qint64 requestId, const mb::gui::PluginApprovalList& approvals);
    void pluginApproved(qint64 requestId, const QString& sha256);
    void pluginRevoked(qint64 requestId, const QString& sha256, bool wasApproved);
    void scriptAudited(qint64 requestId, const mb::plugins::AuditReport& report);
    void sandboxProbed(qint64 requestId, const QString& description);
    void failed(qint64 requestId, const QString& message);

private:
    template <typename F> qint64 post(F work);

    QThread m_thread;
    StoreWorker* m_worker = nullptr;
    qint64 m_next = 1;
    QString m_path;
};

} // namespace mb::gui
