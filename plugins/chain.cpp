// A chain's records and one request's pass through it, timed.
#include "plugins/chain.h"

#include <chrono>

namespace mb::plugins {

using Json = nlohmann::json;

Json Chain::record() const {
    Json list = Json::array();
    for (const auto& e : m_entries) list.push_back(e->record());
    return Json{{"plugins", list}};
}

std::string Chain::describe() const {
    if (m_entries.empty()) return "none";
    std::string s;
    for (const auto& e : m_entries) s += (s.empty() ? "" : " → ") + e->describe();
    return s;
}

ChainRun::ChainRun(const Chain& chain, const RequestInfo& info) {
    const auto t0 = std::chrono::steady_clock::now();
    try {
        for (const auto& f : chain.entries()) {
            m_plugins.push_back(f->make());
            m_plugins.back()->start(info);
        }
    } catch (const PluginError& e) {
        m_failure = e.what();
    }
    m_startMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    m_totalMs += m_startMs;
}

// Feeds `text` to plugin `from` and what it emits on down; `flush` ends each plugin after
// its last input. Stops at the first plugin that ends the response.
Emit ChainRun::pass(size_t from, std::string text, bool flush) {
    Emit out;
    for (size_t k = from; k < m_plugins.size(); ++k) {
        Emit e = text.empty() ? Emit{} : m_plugins[k]->text(text); // nothing new: no call
        if (!e.end && flush) {
            Emit tail = m_plugins[k]->end();
            e.text += tail.text;
            e.end = tail.end;
            e.reason = std::move(tail.reason);
        }
        if (e.end) {
            // What this plugin still let through goes on down the chain, then ends it.
            Emit rest = k + 1 < m_plugins.size() ? pass(k + 1, std::move(e.text), true) : Emit{std::move(e.text)};
            rest.end = true;
            if (rest.reason.empty()) rest.reason = std::move(e.reason);
            return rest;
        }
        text = std::move(e.text);
    }
    out.text = std::move(text);
    return out;
}

namespace {
template <class F> Emit timed(double& total, double& maxMs, int64_t& calls, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    Emit e = f();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    total += ms;
    if (ms > maxMs) maxMs = ms;
    ++calls;
    return e;
}
} // namespace

Emit ChainRun::step(std::string_view chunk, bool flush) {
    if (m_ended || m_finished || failed()) return {};
    m_finished = flush;
    try {
        Emit e = timed(m_totalMs, m_maxCallMs, m_calls, [&] { return pass(0, std::string(chunk), flush); });
        if (e.end) {
            m_ended = true;
            m_reason = e.reason;
        }
        return e;
    } catch (const PluginError& err) {
        m_failure = err.what();
        return {};
    }
}

Emit ChainRun::text(std::string_view chunk) {
    return step(chunk, false);
}

Emit ChainRun::finish() {
    return step({}, true);
}

} // namespace mb::plugins
