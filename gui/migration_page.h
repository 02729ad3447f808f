// The Migration page: the executable flowchart (PRODUCT.md §7), each node's step, the checklist.
#pragma once

#include "gui/benchmark_controller.h"
#include "gui/store_client.h"
#include "lab/migration.h"

#include <QWidget>

#include <optional>

class QCheckBox;
class QChartView;
class QLabel;
class QLineEdit;
class QPushButton;

namespace mb::gui {

class BenchmarkCharts;
class FlowchartWidget;

// UI thread. Follows the selection saved on the Selection page: loads its run (the fast
// candidate's model, profile and workload), starts the walk-through, and runs each node's
// step for real: A scans a prompt file (engine thread) or, without one, takes the run's
// own prompt lengths; D warms a fast session up, priming the prompt file or else the run's
// own prefixes (or prompts), and tries a model update meanwhile; F replays the run's own
// requests (lab::replayRun, engine thread) on the fast candidate alone with live charts;
// G checks the SLOs; I proposes batching knobs and applying them loops to F.
// Following another selection (or the same one again) while a step runs abandons that
// step: its result, arriving later, is dropped by job id. A step that cannot be taken is
// shown in the status line, never thrown out of a slot.
// Roll back is offered at F, G and I. The state is saved with the selection after every
// step. Widgets are named "migration.<name>" (flowchart, step, action, apply, rollback,
// note, histogram, streams, warmup_plan, rollback_plan, status).
class MigrationPage : public QWidget {
    Q_OBJECT
public:
    MigrationPage(EngineBackend* engine, StoreClient* store, QWidget* parent = nullptr);

    // The selection to walk (from the Selection page).
    void follow(qint64 selectionId, qint64 runId, const lab::SelectionResult& result,
                const lab::Requirements& requirements);
    const std::optional<lab::MigrationState>& state() const { return m_state; }
    void setThreads(int threads) { m_threads = threads; }
    // Runs the current node's step (what the action button does); `promptFile` for node A.
    void runStep(const QString& promptFile = {});

signals:
    void stateChanged();

private:
    void refresh();
    void save();
    void assessPrompts(const std::vector<int64_t>& lengths); // A's result: histogram, then B
    // Runs a transition of the walk-through; a MigrationError (or any error) goes to fail().
    template <typename F> void transition(F&& step);
    void fail(const QString& message);
    QString fastProfileText() const; // the fast profile with the walk-through's batching knobs

    EngineBackend* m_engine;
    StoreClient* m_store;
    BenchmarkController m_monitor;
    qint64 m_selectionId = 0, m_runId = 0;
    lab::SelectionResult m_result;
    lab::Requirements m_requirements;
    std::optional<lab::MigrationState> m_state;
    std::shared_ptr<const lab::StoredRun> m_run; // handed to the engine thread for D and F
    QString m_modelPath, m_fastProfileJson;
    int m_threads = 1;
    qint64 m_loadRequest = 0, m_job = 0;
    qint64 m_monitorJob = 0; // the F pass of this walk-through (0: none, or abandoned)
    bool m_abandoned = false; // follow() abandoned a running step (said in the status)
    std::vector<qint64> m_saves; // saveMigration requests not yet answered
    FlowchartWidget* m_flowchart;
    QLabel* m_step;
    QLabel* m_note;
    QPushButton* m_action;
    QPushButton* m_apply;
    QPushButton* m_rollback;
    QChartView* m_histogram;
    BenchmarkCharts* m_charts;
    QCheckBox* m_streams;
    QLineEdit* m_warmupPlan;
    QLineEdit* m_rollbackPlan;
    QLabel* m_monitoringMetrics;
    QLabel* m_status;
};

} // namespace mb::gui
