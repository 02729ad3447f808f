// The real EngineBackend: an EngineWorker on its own named thread, "mb-engine".
#pragma once

#include "gui/engine_backend.h"

#include <QThread>

namespace mb::gui {

class EngineWorker;

// Owned by the UI thread. Verbs become queued calls on the worker; the worker's signals
// are relayed (queued) as this object's signals. The destructor cancels every job it
// started, then quits and waits for the thread: stop, quit, wait.
class ThreadedEngine final : public EngineBackend {
    Q_OBJECT
public:
    explicit ThreadedEngine(QObject* parent = nullptr);
    ~ThreadedEngine() override;

    void startPlayground(const PlaygroundJob& job, CancelFlag cancel) override;
    void startBenchmark(const BenchmarkJob& job, CancelFlag cancel) override;
    void inspectModel(qint64 jobId, const QString& path) override;
    void createModel(qint64 jobId, const QString& preset, const QString& dtype, quint64 seed, const QString& outPath,
                     CancelFlag cancel) override;
    void quantizeModel(qint64 jobId, const QString& inPath, const QString& target, const QString& outPath,
                       CancelFlag cancel) override;
    void scanPrompts(qint64 jobId, const QString& promptFile, const QString& modelPath) override;
    void comparePrecision(const PrecisionJob& job, CancelFlag cancel) override;
    void runWarmup(const WarmupJob& job) override;

private:
    void remember(const CancelFlag& cancel);

    QThread m_thread;
    EngineWorker* m_worker = nullptr; // lives on m_thread; deleted there when it finishes
    std::vector<CancelFlag> m_flags;  // jobs started, set on shutdown
};

} // namespace mb::gui
