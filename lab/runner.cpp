// The workload runner: issues requests by arrival policy and turns engine events into records.
#include "lab/runner.h"

#include "lab/postprocess_stage.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <optional>
#include <mutex>
#include <thread>

namespace mb::lab {

namespace {

using Clock = std::chrono::steady_clock;

int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

RequestStatus toStatus(engine::FinishStatus s) {
    switch (s) {
    case engine::FinishStatus::Ok: return RequestStatus::Ok;
    case engine::FinishStatus::Error: return RequestStatus::Error;
    case engine::FinishStatus::Cancelled: return RequestStatus::Cancelled;
    case engine::FinishStatus::Rejected: return RequestStatus::Rejected;
    }
    return RequestStatus::Error;
}

// Shared between the runner thread and the target's event thread.
struct RunState {
    std::mutex mutex;
    std::condition_variable changed;
    int64_t t0Ns = 0;
    std::vector<RequestRecord> records;
    std::vector<uint8_t> finished;
    int64_t inFlight = 0;
    int64_t doneCount = 0;
    std::map<int64_t, int32_t> lastTurnDone; // conversation -> last finished turn
    // Post-processing stages of measured requests; last, so they are joined (each ends
    // after its Finished) while the rest of the state still exists.
    std::vector<std::unique_ptr<PostStage>> stages;

