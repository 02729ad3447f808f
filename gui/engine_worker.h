// The GUI's engine thread: runs playground and benchmark jobs and model work, streaming results out.
#pragma once

#include "gui/engine_backend.h"
#include "gui/model_description.h"

#include <QObject>

namespace mb::gui {

// Lives on the engine thread (ThreadedEngine moves it there); its run* functions are
// invoked there through queued calls and block that thread while a job runs, which is why
// cancellation is an atomic flag rather than a queued call. The sessions a job creates
// (and their own event threads) live only inside that call. Results leave through the
// signals, which ThreadedEngine relays to the UI thread; streamed data goes through an
// EventCoalescer, so the UI sees at most about 60 batches a second.
class EngineWorker : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    void runPlayground(const PlaygroundJob& job, const CancelFlag& cancel);
    void runBenchmark(const BenchmarkJob& job, const CancelFlag& cancel);
    void inspectModel(qint64 jobId, const QString& path);
    void createModel(qint64 jobId, const QString& preset, const QString& dtype, quint64 seed, const QString& outPath,
                     const CancelFlag& cancel);
    void quantizeModel(qint64 jobId, const QString& inPath, const QString& target, const QString& outPath,
                       const CancelFlag& cancel);
    void scanPrompts(qint64 jobId, const QString& promptFile, const QString& modelPath);
    void runWarmup(const WarmupJob& job);
    void comparePrecision(const PrecisionJob& job, const CancelFlag& cancel);

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
    void precisionProgress(qint64 jobId, const QString& label, qint64 done, qint64 total);
    // A sweep's level starts: "sweep: concurrency 4 (level 3 of 7)".
    void sweepLevelStarted(qint64 jobId, const QString& line);
};

} // namespace mb::gui
