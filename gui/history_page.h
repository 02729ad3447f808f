// The History page: stored runs (sort, filter, tag, rename, delete), open one, compare two, export.
#pragma once

#include "gui/chart_data.h"
#include "gui/run_table_model.h"
#include "gui/store_client.h"
#include "gui/summary_table_model.h"

#include <QSortFilterProxyModel>
#include <QWidget>

class QLabel;
class QLineEdit;
class QPushButton;
class QTableView;
class QTableWidget;
class QTabWidget;

namespace mb::gui {

class BenchmarkCharts;

// A stored candidate as chart input: its requests, and the hit-rate and KV series stored
// with its summary (1-second points).
ChartInput chartInputOf(const db::StoredCandidate& candidate);

// UI thread. Talks to the store only through StoreClient; answers for requests it did not
// make, or older than the newest of their kind, are ignored. Widgets are named
// "history.<name>" (table, filter, refresh, open, rename, tag, delete, compare, export,
// status, tabs, charts, summary, diff).
class HistoryPage : public QWidget {
    Q_OBJECT
public:
    HistoryPage(StoreClient* store, QWidget* parent = nullptr);

    RunTableModel& model() { return m_model; }
    BenchmarkCharts* charts() { return m_charts; }
    void refresh();
    void openRun(qint64 runId);
    void compareRuns(qint64 first, qint64 second);

signals:
    void runOpened(qint64 runId);

private:
    std::vector<qint64> selectedRuns() const;
    const db::RunListing* listingOf(qint64 runId) const; // as last listed; null when not listed
    // Asks whether to delete run `runId` with the saved selections that cite it (named).
    bool confirmDeletingSelections(qint64 runId, const SelectionList& cited);
    void showRun(const db::StoredRun& run, const SummaryList& summaries); // one summary per candidate
    void showDiff(const db::RunDiff& diff);
    void setStatus(const QString& text);

    StoreClient* m_store;
    RunTableModel m_model;
    QSortFilterProxyModel m_proxy;
    SummaryTableModel m_summary;
    QTableView* m_table;
    QLineEdit* m_filter;
    QLabel* m_status;
    QTabWidget* m_tabs;
    BenchmarkCharts* m_charts;
    QTableWidget* m_diff;
    qint64 m_listRequest = 0, m_loadRequest = 0, m_compareRequest = 0;
    std::vector<qint64> m_mine; // edit and export requests this page made
};

} // namespace mb::gui
