// Drives one benchmark at a time through an EngineBackend and keeps its live data for the page.
#pragma once

#include "gui/chart_data.h"
#include "gui/engine_backend.h"

#include <QElapsedTimer>
#include <QObject>

#include <map>
#include <string>

namespace mb::gui {

// UI thread. start() hands a job to the backend; the backend's signals for that job id
// are folded into per-candidate chart inputs; signals of an older job are dropped.
// stop() sets the job's cancel flag (the engine cancels what is in flight and the run is
// saved as interrupted).
class BenchmarkController : public QObject {
    Q_OBJECT
public:
    explicit BenchmarkController(EngineBackend* engine, QObject* parent = nullptr);

    // Returns the job id. Any running job is cancelled and forgotten first.
    qint64 start(BenchmarkJob job);
    void stop();

    bool running() const { return m_running; }
    qint64 jobId() const { return m_jobId; }
    const std::map<std::string, ChartInput>& inputs() const { return m_inputs; }
    const JobOutcome& outcome() const { return m_outcome; }
    // Finished measured requests per candidate, of how many; and seconds left (estimate).
    qint64 done() const;
    qint64 total() const;
    double etaSeconds() const { return m_etaS; }

signals:
    void runningChanged(bool running);
    void progressChanged(qint64 done, qint64 total, double etaSeconds);
    // The precision A/B after the run: candidate label, prompts done and in all.
    void precisionProgress(const QString& label, qint64 done, qint64 total);
    // A sweep's level starts (the charts and progress restart for it): "sweep: concurrency 4 (level 3 of 7)".
    void sweepLevelStarted(const QString& line);
    void dataChanged(); // new records or samples: the charts are stale
    void finished(const mb::gui::JobOutcome& outcome);
    void failed(const QString& message);

private:
    void setRunning(bool r);

    EngineBackend* m_engine;
    qint64 m_jobId = 0;
    bool m_running = false;
    CancelFlag m_cancel;
    std::map<std::string, ChartInput> m_inputs;
    std::map<std::string, std::pair<qint64, qint64>> m_progress; // label -> (done, total)
    QElapsedTimer m_clock;
    double m_etaS = 0;
    JobOutcome m_outcome;
};

} // namespace mb::gui
