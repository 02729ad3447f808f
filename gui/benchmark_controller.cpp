// BenchmarkController: job ids, live data folding and the ETA.
#include "gui/benchmark_controller.h"

#include "lab/workload.h"

#include <nlohmann/json.hpp>

namespace mb::gui {

BenchmarkController::BenchmarkController(EngineBackend* engine, QObject* parent) : QObject(parent), m_engine(engine) {
    connect(engine, &EngineBackend::jobProgress, this,
            [this](qint64 id, const QString& label, qint64 done, qint64 total, double) {
                if (id != m_jobId || !m_running) return;
                m_progress[label.toStdString()] = {done, total};
                const qint64 d = this->done(), t = this->total();
                const double elapsed = static_cast<double>(m_clock.elapsed()) / 1000.0;
                m_etaS = d > 0 ? elapsed / static_cast<double>(d) * static_cast<double>(t - d) : 0;
                emit progressChanged(d, t, m_etaS);
            });
    connect(engine, &EngineBackend::precisionProgress, this,
            [this](qint64 id, const QString& label, qint64 done, qint64 total) {
                if (id == m_jobId && m_running) emit precisionProgress(label, done, total);
            });
    // A sweep's next level: the live charts and progress show the current level only.
    connect(engine, &EngineBackend::sweepLevelStarted, this, [this](qint64 id, const QString& line) {
        if (id != m_jobId || !m_running) return;
        emit sweepLevelStarted(line);
        if (!line.contains(QLatin1String("(level "))) return; // a note (the sweep stops early), not a level
        m_inputs.clear();
        for (auto& [label, p] : m_progress) p.first = 0;
        m_clock.restart();
        m_etaS = 0;
        emit dataChanged();
        emit progressChanged(0, total(), 0);
    });
    connect(engine, &EngineBackend::dataReceived, this, [this](qint64 id, const LiveBatch& batch) {
        if (id != m_jobId) return;
        for (const auto& [label, record] : batch.records) m_inputs[label].records.push_back(record);
        for (const auto& [label, sample] : batch.samples) appendSamples(m_inputs[label], {sample});
        emit dataChanged();
    });
    connect(engine, &EngineBackend::jobFinished, this, [this](qint64 id, const JobOutcome& outcome) {
        if (id != m_jobId) return;
        m_outcome = outcome;
        setRunning(false);
        emit finished(outcome);
    });
    connect(engine, &EngineBackend::jobFailed, this, [this](qint64 id, const QString& message) {
        if (id != m_jobId) return;
        setRunning(false);
        emit failed(message);
    });
}

qint64 BenchmarkController::start(BenchmarkJob job) {
    if (m_cancel) m_cancel->store(true);
    m_jobId = m_engine->newJobId();
    job.jobId = m_jobId;
    m_cancel = std::make_shared<std::atomic<bool>>(false);
    m_inputs.clear();
    m_progress.clear();
    // Each side's total is known up front, so progress counts both from the start; a replay
    // runs the stored run's workload (its spec says how many), not job.workload.
    lab::WorkloadSpec spec = job.workload;
    if (job.replayOf) {
        try {
            spec = lab::parseWorkloadSpec(nlohmann::json::parse(job.replayOf->info.workloadJson));
        } catch (const std::exception&) {
            // unreadable: the engine thread fails the job and says why; the count does not matter
        }
    }
    const qint64 perSide = lab::measuredRequestCount(spec);
    m_progress["a"] = {0, perSide};
    if (!job.onlyA) m_progress["b"] = {0, perSide};
    m_outcome = {};
    m_etaS = 0;
    m_clock.start();
    setRunning(true);
    emit dataChanged();
    emit progressChanged(0, total(), 0);
    m_engine->startBenchmark(job, m_cancel);
    return m_jobId;
}

void BenchmarkController::stop() {
    if (m_cancel) m_cancel->store(true);
}

qint64 BenchmarkController::done() const {
    qint64 d = 0;
    for (const auto& [label, p] : m_progress) d += p.first;
    return d;
}

qint64 BenchmarkController::total() const {
    qint64 t = 0;
    for (const auto& [label, p] : m_progress) t += p.second;
    return t;
}

void BenchmarkController::setRunning(bool r) {
    if (m_running == r) return;
    m_running = r;
    emit runningChanged(r);
}

} // namespace mb::gui
