// Gathers tokens, records, samples and outcomes from engine threads and hands them on in batches.
#pragma once

#include "gui/gui_types.h"

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace mb::gui {

// What one flush hands on. Delivery order within a flush: tokens, then the batch, then
// outcomes (a request's last tokens always arrive before its outcome).
struct CoalescedBatch {
    std::map<std::string, QVector<StreamedToken>> tokens;
    LiveBatch data;
    std::vector<std::pair<std::string, RequestOutcome>> outcomes;
    bool empty() const { return tokens.empty() && data.empty() && outcomes.empty(); }
};

// Thread-safe. Every add* may be called from any thread (session event threads, the
// runner's sampler). A batch is delivered, on the thread that added the item that made it
// due, when `interval` has passed since the last delivery; an outcome is delivered at
// once. Deliveries are serialised, so their order is the order of the data. The engine
// samples its counters every 50 ms, so nothing waits much longer than that even when no
// token arrives.
class EventCoalescer {
public:
    using Deliver = std::function<void(CoalescedBatch&&)>;
    explicit EventCoalescer(Deliver deliver, std::chrono::milliseconds interval = std::chrono::milliseconds(16))
        : m_deliver(std::move(deliver)), m_interval(interval) {}

    void addToken(const std::string& label, StreamedToken token) {
        std::unique_lock lock(m_mutex);
        m_pending.tokens[label].push_back(std::move(token));
        deliverIfDue(lock, false);
    }
    void addRecord(const std::string& label, const lab::RequestRecord& record) {
        std::unique_lock lock(m_mutex);
        m_pending.data.records.emplace_back(label, record);
        deliverIfDue(lock, false);
    }
    void addSample(const std::string& label, const lab::StatsSample& sample) {
        std::unique_lock lock(m_mutex);
        m_pending.data.samples.emplace_back(label, sample);
        deliverIfDue(lock, false);
    }
    void addOutcome(const std::string& label, RequestOutcome outcome) {
        std::unique_lock lock(m_mutex);
        m_pending.outcomes.emplace_back(label, std::move(outcome));
        deliverIfDue(lock, true);
    }
    // Delivers whatever is pending.
    void flush() {
        std::unique_lock lock(m_mutex);
        deliverIfDue(lock, true);
    }

private:
    void deliverIfDue(std::unique_lock<std::mutex>& lock, bool force) {
        const auto now = std::chrono::steady_clock::now();
        if (m_pending.empty() || (!force && now - m_last < m_interval)) return;
        CoalescedBatch batch = std::move(m_pending);
        m_pending = {};
        m_last = now;
        // Deliver outside the data lock (producers keep going) but in order.
        std::lock_guard order(m_deliverMutex);
        lock.unlock();
        m_deliver(std::move(batch));
    }

    Deliver m_deliver;
    const std::chrono::milliseconds m_interval;
    std::mutex m_mutex; // guards m_pending and m_last
    std::mutex m_deliverMutex;
    CoalescedBatch m_pending;
    std::chrono::steady_clock::time_point m_last{};
};

} // namespace mb::gui
