// Script plugins: configuration and approval, a spare sandboxed process, one fresh process per request.
#include "plugins/script_plugin.h"

#include "engine/unicode.h"
#include "plugins/python_host.h"
#include "plugins/script_process.h"
#include "plugins/sha256.h"

#include <condition_variable>
#include <deque>
#include <fstream>
#include <functional>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

namespace mb::plugins {

namespace {

using Json = nlohmann::json;
using Spawn = std::function<std::unique_ptr<ScriptProcess>()>;

// At least this long for Python to start and load the script, whatever the call timeout.
constexpr double kLoadTimeoutMs = 5000;

// Processes kept ready: taken by requests, refilled in the background. The pool starts
// at one and grows (to kMaxSpares) each time a request finds it empty, so a run with N
// requests in flight soon has N ready and Python's start-up stays off their path.
constexpr size_t kMaxSpares = 8;

class Spares {
public:
    explicit Spares(Spawn spawn) : m_spawn(std::move(spawn)) {
        m_ready.push_back(m_spawn()); // the first one, here: a script that cannot load fails now
        m_worker = std::thread([this] { loop(); });
    }
    ~Spares() {
        {
            std::lock_guard lock(m_mutex);
            m_stop = true;
        }
        m_wake.notify_all();
        m_worker.join();
    }
    std::unique_ptr<ScriptProcess> take() {
        std::unique_ptr<ScriptProcess> out;
        {
            std::lock_guard lock(m_mutex);
            ++m_takes;
            if (!m_ready.empty()) {
                out = std::move(m_ready.front());
                m_ready.pop_front();
            } else if (m_target < kMaxSpares) {
                ++m_target;
            }
        }
        m_wake.notify_all();
        return out ? std::move(out) : m_spawn();
    }

private:
    void loop() {
        std::unique_lock lock(m_mutex);
        for (;;) {
            m_wake.wait(lock, [this] { return m_stop || m_ready.size() < m_target; });
            if (m_stop) return;
            lock.unlock();
            std::unique_ptr<ScriptProcess> made;
            try {
                made = m_spawn();
            } catch (const PluginError&) {
                // the request that wants it spawns its own and reports why
            }
            lock.lock();
            if (!made) { // a failing spawn: wait for the next take rather than spin
                const uint64_t seen = m_takes;
                m_wake.wait(lock, [this, seen] { return m_stop || m_takes != seen; });
                if (m_stop) return;
                continue;
            }
            if (!m_stop && m_ready.size() < m_target) m_ready.push_back(std::move(made));
            lock.unlock();
            made.reset(); // one not needed is killed outside the lock
            lock.lock();
        }
    }
    Spawn m_spawn;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::deque<std::unique_ptr<ScriptProcess>> m_ready;
    size_t m_target = 1;
    uint64_t m_takes = 0;
    bool m_stop = false;
    std::thread m_worker;
};

// One request: its own process. Holds back a cut-off UTF-8 character until the next chunk.
class ScriptInstance final : public Plugin {
public:
    ScriptInstance(std::unique_ptr<ScriptProcess> proc, double timeoutMs, Json config)
        : m_proc(std::move(proc)), m_timeoutMs(timeoutMs), m_config(std::move(config)) {}

