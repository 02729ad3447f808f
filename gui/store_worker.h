// The GUI's store thread: one RunStore connection for listing, loading, editing and exporting runs.
#pragma once

#include "db/plugin_approvals.h"
#include "db/run_store.h"
#include "lab/migration.h"
#include "lab/report.h"
#include "lab/selection.h"
#include "plugins/audit.h"

#include <QMetaType>
#include <QObject>
#include <QString>

#include <memory>
#include <optional>
#include <vector>

namespace mb::gui {

using RunListingList = std::vector<db::RunListing>;
using SelectionList = std::vector<db::StoredSelection>;
using SummaryList = std::vector<lab::RunSummary>;
using PluginApprovalList = std::vector<db::PluginApproval>;

// A stored candidate's summary as the History page shows it: recomputed from its requests
// (lab::summarize, O(n log n): call it off the UI thread), with the prefix-cache figures,
// KV peak, SLO attainment and precision A/B taken from the stored summary (engine counters).
lab::RunSummary summaryOf(const db::StoredCandidate& candidate);

// What the Selection page asks the store thread to decide.
struct SelectionRequest {
    std::vector<int64_t> runIds;   // one fast and one regular candidate each; several = repeats
    lab::Requirements requirements;
    std::optional<lab::PriceSheet> prices;
    QString baseDirectory;         // for a relative requirements prompt file
};

// Lives on the store thread (StoreClient moves it there) and owns the RunStore
// connection; every function runs there through a queued call, with the request id the
// client gave, and answers with one signal carrying values. Runs being written by a
// benchmark come through a separate writer (db::SqliteRunSink, its own thread and
// connection); WAL lets this connection read while that one writes.
class StoreWorker : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    void open(qint64 requestId, const QString& path);
    void listRuns(qint64 requestId, const db::RunFilter& filter);
    void loadRun(qint64 requestId, qint64 runId);
    // loadRun plus each candidate's summaryOf, computed here (the History page's view).
    void openRun(qint64 requestId, qint64 runId);
    void renameRun(qint64 requestId, qint64 runId, const QString& name);
    void setTags(qint64 requestId, qint64 runId, const QStringList& tags);
    // Without `withSelections`, a run that saved selections cite is kept and
    // runHasSelections names them (ask, then call again with it); with it, they go too.
    void deleteRun(qint64 requestId, qint64 runId, bool withSelections);
    // format "json" (the export document) or "csv" (one row per request).
    void exportRun(qint64 requestId, qint64 runId, const QString& format, const QString& outPath);
    void compareRuns(qint64 requestId, const std::vector<int64_t>& runIds);
    // Selection verbs (store_worker_selection.cpp). select() loads the runs with their
    // requests, applies lab::select and saves the selection; the bootstrap runs here too
    // (a few hundred replicates over stored requests: well under a second).
    void select(qint64 requestId, const SelectionRequest& request);
    void listSelections(qint64 requestId);
    void saveMigration(qint64 requestId, qint64 selectionId, const QString& migrationJson);
    // The report model of a run, or of a saved selection's runs with the selection.
    void buildReport(qint64 requestId, qint64 runId, qint64 selectionId);
    // Renders `report` ("html", "md", "json" or "csv") and writes it whole or not at all
    // (lab::writeFileAtomically): file work stays off the UI thread. Needs no database.
    void exportReport(qint64 requestId, const lab::Report& report, const QString& format, const QString& outPath);
    // Plugin verbs (store_worker_plugins.cpp): approvals in the open database
    // (db::PluginApprovals), and the audit of a script, which runs Python's `ast` in the
    // plugin sandbox (a fraction of a second to a few seconds: here, not on the UI
    // thread). `allowUnsandboxed`: audit where a sandbox layer is missing.
    void listPluginApprovals(qint64 requestId);
    void approvePlugin(qint64 requestId, const db::PluginApproval& approval); // approvedAt empty: now
    void revokePlugin(qint64 requestId, const QString& sha256);
    void auditScript(qint64 requestId, const QString& path, bool allowUnsandboxed);
    void probeSandbox(qint64 requestId); // plugins::probeSandbox (forks once per process)

signals:
    void opened(qint64 requestId, const QString& path);
    void runsListed(qint64 requestId, const mb::gui::RunListingList& runs);
    void runLoaded(qint64 requestId, const mb::db::StoredRun& run);
    void runOpened(qint64 requestId, const mb::db::StoredRun& run, const mb::gui::SummaryList& summaries);
    void runChanged(qint64 requestId, qint64 runId); // renamed, tagged or deleted
    // Deleted, with the saved selections (and their walk-throughs) that went with it.
    void runDeleted(qint64 requestId, qint64 runId, const mb::gui::SelectionList& deletedSelections);
    // Not deleted: these saved selections cite it (newest first).
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
    db::RunStore& store(); // throws when no database is open
    db::PluginApprovals approvals() const; // the open database's; throws when none is
    std::optional<db::RunStore> m_store;
    QString m_path; // the open database's file
};

} // namespace mb::gui

Q_DECLARE_METATYPE(mb::gui::RunListingList)
Q_DECLARE_METATYPE(mb::db::StoredRun)
Q_DECLARE_METATYPE(mb::db::RunDiff)
Q_DECLARE_METATYPE(mb::db::RunFilter)
Q_DECLARE_METATYPE(mb::gui::SelectionList)
Q_DECLARE_METATYPE(mb::gui::SummaryList)
Q_DECLARE_METATYPE(mb::gui::SelectionRequest)
Q_DECLARE_METATYPE(mb::lab::SelectionResult)
Q_DECLARE_METATYPE(mb::lab::Report)
Q_DECLARE_METATYPE(mb::gui::PluginApprovalList)
Q_DECLARE_METATYPE(mb::db::PluginApproval)
Q_DECLARE_METATYPE(mb::plugins::AuditReport)