    double ms(int64_t ns) const { return static_cast<double>(ns - t0Ns) / 1e6; }
};

// What the post-processing stage made of one event (null without a chain).
struct Shown {
    const std::string& text;
    int64_t timeNs;
    const plugins::ChainRun& run;
};

// What the chain let out for one event, appended to the shown output with its time.
void appendShown(RequestRecord& r, const Shown& shown, const RunState& st) {
    if (shown.text.empty()) return;
    r.output += shown.text;
    r.outputTimesMs.push_back(st.ms(shown.timeNs));
}

// Folds the chain's totals into a finished record.
void finishPostprocess(RequestRecord& r, const plugins::ChainRun& run) {
    r.postprocessed = true;
    r.postprocessMs = run.totalMs();
    r.postprocessStartMs = run.startMs();
    r.postprocessMaxCallMs = run.maxCallMs();
    r.postprocessCalls = run.calls();
    if (run.failed()) r.postprocessStatus = "failed: " + run.failure();
    else if (run.ended()) r.postprocessStatus = "ended: " + run.endReason();
}

// Issues `list` (indices into requests) and waits for all of them. `record` = false for warm-up.
void issue(Target& target, const std::vector<WorkloadRequest>& requests, const std::vector<size_t>& list,
           const RunOptions& o, RunState& st, bool record, std::vector<uint64_t>& targetIds, bool& cancelled) {
    RunSink* const runSink = record ? o.sink : nullptr;
    const int64_t candidateId = o.candidateId;
    const bool closed = !record || o.arrival.kind == ArrivalSpec::Kind::Closed;
    const int64_t concurrency = std::max<int32_t>(1, o.arrival.concurrency);
    std::vector<uint8_t> issued(list.size(), 0);
    size_t issuedCount = 0;
    std::unique_lock lock(st.mutex);
    // Progress after finishes too (submits report below), including the last one.
    int64_t reportedDone = -1;
    auto reportFinishes = [&] {
        if (!record || !o.onProgress || st.doneCount == reportedDone) return;
        reportedDone = st.doneCount;
        RunProgress p{st.doneCount, static_cast<int64_t>(list.size()), st.ms(nowNs())};
        lock.unlock();
        o.onProgress(p);
        lock.lock();
    };
    for (;;) {
        if (o.cancel && o.cancel->load() && !cancelled) {
            cancelled = true;
            lock.unlock();
            for (uint64_t id : targetIds) target.cancel(id);
            lock.lock();
        }
        reportFinishes();
        if (cancelled && st.inFlight == 0) return;
        if (!cancelled && issuedCount == list.size() && st.inFlight == 0) return;
        // Find the next request that may go now.
        std::optional<size_t> next;
        double waitUntilMs = -1;
        if (!cancelled && (!closed || st.inFlight < concurrency)) {
            const double nowMs = st.ms(nowNs());
            for (size_t k = 0; k < list.size(); ++k) {
                if (issued[k]) continue;
                const WorkloadRequest& w = requests[list[k]];
                if (w.conversation >= 0) {
                    const auto it = st.lastTurnDone.find(w.conversation);
                    const int32_t last = it == st.lastTurnDone.end() ? -1 : it->second;
                    if (w.turn != last + 1) continue; // its previous turn is not done yet
                }
                if (!closed && w.arrivalMs > nowMs) {
                    if (waitUntilMs < 0 || w.arrivalMs < waitUntilMs) waitUntilMs = w.arrivalMs;
                    if (w.conversation < 0) break; // arrivals are in order: nothing later is due
                    continue;
                }
                next = k;
                break;
            }
        }
        if (!next) {
            if (waitUntilMs >= 0) {
                const auto deadline = Clock::time_point(std::chrono::nanoseconds(
                    st.t0Ns + static_cast<int64_t>(waitUntilMs * 1e6)));
                st.changed.wait_until(lock, std::min(deadline, Clock::now() + std::chrono::milliseconds(50)));
            } else {
                st.changed.wait_for(lock, std::chrono::milliseconds(50)); // also polls the cancel flag
            }
            continue;
        }
        const size_t k = *next;
        issued[k] = 1;
        ++issuedCount;
        ++st.inFlight;
        const WorkloadRequest& w = requests[list[k]];
        const size_t slot = list[k];
        if (record) {
            st.records[slot].submittedMs = st.ms(nowNs());
            st.records[slot].images = static_cast<int64_t>(w.images.size());
        }
        engine::InferenceRequest req;
        req.prompt = w.prompt;
        req.maxTokens = w.maxTokens;
        req.sampling = o.sampling;
        req.stopAtEos = o.stopAtEos;
        const int64_t conversation = w.conversation;
        const int32_t turn = w.turn;
        auto handle = [&st, &o, slot, record, conversation, turn, runSink, candidateId](const engine::RequestEvent& e,
                                                                                        const Shown* shown) {
            std::lock_guard g(st.mutex);
            if (!record) {
                if (e.kind == engine::EventKind::Finished) {
                    --st.inFlight;
                    if (conversation >= 0) st.lastTurnDone[conversation] = turn;
                    st.changed.notify_all();
                }
                return;
            }
            RequestRecord& r = st.records[slot];
            switch (e.kind) {
            case engine::EventKind::Scheduled:
                r.scheduledMs = st.ms(e.timeNs);
                if (o.onEvent) o.onEvent(r, e);
                break;
            case engine::EventKind::Token:
                if (r.tokenTimesMs.empty()) r.firstTokenMs = st.ms(e.timeNs);
                r.tokenTimesMs.push_back(st.ms(e.timeNs));
                if (shown) appendShown(r, *shown, st);
                if (o.onEvent) o.onEvent(r, e);
                break;
            case engine::EventKind::Finished:
                r.status = toStatus(e.status);
                r.error = e.error;
                r.promptTokens = e.promptTokens;
                r.cachedTokens = e.cachedTokens;
                r.truncatedTokens = e.truncatedTokens;
                r.outputTokens = e.outputTokens;
                r.imageTokens = e.imageTokens;
                r.imagesDropped = e.imagesDropped;
                r.encodeMs = std::max(0.0, e.encodeMs);
                r.finishedMs = st.ms(e.timeNs);
                r.kvBytesPeak = e.kvBytesPeak;
                r.tokens = e.tokens;
                r.text = e.text;
                if (shown) {
                    appendShown(r, *shown, st);
                    finishPostprocess(r, shown->run);
                } else {
                    r.output = e.text;
                }
                st.finished[slot] = 1;
                if (runSink) runSink->requestFinished(candidateId, r); // buffered by the store
                if (o.onEvent) o.onEvent(r, e);
                if (o.onRecord) o.onRecord(r);
                --st.inFlight;
                ++st.doneCount;
                if (conversation >= 0) st.lastTurnDone[conversation] = turn;
                st.changed.notify_all();
                break;
            }
        };
        engine::EventSink sink;
        if (record && o.plugins && !o.plugins->empty()) {
            plugins::RequestInfo info{requests[slot].index, o.mode, static_cast<int64_t>(w.prompt.size()), w.maxTokens};
            auto deliver = [handle](const engine::RequestEvent& e, const std::string& text, int64_t ns,
                                    const plugins::ChainRun& run) {
                const Shown shown{text, ns, run};
                handle(e, &shown);
            };
            st.stages.push_back(std::make_unique<PostStage>(*o.plugins, std::move(info), std::move(deliver)));
            sink = [stage = st.stages.back().get()](const engine::RequestEvent& e) { stage->push(e); };
        } else {
            sink = [handle](const engine::RequestEvent& e) { handle(e, nullptr); };
        }
        lock.unlock(); // a rejection calls the sink inside submit
        const uint64_t id = w.images.empty() ? target.submit(std::move(req), sink)
                                             : target.submitImages(std::move(req), w.images, sink);
        lock.lock();
        targetIds.push_back(id);
        if (record && o.onProgress) {
            RunProgress p{st.doneCount, static_cast<int64_t>(list.size()), st.ms(nowNs())};
            lock.unlock();
            o.onProgress(p);
            lock.lock();
        }
    }
}

} // namespace

RunResult runWorkload(Target& target, const std::vector<WorkloadRequest>& requests, const RunOptions& options) {
    RunResult result;
    RunState st;
    st.records.resize(requests.size());
    st.finished.assign(requests.size(), 0);
    for (size_t i = 0; i < requests.size(); ++i) st.records[i].id = requests[i].index;

    std::vector<size_t> warm, measured;
    for (size_t i = 0; i < requests.size(); ++i) (requests[i].warmup ? warm : measured).push_back(i);

    std::vector<uint64_t> ids;
    bool cancelled = false;
    if (!warm.empty()) {
        const auto w0 = Clock::now();
        st.t0Ns = nowNs();
        issue(target, requests, warm, options, st, false, ids, cancelled);
        st.lastTurnDone.clear();
        result.warmupMs = std::chrono::duration<double, std::milli>(Clock::now() - w0).count();
    }
    target.waitIdle();

    const engine::SessionStats base = target.stats();
    st.t0Ns = nowNs();
    std::atomic<bool> sampling{true};
    std::thread sampler([&] {
        pthread_setname_np(pthread_self(), "mb-run-sampler");
        auto sample = [&] {
            const engine::SessionStats s = target.stats();
            StatsSample x;
            x.timeMs = static_cast<double>(nowNs() - st.t0Ns) / 1e6;
            x.prefixQueries = s.prefixQueries - base.prefixQueries;
            x.prefixHits = s.prefixHits - base.prefixHits;
            x.kvBytesInUse = s.kvBytesInUse;
            x.running = s.running;
            x.waiting = s.waiting;
            return x;
        };
        std::unique_lock lock(st.mutex);
        while (sampling) {
            lock.unlock();
            StatsSample x = sample();
            if (options.onSample) options.onSample(x);
            lock.lock();
            result.samples.push_back(x);
            st.changed.wait_for(lock, std::chrono::duration<double, std::milli>(options.sampleIntervalMs),
                                [&] { return !sampling.load(); });
        }
        lock.unlock();
        StatsSample last = sample(); // the final counters, after the last request
        if (options.onSample) options.onSample(last);
        lock.lock();
        result.samples.push_back(last);
    });
    auto stopSampler = [&] {
        {
            std::lock_guard g(st.mutex);
            sampling = false;
            st.changed.notify_all();
        }
        sampler.join();
    };
    try {
        if (!cancelled) issue(target, requests, measured, options, st, true, ids, cancelled);
    } catch (...) {
        // A throwing submit or progress callback: cancel what is in flight and wait for it,
        // since the sinks refer to this function's state.
        for (uint64_t id : ids) target.cancel(id);
        target.waitIdle();
        stopSampler();
        throw;
    }
    stopSampler();

    result.cancelled = cancelled;
    for (size_t i : measured)
        if (st.records[i].submittedMs >= 0) result.records.push_back(std::move(st.records[i]));
    return result;
}

} // namespace mb::lab
