// The Selection page: choose runs, state requirements and prices, get the recommendation with its trace.
#pragma once

#include "gui/store_client.h"

#include <QWidget>

#include <optional>

class QChartView;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTableWidget;

namespace mb::gui {

class ExecutiveSummaryView;
class RequirementsForm;

// UI thread. The decision runs on the store thread (StoreClient::select), which also saves
// it; the page shows the executive summary first (lab::executiveSummary, as the report opens:
// verdict, confidence with its basis, the deciding numbers, what would change the decision),
// then the headline, warnings, the four rules' trace, the scores and the monthly cost.
// "Export deployment…" writes the chosen candidate's launch settings (lab/deploy_export.h)
// into a directory. Widgets are named "selection.<name>" (run, repeats, prices, decide,
// export_deploy, summary, recommendation, warnings, trace, scores_chart, cost_chart,
// monitoring, status); the summary's own children "summary.<name>" (ExecutiveSummaryView).
class SelectionPage : public QWidget {
    Q_OBJECT
public:
    explicit SelectionPage(StoreClient* store, QWidget* parent = nullptr);

    RequirementsForm* form() { return m_form; }
    void setPriceSheet(const QString& path);
    // The Repeats field: more run ids of the same two candidates, or a load sweep's ("12, 15").
    void setRepeats(const QString& ids);
    void refreshRuns();
    // Decides for the chosen run (or `runId` when > 0).
    void decide(qint64 runId = 0);
    const std::optional<lab::SelectionResult>& result() const { return m_result; }
    qint64 selectionId() const { return m_selectionId; }
    // Writes the deployment files of the decision shown (the recommendation, else `candidate`)
    // into `dir`, created when missing: the run's stored candidates are read on the store
    // thread, the few small files written here, each atomically. deploymentExported(dir, paths)
    // or deploymentExportFailed(message) follows, also shown in the status line. The button
    // asks for the directory (and, without a recommendation, for the candidate) and calls this.
    void exportDeployment(const QString& dir, std::optional<lab::Mode> candidate = std::nullopt);

signals:
    // A decision was saved; the Migration and Report pages follow it.
    void selectionSaved(qint64 selectionId, qint64 runId);
    void deploymentExported(const QString& dir, const QStringList& paths);
    void deploymentExportFailed(const QString& message);

private:
    void show(const lab::SelectionResult& r);
    void askAndExportDeployment();
    void writeDeployment(const lab::StoredRun& run);
    void failExport(const QString& message);

    StoreClient* m_store;
    RequirementsForm* m_form;
    QComboBox* m_run;
    QLineEdit* m_repeats;
    QLineEdit* m_prices;
    QPushButton* m_decide;
    QPushButton* m_exportDeploy;
    ExecutiveSummaryView* m_summary;
    QLabel* m_recommendation;
    QLabel* m_capacity = nullptr;
    QLabel* m_warnings;
    QTableWidget* m_trace;
    QChartView* m_scores;
    QChartView* m_cost;
    QLabel* m_monitoring;
    QLabel* m_status;
    qint64 m_listRequest = 0, m_selectRequest = 0, m_exportRequest = 0;
    qint64 m_selectionId = 0, m_runId = 0;
    qint64 m_resultRunId = 0; // the run m_result was decided on
    std::optional<lab::SelectionResult> m_result;
    QString m_exportDir;
    std::optional<lab::Mode> m_exportCandidate;
};

} // namespace mb::gui
