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

class RequirementsForm;

// UI thread. The decision runs on the store thread (StoreClient::select), which also saves
// it; the page shows the recommendation, confidence, the four rules' trace, the scores and
// the monthly cost. Widgets are named "selection.<name>" (run, repeats, prices, decide,
// recommendation, confidence, trace, scores_chart, cost_chart, monitoring, status).
class SelectionPage : public QWidget {
    Q_OBJECT
public:
    explicit SelectionPage(StoreClient* store, QWidget* parent = nullptr);

    RequirementsForm* form() { return m_form; }
    void setPriceSheet(const QString& path);
    void refreshRuns();
    // Decides for the chosen run (or `runId` when > 0).
    void decide(qint64 runId = 0);
    const std::optional<lab::SelectionResult>& result() const { return m_result; }
    qint64 selectionId() const { return m_selectionId; }

signals:
    // A decision was saved; the Migration and Report pages follow it.
    void selectionSaved(qint64 selectionId, qint64 runId);

private:
    void show(const lab::SelectionResult& r);

    StoreClient* m_store;
    RequirementsForm* m_form;
    QComboBox* m_run;
    QLineEdit* m_repeats;
    QLineEdit* m_prices;
    QPushButton* m_decide;
    QLabel* m_recommendation;
    QLabel* m_confidence;
    QTableWidget* m_trace;
    QChartView* m_scores;
    QChartView* m_cost;
    QLabel* m_monitoring;
    QLabel* m_status;
    qint64 m_listRequest = 0, m_selectRequest = 0;
    qint64 m_selectionId = 0, m_runId = 0;
    std::optional<lab::SelectionResult> m_result;
};

} // namespace mb::gui
