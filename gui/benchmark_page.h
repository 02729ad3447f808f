// The Benchmark page: workload designer, candidates A and B, run/stop, progress, live charts, summary.
#pragma once

#include "gui/benchmark_controller.h"
#include "gui/summary_table_model.h"

#include <QTimer>
#include <QWidget>

class QCheckBox;
class QComboBox;
class QSpinBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace mb::gui {

class BenchmarkCharts;
class CandidateEditor;
class WorkloadDesigner;

// UI thread. The charts are redrawn by a 200 ms timer when new data arrived (5 times a
// second at most, whatever the token rate). Widgets are named "benchmark.<name>" (run,
// stop, progress, eta, summary, status, prime, slo_ttft, slo_e2e, precision_prompts, name,
// sweep, sweep_levels).
class BenchmarkPage : public QWidget {
    Q_OBJECT
public:
    BenchmarkPage(EngineBackend* engine, QWidget* parent = nullptr);

    BenchmarkController& controller() { return m_controller; }
    BenchmarkCharts* charts() { return m_charts; }
    WorkloadDesigner* designer() { return m_designer; }
    SummaryTableModel& summaryModel() { return m_summary; }
    void setModel(const QString& path);
    void setThreads(int threads);
    void setDevices(const QStringList& ids);
    void setDatabasePath(const QString& path); // also where the editors check plugin approvals
    void setAllowUnsandboxed(bool on) { m_allowUnsandboxed = on; } // script plugins (Settings)
    void run();

signals:
    void runSaved(qint64 runId);
    // A sweep stored its levels as these runs ("3, 4, 5"): the Selection page's Repeats.
    void sweepSaved(const QString& runIds);

private:
    void redraw();
    std::map<std::string, QString> names() const;

    BenchmarkController m_controller;
    SummaryTableModel m_summary;
    QString m_dbPath;
    bool m_allowUnsandboxed = false;
    WorkloadDesigner* m_designer;
    CandidateEditor* m_a;
    CandidateEditor* m_b;
    QCheckBox* m_prime;
    QDoubleSpinBox* m_sloTtft;
    QDoubleSpinBox* m_sloE2e;
    QSpinBox* m_precisionPrompts;
    QLineEdit* m_name;
    QComboBox* m_sweep;
    QLineEdit* m_sweepLevels;
    QPushButton* m_run;
    QPushButton* m_stop;
    QProgressBar* m_progress;
    QLabel* m_eta;
    QLabel* m_status;
    BenchmarkCharts* m_charts;
    QTimer m_redraw;
    bool m_dirty = false;
};

} // namespace mb::gui
