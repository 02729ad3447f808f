// The engine as the GUI's controllers see it: verbs in, past-tense signals out, on the UI thread.
#pragma once

#include "gui/gui_types.h"
#include "lab/migration.h"
#include "lab/precision_check.h"

#include <QObject>

#include <atomic>
#include <memory>

namespace mb::gui {

using CancelFlag = std::shared_ptr<std::atomic<bool>>;

// Lives on the UI thread. Verbs return at once; the work happens elsewhere (ThreadedEngine:
// the engine thread) and every signal arrives queued on the UI thread, tagged with the job
// id the verb was given so that a controller can drop results of a job it abandoned.
// Cancellation is the atomic flag passed with the job: set it from any thread.
// Tests substitute a fake that emits scripted signals.
class EngineBackend : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;
    ~EngineBackend() override = default;

    // A job id no other controller of this backend uses (they all hear every signal).
    qint64 newJobId() { return ++m_lastJobId; }

    virtual void startPlayground(const PlaygroundJob& job, CancelFlag cancel) = 0;
    virtual void startBenchmark(const BenchmarkJob& job, CancelFlag cancel) = 0;
    virtual void inspectModel(qint64 jobId, const QString& path) = 0;
    // Writes a synthetic model (random weights) of a preset; dtype "f32", "f16", "q8_0", "q4_0".
    virtual void createModel(qint64 jobId, const QString& preset, const QString& dtype, quint64 seed,
                             const QString& outPath, CancelFlag cancel) = 0;
    // Rewrites a model at another precision: "f16", "q8_0", "q4_0", "mixed".
    virtual void quantizeModel(qint64 jobId, const QString& inPath, const QString& target,
                               const QString& outPath, CancelFlag cancel) = 0;
    // Migration node A: the token length of every prompt of a prompt file (JSONL or text),
    // with `modelPath`'s tokenizer.
    virtual void scanPrompts(qint64 jobId, const QString& promptFile, const QString& modelPath) = 0;
    // Migration node D (WarmupJob says what is primed); a reload is tried meanwhile.
    virtual void runWarmup(const WarmupJob& job) = 0;
    // Precision A/B of two models (or two precisions of one); progress counts prompts.
    virtual void comparePrecision(const PrecisionJob& job, CancelFlag cancel) = 0;

signals:
    void jobStarted(qint64 jobId);
    void jobProgress(qint64 jobId, const QString& label, qint64 done, qint64 total, double elapsedMs);
    void tokensReceived(qint64 jobId, const QString& label, const QVector<mb::gui::StreamedToken>& tokens);
    void requestFinished(qint64 jobId, const QString& label, const mb::gui::RequestOutcome& outcome);
    void dataReceived(qint64 jobId, const mb::gui::LiveBatch& batch);
    void jobFinished(qint64 jobId, const mb::gui::JobOutcome& outcome);
    void jobFailed(qint64 jobId, const QString& message);
    void modelInspected(qint64 jobId, const mb::gui::ModelDescription& model);
    void modelWritten(qint64 jobId, const QString& path);
    void promptsScanned(qint64 jobId, const std::vector<int64_t>& lengths);
    void warmupFinished(qint64 jobId, const mb::lab::WarmupResult& result);
    void precisionCompared(qint64 jobId, const mb::lab::PrecisionCheck& result);
    // A benchmark's precision A/B after its timed run: candidate label, prompts done and in all.
    void precisionProgress(qint64 jobId, const QString& label, qint64 done, qint64 total);
    // A sweep's level starts: "sweep: concurrency 4 (level 3 of 7)".
    void sweepLevelStarted(qint64 jobId, const QString& line);

private:
    qint64 m_lastJobId = 0;
};

} // namespace mb::gui

Q_DECLARE_METATYPE(mb::lab::WarmupResult)
Q_DECLARE_METATYPE(mb::lab::PrecisionCheck)
Q_DECLARE_METATYPE(mb::gui::PrecisionJob)
