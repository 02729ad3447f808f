// ThreadedEngine: queued calls into the engine thread, its signals relayed to the UI thread.
#include "gui/threaded_engine.h"

#include "gui/engine_worker.h"

namespace mb::gui {

ThreadedEngine::ThreadedEngine(QObject* parent) : EngineBackend(parent) {
    m_thread.setObjectName(QStringLiteral("mb-engine"));
    m_worker = new EngineWorker;
    m_worker->moveToThread(&m_thread);
    connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
    connect(m_worker, &EngineWorker::jobStarted, this, &EngineBackend::jobStarted);
    connect(m_worker, &EngineWorker::jobProgress, this, &EngineBackend::jobProgress);
    connect(m_worker, &EngineWorker::tokensReceived, this, &EngineBackend::tokensReceived);
    connect(m_worker, &EngineWorker::requestFinished, this, &EngineBackend::requestFinished);
    connect(m_worker, &EngineWorker::dataReceived, this, &EngineBackend::dataReceived);
    connect(m_worker, &EngineWorker::jobFinished, this, &EngineBackend::jobFinished);
    connect(m_worker, &EngineWorker::jobFailed, this, &EngineBackend::jobFailed);
    connect(m_worker, &EngineWorker::modelInspected, this, &EngineBackend::modelInspected);
    connect(m_worker, &EngineWorker::modelWritten, this, &EngineBackend::modelWritten);
    connect(m_worker, &EngineWorker::promptsScanned, this, &EngineBackend::promptsScanned);
    connect(m_worker, &EngineWorker::warmupFinished, this, &EngineBackend::warmupFinished);
    connect(m_worker, &EngineWorker::precisionCompared, this, &EngineBackend::precisionCompared);
    connect(m_worker, &EngineWorker::precisionProgress, this, &EngineBackend::precisionProgress);
    connect(m_worker, &EngineWorker::sweepLevelStarted, this, &EngineBackend::sweepLevelStarted);
    m_thread.start();
}

ThreadedEngine::~ThreadedEngine() {
    for (const auto& f : m_flags) f->store(true);
    m_thread.quit();
    m_thread.wait();
}

void ThreadedEngine::remember(const CancelFlag& cancel) {
    // A flag only this list still holds belongs to a finished job that nobody can cancel.
    std::erase_if(m_flags, [](const CancelFlag& f) { return f.use_count() == 1; });
    m_flags.push_back(cancel);
}

void ThreadedEngine::startPlayground(const PlaygroundJob& job, CancelFlag cancel) {
    remember(cancel);
    QMetaObject::invokeMethod(m_worker, [w = m_worker, job, cancel] { w->runPlayground(job, cancel); },
                              Qt::QueuedConnection);
}

void ThreadedEngine::startBenchmark(const BenchmarkJob& job, CancelFlag cancel) {
    remember(cancel);
    QMetaObject::invokeMethod(m_worker, [w = m_worker, job, cancel] { w->runBenchmark(job, cancel); },
                              Qt::QueuedConnection);
}

void ThreadedEngine::inspectModel(qint64 jobId, const QString& path) {
    QMetaObject::invokeMethod(m_worker, [w = m_worker, jobId, path] { w->inspectModel(jobId, path); },
                              Qt::QueuedConnection);
}

void ThreadedEngine::createModel(qint64 jobId, const QString& preset, const QString& dtype, quint64 seed,
                                 const QString& outPath, CancelFlag cancel) {
    remember(cancel);
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker, jobId, preset, dtype, seed, outPath, cancel] {
            w->createModel(jobId, preset, dtype, seed, outPath, cancel);
        },
        Qt::QueuedConnection);
}

void ThreadedEngine::quantizeModel(qint64 jobId, const QString& inPath, const QString& target, const QString& outPath,
                                   CancelFlag cancel) {
    remember(cancel);
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker, jobId, inPath, target, outPath, cancel] {
            w->quantizeModel(jobId, inPath, target, outPath, cancel);
        },
        Qt::QueuedConnection);
}

void ThreadedEngine::comparePrecision(const PrecisionJob& job, CancelFlag cancel) {
    remember(cancel);
    QMetaObject::invokeMethod(m_worker, [w = m_worker, job, cancel] { w->comparePrecision(job, cancel); },
                              Qt::QueuedConnection);
}

void ThreadedEngine::scanPrompts(qint64 jobId, const QString& promptFile, const QString& modelPath) {
    QMetaObject::invokeMethod(
        m_worker, [w = m_worker, jobId, promptFile, modelPath] { w->scanPrompts(jobId, promptFile, modelPath); },
        Qt::QueuedConnection);
}

void ThreadedEngine::runWarmup(const WarmupJob& job) {
    QMetaObject::invokeMethod(m_worker, [w = m_worker, job] { w->runWarmup(job); }, Qt::QueuedConnection);
}

} // namespace mb::gui
