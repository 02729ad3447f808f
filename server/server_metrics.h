// The server's Prometheus metrics: counters, gauges and latency histograms in the text exposition format.
#pragma once

#include "engine/session.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace mb::server {

// A cumulative histogram with fixed upper bounds (seconds), as Prometheus expects:
// bucket i counts observations <= bounds[i]; +Inf counts all.
struct Histogram {
    std::vector<double> bounds;
    std::vector<uint64_t> counts; // one per bound
    uint64_t count = 0;
    double sum = 0;

    explicit Histogram(std::vector<double> b) : bounds(std::move(b)), counts(bounds.size(), 0) {}
    void observe(double v);
};

// Thread-safe: request handlers record, the /metrics handler renders. Counters only grow.
class ServerMetrics {
public:
    ServerMetrics();

    void requestFinished(double ttftSeconds, double e2eSeconds, int64_t promptTokens, int64_t outputTokens);
    void requestFailed();
    // One image through the vision encoder, `seconds` of encoding (waiting excluded).
    void imageEncoded(double seconds);

    // The exposition text (version 0.0.4): the recorded metrics plus the session's
    // counters and gauges (prefix cache, running, waiting, KV usage).
    std::string render(const engine::SessionStats& stats, const std::string& modelName) const;

private:
    mutable std::mutex m_mutex;
    Histogram m_ttft;
    Histogram m_e2e;
    uint64_t m_promptTokens = 0;
    uint64_t m_generationTokens = 0;
    uint64_t m_errors = 0;
    uint64_t m_requests = 0;
    uint64_t m_images = 0;
    double m_imageSeconds = 0;
};

} // namespace mb::server
