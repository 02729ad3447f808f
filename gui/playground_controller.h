// Drives one playground run at a time: streamed text per side, live figures, and the final diff.
#pragma once

#include "gui/engine_backend.h"
#include "lab/token_diff.h"

#include <QObject>

#include <map>
#include <optional>
#include <string>

namespace mb::gui {

// What one side of the playground shows, updated as tokens stream in.
struct SideState {
    QString text;
    std::vector<int32_t> tokens;
    std::vector<QString> pieces; // the text each streamed token completed
    std::vector<double> tokenMs; // since submit, one per token
    std::optional<RequestOutcome> outcome;
    // A plugin chain's side: `shown` is its processed output so far (the outcome's `output`
    // once finished) beside the raw `text`.
    bool hasChain = false;
    QString shown;

    double ttftMs() const { return tokenMs.empty() ? -1 : tokenMs.front(); }
    // Decode speed so far: tokens after the first over the time since the first.
    double tokensPerSecond() const;
    // Gaps between consecutive tokens (ms): the sparkline.
    std::vector<double> gapsMs() const;
};

// UI thread. Signals of an older job id are dropped.
class PlaygroundController : public QObject {
    Q_OBJECT
public:
    explicit PlaygroundController(EngineBackend* engine, QObject* parent = nullptr);

    qint64 start(PlaygroundJob job);
    void stop();

    bool running() const { return m_running; }
    const SideState& side(const std::string& label) const;
    const std::vector<lab::DiffOp>& diff() const { return m_diff; }
    const JobOutcome& outcome() const { return m_outcome; }

signals:
    void runningChanged(bool running);
    void sideChanged(const QString& label);
    void diffReady();
    void finished(const mb::gui::JobOutcome& outcome);
    void failed(const QString& message);

private:
    void setRunning(bool r);

    EngineBackend* m_engine;
    qint64 m_jobId = 0;
    bool m_running = false;
    CancelFlag m_cancel;
    std::map<std::string, SideState> m_sides;
    std::vector<lab::DiffOp> m_diff;
    JobOutcome m_outcome;
};

} // namespace mb::gui
