// The post-processing stage's thread: chain set-up, each token's text through it, the flush at the end.
#include "lab/postprocess_stage.h"

#include <chrono>
#include <pthread.h>

namespace mb::lab {

namespace {
int64_t steadyNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
}
} // namespace

PostStage::PostStage(const plugins::Chain& chain, plugins::RequestInfo info, Deliver deliver)
    : m_deliver(std::move(deliver)),
      m_thread([this, &chain, info = std::move(info)] { loop(chain, info); }) {}

PostStage::~PostStage() {
    if (m_thread.joinable()) m_thread.join();
}

void PostStage::push(const engine::RequestEvent& e) {
    {
        std::lock_guard g(m_mutex);
        m_queue.push_back(e);
    }
    m_ready.notify_one();
}

void PostStage::loop(const plugins::Chain& chain, const plugins::RequestInfo& info) {
    pthread_setname_np(pthread_self(), "mb-postprocess");
    plugins::ChainRun run(chain, info); // a plugin that cannot start fails the run, not the thread
    for (;;) {
        engine::RequestEvent e;
        {
            std::unique_lock lock(m_mutex);
            m_ready.wait(lock, [&] { return !m_queue.empty(); });
            e = std::move(m_queue.front());
            m_queue.pop_front();
        }
        std::string shown;
        if (e.kind == engine::EventKind::Token) shown = run.text(e.text).text;
        else if (e.kind == engine::EventKind::Finished) shown = run.finish().text;
        m_deliver(e, shown, steadyNs(), run);
        if (e.kind == engine::EventKind::Finished) return;
    }
}

} // namespace mb::lab
