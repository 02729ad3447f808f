// Output plugins: the post-processing stage's interface (PRODUCT.md §11, docs/PLUGINS.md).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mb::plugins {

// A plugin that cannot be configured, started, or that failed while processing (crashed,
// timed out, answered garbage): one line, naming the plugin.
class PluginError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// What a plugin learns about the request it processes: never API keys, never the prompt's
// text or other requests' data.
struct RequestInfo {
    uint64_t id = 0;          // the request's index in its run (or the server's counter)
    std::string mode;         // "fast", "regular" or "remote"
    int64_t promptTokens = 0;
    int64_t maxTokens = 0;
};

// What one call gives back: the text that may be shown now (after what was shown before),
// and whether the plugin ends the response here (then `reason` says why, one line).
struct Emit {
    std::string text;
    bool end = false;
    std::string reason;
};

// One request's instance of a plugin. Calls come from one thread, in order: start, any
// number of text() calls with the stream's chunks (UTF-8, possibly cut inside a
// character), then end() unless a call returned `end`. A plugin may hold text back (a
// filter must not show half of a banned word) and give it out later; end() flushes.
// Throws PluginError when it fails.
class Plugin {
public:
    virtual ~Plugin() = default;
    virtual void start(const RequestInfo&) {}
    virtual Emit text(std::string_view chunk) = 0;
    virtual Emit end() = 0;
};

// One entry of a chain, configured once and shared by every request: thread-safe, makes a
// fresh Plugin per request so no state crosses requests.
class PluginFactory {
public:
    virtual ~PluginFactory() = default;
    virtual std::string type() const = 0;         // "word_filter", "script", ...
    virtual std::string describe() const = 0;     // one line for tables and reports
    // What a run records of this entry: its type and configuration (a script's path and
    // sha256, the sandbox it gets). Never secrets.
    virtual nlohmann::json record() const = 0;
    virtual std::unique_ptr<Plugin> make() const = 0; // throws PluginError
};

} // namespace mb::plugins
