// A scripted EngineBackend for controller tests: records the jobs it is given; tests emit its signals.
#pragma once

#include "gui/engine_backend.h"

#include <vector>

namespace mb::test {

class FakeEngine final : public gui::EngineBackend {
public:
    std::vector<gui::PlaygroundJob> playgroundJobs;
    std::vector<gui::BenchmarkJob> benchmarkJobs;
    std::vector<gui::CancelFlag> flags;
    std::vector<QString> inspected;

    void startPlayground(const gui::PlaygroundJob& job, gui::CancelFlag cancel) override {
        playgroundJobs.push_back(job);
        flags.push_back(cancel);
    }
    void startBenchmark(const gui::BenchmarkJob& job, gui::CancelFlag cancel) override {
        benchmarkJobs.push_back(job);
        flags.push_back(cancel);
    }
    void inspectModel(qint64, const QString& path) override { inspected.push_back(path); }
    void createModel(qint64, const QString&, const QString&, quint64, const QString&, gui::CancelFlag c) override {
        flags.push_back(c);
    }
    void quantizeModel(qint64, const QString&, const QString&, const QString&, gui::CancelFlag c) override {
        flags.push_back(c);
    }
    void scanPrompts(qint64 jobId, const QString& file, const QString&) override {
        scanned.push_back(file);
        scanJobs.push_back(jobId);
    }
    void runWarmup(const gui::WarmupJob& job) override {
        warmupJobs.push_back(job);
        ++warmups;
    }
    void comparePrecision(const gui::PrecisionJob& job, gui::CancelFlag c) override {
        precisionJobs.push_back(job);
        flags.push_back(c);
    }
    std::vector<gui::PrecisionJob> precisionJobs;
    std::vector<QString> scanned;
    std::vector<qint64> scanJobs;
    std::vector<gui::WarmupJob> warmupJobs;
    int warmups = 0;
};

} // namespace mb::test
