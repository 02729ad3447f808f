// A plugin chain: the JSON file's entries in order, and one request's pass through them.
#pragma once

#include "plugins/plugin.h"

#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mb::plugins {

// How script entries are checked and run (docs/PLUGINS.md).
struct ChainOptions {
    std::filesystem::path baseDir;      // relative script paths resolve here (the chain file's folder)
    // Whether a script with this sha256 (lower-case hex) was approved; unset: none is.
    std::function<bool(const std::string& sha256)> approved;
    // What a run records of that approval (who, when, the audit's verdict); unset: nothing.
    std::function<nlohmann::json(const std::string& sha256)> approvalRecord;
    bool allowUnsandboxed = false;      // run scripts even where the sandbox cannot be set up
    std::string python;                 // interpreter; empty: /usr/bin/python3, else python3 on PATH
    double callTimeoutMs = 2000;        // per on_start/on_text/on_end call
};

class Chain {
public:
    Chain() = default;
    explicit Chain(std::vector<std::shared_ptr<const PluginFactory>> entries) : m_entries(std::move(entries)) {}
    // {"plugins": [{"type": "word_filter", ...}, ...]}; throws PluginError naming the entry.
    static Chain fromJson(const nlohmann::json& doc, const ChainOptions& options);
    static Chain load(const std::filesystem::path& file, ChainOptions options);

    bool empty() const { return m_entries.empty(); }
    const std::vector<std::shared_ptr<const PluginFactory>>& entries() const { return m_entries; }
    // {"plugins": [each entry's record()]}: what a run stores as the chain it used.
    nlohmann::json record() const;
    std::string describe() const; // "word_filter(3 words, mask) → script(p.py 1a2b3c4d)"

private:
    std::vector<std::shared_ptr<const PluginFactory>> m_entries;
};

// Makes one entry from its JSON object (the registry of types lives in chain_load.cpp).
std::shared_ptr<const PluginFactory> makeEntry(const nlohmann::json& entry, const ChainOptions& options);

// One request through a chain: text flows through the plugins in order (what plugin k
// emits is plugin k+1's input); every call is timed. A failing plugin stops the output:
// failure() says why and later calls emit nothing (a filter that broke must not let the
// rest through). Not thread-safe: one request, one thread.
class ChainRun {
public:
    ChainRun(const Chain& chain, const RequestInfo& info);
    Emit text(std::string_view chunk);
    Emit finish();               // end() of each plugin, flushing down the chain; once

    bool ended() const { return m_ended; }          // a plugin ended the response
    const std::string& endReason() const { return m_reason; }
    bool failed() const { return !m_failure.empty(); }
    const std::string& failure() const { return m_failure; }
    double totalMs() const { return m_totalMs; }    // time inside plugin calls, set-up included
    double startMs() const { return m_startMs; }    // of which making and starting the plugins
    double maxCallMs() const { return m_maxCallMs; } // the slowest text()/finish() call
    int64_t calls() const { return m_calls; }        // text() and finish() calls timed

private:
    Emit step(std::string_view chunk, bool flush); // one timed pass; failures caught
    Emit pass(size_t from, std::string text, bool flush);
    std::vector<std::unique_ptr<Plugin>> m_plugins;
    bool m_ended = false, m_finished = false;
    std::string m_reason, m_failure;
    double m_totalMs = 0, m_startMs = 0, m_maxCallMs = 0;
    int64_t m_calls = 0;
};

} // namespace mb::plugins
