// PlaygroundController: folds streamed tokens into each side and diffs the two outputs.
#include "gui/playground_controller.h"

namespace mb::gui {

double SideState::tokensPerSecond() const {
    if (tokenMs.size() < 2) return 0;
    const double span = tokenMs.back() - tokenMs.front();
    return span > 0 ? static_cast<double>(tokenMs.size() - 1) * 1000.0 / span : 0;
}

std::vector<double> SideState::gapsMs() const {
    std::vector<double> g;
    for (size_t i = 1; i < tokenMs.size(); ++i) g.push_back(tokenMs[i] - tokenMs[i - 1]);
    return g;
}

PlaygroundController::PlaygroundController(EngineBackend* engine, QObject* parent)
    : QObject(parent), m_engine(engine) {
    connect(engine, &EngineBackend::tokensReceived, this,
            [this](qint64 id, const QString& label, const QVector<StreamedToken>& tokens) {
                if (id != m_jobId) return;
                SideState& s = m_sides[label.toStdString()];
                for (const auto& t : tokens) {
                    s.text += t.text;
                    s.tokens.push_back(t.id);
                    s.pieces.push_back(t.text);
                    s.tokenMs.push_back(t.msSinceSubmit);
                    s.shown += t.shown;
                }
                emit sideChanged(label);
            });
    connect(engine, &EngineBackend::requestFinished, this,
            [this](qint64 id, const QString& label, const RequestOutcome& outcome) {
                if (id != m_jobId) return;
                SideState& s = m_sides[label.toStdString()];
                s.outcome = outcome;
                // The final text is decoded from all tokens at once, so it is exact even
                // where single tokens split a UTF-8 character.
                s.text = outcome.text;
                s.tokens = outcome.tokens;
                if (outcome.postprocessed) {
                    s.hasChain = true;
                    s.shown = outcome.output; // whole: the flush's text included
                }
                emit sideChanged(label);
            });
    connect(engine, &EngineBackend::jobFinished, this, [this](qint64 id, const JobOutcome& outcome) {
        if (id != m_jobId) return;
        m_outcome = outcome;
        m_diff = lab::diffTokens(side("a").tokens, side("b").tokens);
        setRunning(false);
        emit diffReady();
        emit finished(outcome);
    });
    connect(engine, &EngineBackend::jobFailed, this, [this](qint64 id, const QString& message) {
        if (id != m_jobId) return;
        setRunning(false);
        emit failed(message);
    });
}

qint64 PlaygroundController::start(PlaygroundJob job) {
    if (m_cancel) m_cancel->store(true);
    m_jobId = m_engine->newJobId();
    job.jobId = m_jobId;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_sides.clear();
    m_sides["a"].hasChain = !job.a.pluginsPath.isEmpty();
    m_sides["b"].hasChain = !job.b.pluginsPath.isEmpty();
    m_diff.clear();
    m_outcome = {};
    setRunning(true);
    emit sideChanged(QStringLiteral("a"));
    emit sideChanged(QStringLiteral("b"));
    m_engine->startPlayground(job, m_cancel);
    return m_jobId;
}

void PlaygroundController::stop() {
    if (m_cancel) m_cancel->store(true);
}

const SideState& PlaygroundController::side(const std::string& label) const {
    static const SideState kEmpty;
    const auto it = m_sides.find(label);
    return it == m_sides.end() ? kEmpty : it->second;
}

void PlaygroundController::setRunning(bool r) {
    if (m_running == r) return;
    m_running = r;
    emit runningChanged(r);
}

} // namespace mb::gui