    void start(const RequestInfo& info) override {
        Json request = {{"id", info.id}, {"mode", info.mode}, {"prompt_tokens", info.promptTokens},
                        {"max_tokens", info.maxTokens}, {"config", m_config}};
        call({{"call", "start"}, {"request", std::move(request)}}, "on_start");
    }
    Emit text(std::string_view chunk) override {
        m_pending += chunk;
        const size_t keep = engine::incompleteUtf8Tail(m_pending);
        if (m_pending.size() == keep) return {};
        const std::string send = engine::sanitizeUtf8(std::string_view(m_pending).substr(0, m_pending.size() - keep));
        m_pending.erase(0, m_pending.size() - keep);
        return call({{"call", "text"}, {"chunk", send}}, "on_text");
    }
    Emit end() override {
        Emit out;
        if (!m_pending.empty()) { // a character cut off for good: U+FFFD
            out = call({{"call", "text"}, {"chunk", engine::sanitizeUtf8(m_pending)}}, "on_text");
            m_pending.clear();
            if (out.end) return out;
        }
        Emit last = call({{"call", "end"}}, "on_end");
        m_proc->stop();
        last.text = out.text + last.text;
        return last;
    }

private:
    Emit call(const Json& msg, const char* name) {
        if (!m_failure.empty()) throw PluginError(m_failure);
        try {
            const Json reply = m_proc->call(msg, name, m_timeoutMs);
            Emit e{reply.value("text", std::string())};
            e.end = reply.value("end", false);
            if (e.end) e.reason = reply.value("reason", std::string());
            return e;
        } catch (const PluginError& err) {
            m_failure = err.what();
            m_proc->stop();
            throw;
        }
    }
    std::unique_ptr<ScriptProcess> m_proc;
    double m_timeoutMs;
    Json m_config;
    std::string m_pending, m_failure;
};

struct ScriptConfig {
    std::filesystem::path path;
    std::string shownPath; // as the chain gives it
    std::string sha256;
    double timeoutMs = 2000;
    SandboxLimits limits;
    Json config = Json::object();
};

int integerKey(const Json& j, const char* key, int lo, int hi) {
    const Json& v = j.at(key);
    if (!v.is_number_integer() || v.get<int64_t>() < lo || v.get<int64_t>() > hi)
        throw PluginError(std::string("script plugin: \"") + key + "\" must be an integer from " + std::to_string(lo) +
                          " to " + std::to_string(hi));
    return v.get<int>();
}

ScriptConfig parseConfig(const Json& j, const ChainOptions& options) {
    static const std::set<std::string> kKeys = {"type", "path", "sha256", "timeout_ms", "cpu_seconds", "memory_mb", "config"};
    if (!j.is_object()) throw PluginError("script plugin: the entry must be a JSON object");
    for (const auto& [key, value] : j.items())
        if (!kKeys.count(key))
            throw PluginError("script plugin: unknown key \"" + key +
                              "\" (known: type, path, sha256, timeout_ms, cpu_seconds, memory_mb, config)");
    if (!j.contains("path") || !j["path"].is_string() || j["path"].get<std::string>().empty())
        throw PluginError("script plugin: \"path\" (the script's file) is required");
    ScriptConfig c;
    c.shownPath = j["path"].get<std::string>();
    c.path = c.shownPath;
    if (c.path.is_relative() && !options.baseDir.empty()) c.path = options.baseDir / c.path;
    const std::string name = c.path.filename().string();
    if (!j.contains("sha256") || !j["sha256"].is_string())
        throw PluginError("script plugin " + name + " needs its \"sha256\": run `modebench-cli plugins audit " +
                          c.shownPath + "` to see it");
    c.sha256 = j["sha256"].get<std::string>();
    for (char& ch : c.sha256) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    c.timeoutMs = options.callTimeoutMs;
    if (j.contains("timeout_ms")) {
        if (!j["timeout_ms"].is_number() || j["timeout_ms"].get<double>() <= 0)
            throw PluginError("script plugin " + name + ": \"timeout_ms\" must be a positive number");
        c.timeoutMs = j["timeout_ms"].get<double>();
    }
    if (j.contains("cpu_seconds")) c.limits.cpuSeconds = integerKey(j, "cpu_seconds", 1, 86400);
    if (j.contains("memory_mb")) c.limits.memoryBytes = int64_t{integerKey(j, "memory_mb", 64, 1 << 20)} << 20;
    if (j.contains("config")) c.config = j["config"];
    return c;
}

std::string readAll(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw PluginError("script plugin: cannot read " + p.string());
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

class ScriptFactory final : public PluginFactory {
public:
    ScriptFactory(ScriptConfig c, const ChainOptions& options) : m_c(std::move(c)) {
        const std::string name = m_c.path.filename().string();
        const std::string source = readAll(m_c.path);
        std::string actual;
        try {
            actual = sha256Hex(source);
        } catch (const std::runtime_error& e) {
            throw PluginError("script plugin " + name + ": " + e.what());
        }
        if (actual != m_c.sha256)
            throw PluginError("script plugin " + name + " changed since its sha256 was recorded (the file is " +
                              actual.substr(0, 8) + "…, the chain says " + m_c.sha256.substr(0, 8) +
                              "…): audit it again (modebench-cli plugins audit " + m_c.shownPath + ") and approve the new hash");
        if (!options.approved || !options.approved(actual))
            throw PluginError("script plugin " + name + " (sha256 " + actual.substr(0, 8) +
                              "…) is not approved: audit it and approve it by hash (modebench-cli plugins approve " +
                              m_c.shownPath + ")");
        const SandboxSpec spec = pythonSandboxSpec(resolvePython(options), kPluginHost, m_c.limits, options.allowUnsandboxed);
        if (options.approvalRecord) m_approval = options.approvalRecord(actual);
        m_sandbox = probeSandbox().toJson();
        m_sandbox["limits"] = m_c.limits.toJson();
        const Json hello = {{"name", name}, {"source_base64", base64(source)}, {"call", "load"}};
        const double loadMs = std::max(kLoadTimeoutMs, m_c.timeoutMs);
        m_spares = std::make_unique<Spares>([spec, hello, name, loadMs] {
            auto proc = std::make_unique<ScriptProcess>(spec, "script " + name);
            proc->call(hello, "loading", loadMs, "ready");
            return proc;
        });
    }

    std::string type() const override { return "script"; }
    std::string describe() const override {
        return "script(" + m_c.path.filename().string() + " " + m_c.sha256.substr(0, 8) + ")";
    }
    Json record() const override {
        Json r = {{"type", "script"}, {"path", m_c.shownPath}, {"sha256", m_c.sha256},
                  {"sandbox", m_sandbox}, {"timeout_ms", m_c.timeoutMs}};
        if (!m_approval.is_null()) r["approval"] = m_approval;
        return r;
    }
    std::unique_ptr<Plugin> make() const override {
        return std::make_unique<ScriptInstance>(m_spares->take(), m_c.timeoutMs, m_c.config);
    }

private:
    ScriptConfig m_c;
    Json m_sandbox, m_approval;
    std::unique_ptr<Spares> m_spares;
};

} // namespace

std::shared_ptr<const PluginFactory> makeScriptPlugin(const nlohmann::json& config, const ChainOptions& options) {
    return std::make_shared<ScriptFactory>(parseConfig(config, options), options);
}

} // namespace mb::plugins
