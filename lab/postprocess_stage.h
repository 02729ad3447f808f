// One request's post-processing stage: its engine events, in order, through the plugin chain on a thread of its own.
#pragma once

#include "engine/session.h"
#include "plugins/chain.h"

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace mb::lab {

// The engine's and a remote target's events arrive on their own threads, which must not
// wait for a plugin (a script call can take milliseconds): push() queues the event and
// returns; the stage's thread feeds each Token's text to the chain, flushes it at
// Finished, and hands every event on with what it made shown. The ChainRun (and so a
// script plugin's process) is set up on that thread as soon as the stage starts, while the
// request's prompt is being computed.
class PostStage {
public:
    // Called on the stage's thread for every event, in order: `shown` is the text the
    // chain let out for it (the flush's for Finished; empty for Scheduled), at `shownNs`
    // (steady clock); `run` holds the chain's totals so far. After Finished, nothing more.
    using Deliver = std::function<void(const engine::RequestEvent& e, const std::string& shown,
                                       int64_t shownNs, const plugins::ChainRun& run)>;

    PostStage(const plugins::Chain& chain, plugins::RequestInfo info, Deliver deliver);
    ~PostStage(); // waits for the thread, which ends after delivering Finished
    PostStage(const PostStage&) = delete;
    PostStage& operator=(const PostStage&) = delete;

    void push(const engine::RequestEvent& e); // any thread; returns at once

private:
    void loop(const plugins::Chain& chain, const plugins::RequestInfo& info);

    Deliver m_deliver;
    std::mutex m_mutex;
    std::condition_variable m_ready;
    std::deque<engine::RequestEvent> m_queue;
    std::thread m_thread; // last: starts once the rest exists
};

} // namespace mb::lab
