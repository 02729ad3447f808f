// Test helpers for sessions: an event collector, greedy requests and fast mode at native precision.
#pragma once

#include "engine/session.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <vector>

namespace mb::engine::test_util {

// Collects events per request; wait() blocks until every submitted request finished.
class Collector {
public:
    EventSink sink() {
        return [this](const RequestEvent& e) {
            std::lock_guard lock(m_mutex);
            m_events[e.id].push_back(e);
            if (e.kind == EventKind::Finished) {
                m_finished[e.id] = e;
                m_cv.notify_all();
            }
        };
    }
    void wait(size_t n) {
        std::unique_lock lock(m_mutex);
        m_cv.wait(lock, [&] { return m_finished.size() >= n; });
    }
    bool waitFor(size_t n, std::chrono::milliseconds timeout) {
        std::unique_lock lock(m_mutex);
        return m_cv.wait_for(lock, timeout, [&] { return m_finished.size() >= n; });
    }
    RequestEvent result(uint64_t id) {
        std::lock_guard lock(m_mutex);
        return m_finished.at(id);
    }
    std::vector<RequestEvent> events(uint64_t id) {
        std::lock_guard lock(m_mutex);
        return m_events[id];
    }

private:
    std::mutex m_mutex;
    std::condition_variable m_cv;
    std::map<uint64_t, std::vector<RequestEvent>> m_events;
    std::map<uint64_t, RequestEvent> m_finished;
};

inline InferenceRequest greedy(std::vector<int32_t> prompt, int32_t maxTokens) {
    InferenceRequest r;
    r.prompt = std::move(prompt);
    r.maxTokens = maxTokens;
    r.sampling.temperature = 0.0f;
    return r;
}

inline Profile fastNative() {
    Profile p = Profile::fast();
    p.precision = Precision::Native; // same precision as regular, so outputs must match
    return p;
}

} // namespace mb::engine::test_util
