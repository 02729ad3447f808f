// A serving target the runner can drive: the embedded engine today, remote servers later.
#pragma once

#include "engine/session.h"
#include "lab/workload.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mb::lab {

// Thread-safe like engine::Session: submit() returns at once and events arrive on the
// target's own thread, ending with exactly one Finished event per request.
class Target {
public:
    virtual ~Target() = default;
    virtual uint64_t submit(engine::InferenceRequest request, engine::EventSink sink) = 0;
    // A request carrying images to encode first (WorkloadRequest::images). A target without
    // a vision encoder refuses it: Finished{Rejected} arrives before this returns (id 0).
    virtual uint64_t submitImages(engine::InferenceRequest request, std::vector<WorkloadImage> images,
                                  engine::EventSink sink) {
        if (images.empty()) return submit(std::move(request), std::move(sink));
        engine::RequestEvent e;
        e.kind = engine::EventKind::Finished;
        e.status = engine::FinishStatus::Rejected;
        e.error = "this candidate has no vision encoder for the request's images (give it an mmproj: --mmproj)";
        e.timeNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::steady_clock::now().time_since_epoch()).count();
        sink(e);
        return 0;
    }
    virtual bool cancel(uint64_t id) = 0;
    virtual engine::SessionStats stats() const = 0;
    // Blocks until the target has nothing in flight (and any warm-up is over).
    virtual void waitIdle() = 0;
    // A one-line description for reports (lab::describeCandidate for a comparison's targets).
    virtual std::string describe() const = 0;
};

// The embedded engine: one Session.
class EmbeddedTarget final : public Target {
public:
    EmbeddedTarget(std::unique_ptr<engine::Session> session, std::string description)
        : m_session(std::move(session)), m_description(std::move(description)) {}
    uint64_t submit(engine::InferenceRequest r, engine::EventSink s) override {
        return m_session->submit(std::move(r), std::move(s));
    }
    bool cancel(uint64_t id) override { return m_session->cancel(id); }
    engine::SessionStats stats() const override { return m_session->stats(); }
    void waitIdle() override { m_session->waitIdle(); }
    std::string describe() const override { return m_description; }
    engine::Session& session() { return *m_session; }

private:
    std::unique_ptr<engine::Session> m_session;
    std::string m_description;
};

} // namespace mb::lab
