// RemoteTarget: one streaming HTTP request per thread, SSE parsed into engine events.
#include "lab/remote_target.h"

#include "lab/sse_parser.h"

#ifdef MODEBENCH_HAVE_HTTP
#include <httplib.h>
#endif
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace mb::lab {

namespace {

using Json = nlohmann::json;

#ifdef MODEBENCH_HAVE_HTTP // the helpers of run(), which a build without HTTP does not have
constexpr size_t kMaxEventBytes = size_t{16} << 20; // one SSE event; a token chunk is bytes
int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// The message of an OpenAI-style error body, or the body itself (shortened).
std::string errorMessage(const std::string& body) {
    try {
        const Json j = Json::parse(body);
        if (j.contains("error")) {
            const Json& e = j["error"];
            if (e.is_string()) return e.get<std::string>();
            if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
        }
        if (j.contains("message") && j["message"].is_string()) return j["message"].get<std::string>();
    } catch (const std::exception&) {
    }
    std::string s = body.substr(0, 200);
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    return s;
}

// A token count from a usage object: a non-negative integer, else `fallback`. Proxies send
// null, strings or floats where a count belongs; none of them may end the run.
int64_t countOr(const Json& object, const char* key, int64_t fallback) {
    if (!object.is_object() || !object.contains(key)) return fallback;
    const Json& v = object[key];
    if (v.is_number_unsigned()) return static_cast<int64_t>(std::min<uint64_t>(v.get<uint64_t>(), INT64_MAX));
    if (v.is_number_integer()) return std::max<int64_t>(0, v.get<int64_t>());
    if (v.is_number_float() && std::isfinite(v.get<double>()) && v.get<double>() >= 0 && v.get<double>() < 9e18)
        return static_cast<int64_t>(v.get<double>());
    return fallback;
}

// A duration in milliseconds from llama.cpp's timings: finite and non-negative, else -1.
double millisecondsOr(const Json& object, const char* key) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_number()) return -1;
    const double v = object[key].get<double>();
    return std::isfinite(v) && v >= 0 ? v : -1;
}

std::string secondsText(double s) {
    char text[32];
    std::snprintf(text, sizeof text, "%g s", s);
    return text;
}

double secondsSince(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

void setTimeout(httplib::Client& c, double seconds, bool read) {
    const auto sec = static_cast<time_t>(seconds);
    const auto usec = static_cast<time_t>((seconds - static_cast<double>(sec)) * 1e6);
    if (read) c.set_read_timeout(sec, usec);
    else c.set_connection_timeout(sec, usec);
}
#endif

} // namespace

RemoteSpec RemoteSpec::parse(const std::string& text) {
    std::string s = isRemote(text) ? text.substr(7) : text;
    RemoteSpec r;
    if (const size_t hash = s.find('#'); hash != std::string::npos) {
        r.model = s.substr(hash + 1);
        s.resize(hash);
    }
    const size_t scheme = s.find("://");
    if (scheme == std::string::npos) throw std::invalid_argument("'" + text + "': expected http://HOST:PORT[/PREFIX][#MODEL]");
    r.scheme = s.substr(0, scheme);
    if (r.scheme != "http" && r.scheme != "https")
        throw std::invalid_argument("'" + text + "': the scheme must be http or https");
    std::string rest = s.substr(scheme + 3);
    if (const size_t q = rest.find('?'); q != std::string::npos) {
        const std::string query = rest.substr(q + 1);
        rest.resize(q);
        if (query == "prompt=text") r.textPrompts = true;
        else if (query != "prompt=tokens" && !query.empty())
            throw std::invalid_argument("'" + text + "': unknown option '" + query + "' (prompt=text or prompt=tokens)");
    }
    const size_t slash = rest.find('/');
    std::string authority = rest.substr(0, slash);
    if (slash != std::string::npos) {
        r.prefix = rest.substr(slash);
        while (r.prefix.size() > 1 && r.prefix.back() == '/') r.prefix.pop_back();
        if (r.prefix == "/") r.prefix.clear();
    }
    r.port = r.scheme == "https" ? 443 : 80;
    if (const size_t colon = authority.rfind(':'); colon != std::string::npos && authority.back() != ']') {
        const std::string port = authority.substr(colon + 1);
        char* end = nullptr;
        const long p = std::strtol(port.c_str(), &end, 10);
        if (port.empty() || *end != '\0' || p < 1 || p > 65535)
            throw std::invalid_argument("'" + text + "': bad port '" + port + "'");
        r.port = static_cast<int>(p);
        authority.resize(colon);
    }
    if (authority.empty()) throw std::invalid_argument("'" + text + "': no host");
    r.host = authority;
    return r;
}

std::string RemoteSpec::url() const {
    return scheme + "://" + host + ":" + std::to_string(port) + prefix + (textPrompts ? "?prompt=text" : "") +
           (model.empty() ? "" : "#" + model);
}

struct RemoteTarget::Call {
    uint64_t id = 0;
    engine::InferenceRequest request;
    engine::EventSink sink;
    std::atomic<bool> cancelled{false};
    std::mutex mutex;
#ifdef MODEBENCH_HAVE_HTTP
    httplib::Client* client = nullptr; // while the request runs, for cancel()
#endif
};

RemoteTarget::RemoteTarget(RemoteSpec spec, std::string description)
    : m_spec(std::move(spec)), m_description(std::move(description)) {
#ifndef MODEBENCH_HAVE_HTTP
    throw std::invalid_argument("remote target " + m_spec.url() + ": this build has no HTTP client (MODEBENCH_HTTP=OFF)");
#endif
    if (!m_spec.apiKeyEnv.empty()) {
        const char* key = std::getenv(m_spec.apiKeyEnv.c_str());
        if (!key || !*key)
            throw std::invalid_argument("the environment variable " + m_spec.apiKeyEnv +
                                        " (the API key of " + m_spec.url() + ") is not set");
        m_apiKey = key;
    }
}

RemoteTarget::~RemoteTarget() {
    std::vector<uint64_t> ids;
    {
        std::lock_guard g(m_mutex);
        for (const auto& [id, call] : m_calls) ids.push_back(id);
    }
    for (uint64_t id : ids) cancel(id);
    waitIdle();
    std::lock_guard g(m_mutex);
    for (auto& [id, t] : m_threads) t.join();
}

uint64_t RemoteTarget::submit(engine::InferenceRequest request, engine::EventSink sink) {
    auto call = std::make_shared<Call>();
    call->request = std::move(request);
    call->sink = std::move(sink);
    std::lock_guard g(m_mutex);
    reapFinished();
    call->id = m_nextId++;
    m_calls[call->id] = call;
    m_threads.emplace(call->id, std::thread([this, call] { run(call); }));
    return call->id;
}

bool RemoteTarget::cancel(uint64_t id) {
    std::shared_ptr<Call> call;
    {
        std::lock_guard g(m_mutex);
        const auto it = m_calls.find(id);
        if (it == m_calls.end()) return false;
        call = it->second;
    }
    call->cancelled = true;
    std::lock_guard g(call->mutex);
#ifdef MODEBENCH_HAVE_HTTP
    if (call->client) call->client->stop(); // unblocks a read that is waiting for the server
#endif
    return true;
}

engine::SessionStats RemoteTarget::stats() const {
    engine::SessionStats s;
    s.prefixQueries = m_queries.load();
    s.prefixHits = m_hits.load();
    s.finished = static_cast<int64_t>(m_finished.load());
    std::lock_guard g(m_mutex);
    s.running = static_cast<int64_t>(m_calls.size());
    s.modelLoaded = true;
    return s;
}

void RemoteTarget::waitIdle() {
    std::unique_lock lock(m_mutex);
    m_idle.wait(lock, [&] { return m_calls.empty(); });
    reapFinished();
}

void RemoteTarget::reapFinished() {
    for (uint64_t id : m_done) {
        const auto it = m_threads.find(id);
        if (it == m_threads.end()) continue;
        it->second.join(); // it has left run(): joining does not wait on m_mutex
        m_threads.erase(it);
    }
    m_done.clear();
}

void RemoteTarget::run(std::shared_ptr<Call> call) {
#ifndef MODEBENCH_HAVE_HTTP
    (void)call; // unreachable: the constructor refused
#else
    pthread_setname_np(pthread_self(), "mb-remote");
    engine::RequestEvent fin;
    fin.id = call->id;
    fin.kind = engine::EventKind::Finished;
    fin.promptTokens = static_cast<int64_t>(call->request.prompt.size());
    std::string text;
    int64_t chunks = 0;
    int64_t serverCacheN = -1, serverPromptN = -1; // llama.cpp's timings: cached, evaluated prompt tokens
    bool sawDone = false, usage = false;
    std::string streamError;

    httplib::Client client(m_spec.scheme + "://" + m_spec.host + ":" + std::to_string(m_spec.port));
    setTimeout(client, m_spec.connectTimeoutS, false);
    setTimeout(client, m_spec.readTimeoutS, true);
    {
        std::lock_guard g(call->mutex);
        call->client = &client;
    }
    const auto& s = call->request.sampling;
    Json body{{"max_tokens", call->request.maxTokens},
              {"temperature", s.temperature},
              {"top_p", s.topP},
              {"seed", s.seed},
              {"stream", true},
              {"stream_options", {{"include_usage", true}}}};
    if (m_spec.textPrompts && m_decode) body["prompt"] = m_decode(call->request.prompt);
    else body["prompt"] = call->request.prompt;
    if (!m_spec.model.empty()) body["model"] = m_spec.model;
    if (s.topK > 0) body["top_k"] = s.topK;
    if (s.minP > 0) body["min_p"] = s.minP;
    if (!call->request.stopAtEos) body["ignore_eos"] = true;

    httplib::Request req;
    req.method = "POST";
    req.path = m_spec.prefix + "/completions";
    req.set_header("Content-Type", "application/json");
    req.set_header("Accept", "text/event-stream");
    if (!m_apiKey.empty()) req.set_header("Authorization", "Bearer " + m_apiKey);
    req.body = body.dump();
    int status = 0;
    bool eventStream = true; // false: a 200 whose Content-Type is not text/event-stream
    std::string errorBody;
    SseParser parser;
    const auto started = std::chrono::steady_clock::now();
    auto lastByte = started, lastEvent = started; // keep-alive comments move lastByte only
    auto onEvent = [&](const std::string& data) {
        if (data == "[DONE]") {
            sawDone = true;
            return;
        }
        Json j;
        try {
            j = Json::parse(data);
        } catch (const std::exception&) {
            streamError = "the server sent an event that is not JSON: " + data.substr(0, 120);
            return;
        }
        if (j.contains("error")) {
            streamError = "the server reported an error mid-stream: " + errorMessage(data);
            return;
        }
        if (j.contains("choices") && j["choices"].is_array() && !j["choices"].empty()) {
            const Json& c = j["choices"][0];
            std::string piece;
            if (c.contains("text") && c["text"].is_string()) piece = c["text"].get<std::string>();
            else if (c.contains("delta") && c["delta"].is_object() && c["delta"].contains("content") &&
                     c["delta"]["content"].is_string())
                piece = c["delta"]["content"].get<std::string>();
            if (!piece.empty()) {
                engine::RequestEvent t;
                t.id = call->id;
                t.kind = engine::EventKind::Token;
                t.timeNs = nowNs();
                t.text = piece;
                text += piece;
                ++chunks;
                call->sink(t);
            }
        }
        if (j.contains("usage") && j["usage"].is_object()) {
            const Json& u = j["usage"];
            usage = true;
            fin.promptTokens = countOr(u, "prompt_tokens", fin.promptTokens);
            fin.outputTokens = countOr(u, "completion_tokens", 0);
            if (u.contains("prompt_tokens_details"))
                fin.cachedTokens = countOr(u["prompt_tokens_details"], "cached_tokens", 0);
        }
        if (j.contains("timings") && j["timings"].is_object()) { // llama.cpp's server; the last one counts
            const Json& t = j["timings"];
            serverCacheN = countOr(t, "cache_n", serverCacheN);
            serverPromptN = countOr(t, "prompt_n", serverPromptN);
            fin.serverPromptMs = millisecondsOr(t, "prompt_ms");
            fin.serverPerTokenMs = millisecondsOr(t, "predicted_per_token_ms");
        }
    };
    auto onData = [&](const std::string& data) {
        lastEvent = std::chrono::steady_clock::now();
        try {
            onEvent(data);
        } catch (const std::exception& e) { // a field of an unexpected type, say
            streamError = std::string("the server sent an event this client cannot read (") + e.what() +
                          "): " + data.substr(0, 120);
        }
    };
    req.response_handler = [&](const httplib::Response& r) {
        status = r.status;
        lastByte = lastEvent = std::chrono::steady_clock::now();
        eventStream = r.get_header_value("Content-Type").rfind("text/event-stream", 0) == 0;
        if (status == 200 && !eventStream) return true; // read the body to say what it was
        if (status == 200) {
            engine::RequestEvent e;
            e.id = call->id;
            e.kind = engine::EventKind::Scheduled;
            e.timeNs = nowNs();
            call->sink(e);
        }
        return !call->cancelled.load();
    };
    req.content_receiver = [&](const char* data, size_t len, uint64_t, uint64_t) {
        if (call->cancelled.load()) return false;
        lastByte = std::chrono::steady_clock::now();
        if (status != 200 || !eventStream) {
            errorBody.append(data, len);
            return errorBody.size() < 65536;
        }
        for (const auto& event : parser.feed(std::string_view(data, len))) onData(event);
        if (parser.buffered() > kMaxEventBytes)
            streamError = "the server sent an event longer than " + std::to_string(kMaxEventBytes >> 20) + " MiB";
        // Keep-alive comments reset the socket's read timeout but are no progress.
        else if (secondsSince(lastEvent) > m_spec.readTimeoutS)
            streamError = "no event from " + m_spec.url() + " for " + secondsText(m_spec.readTimeoutS) +
                          " (only keep-alive comments): timed out";
        else if (m_spec.requestTimeoutS > 0 && secondsSince(started) > m_spec.requestTimeoutS)
            streamError = "the request to " + m_spec.url() + " ran past its " +
                          secondsText(m_spec.requestTimeoutS) + " limit: timed out";
        return streamError.empty() && !call->cancelled.load();
    };
    if (call->cancelled.load()) {
        fin.status = engine::FinishStatus::Cancelled;
    } else {
        const httplib::Result result = client.send(req);
        for (const auto& event : parser.finish()) onData(event);
        if (call->cancelled.load()) {
            fin.status = engine::FinishStatus::Cancelled;
        } else if (!streamError.empty()) {
            fin.status = engine::FinishStatus::Error;
            fin.error = streamError;
        } else if (!result && secondsSince(lastByte) >= 0.95 * m_spec.readTimeoutS) {
            fin.status = engine::FinishStatus::Error; // httplib says "Read" for a timeout too
            fin.error = (status == 0 ? "no response from " : "the stream from ") + m_spec.url() + " went silent for " +
                        secondsText(m_spec.readTimeoutS) + ": timed out";
        } else if (!result && status == 0) {
            fin.status = engine::FinishStatus::Error;
            fin.error = "cannot reach " + m_spec.url() + ": " + httplib::to_string(result.error());
        } else if (status == 200 && !eventStream) {
            fin.status = engine::FinishStatus::Error;
            fin.error = "the server at " + m_spec.url() +
                        " answered without an event stream (does it support \"stream\": true?): " +
                        errorMessage(errorBody);
        } else if (status != 200) {
            fin.status = engine::FinishStatus::Error;
            fin.error = "HTTP " + std::to_string(status) + " from " + m_spec.url() + ": " + errorMessage(errorBody);
        } else if (!result) {
            fin.status = engine::FinishStatus::Error;
            fin.error = "the stream from " + m_spec.url() + " broke off: " + httplib::to_string(result.error());
        } else if (!sawDone) {
            fin.status = engine::FinishStatus::Error;
            fin.error = "the stream from " + m_spec.url() + " ended without [DONE]";
        } else {
            fin.status = engine::FinishStatus::Ok;
        }
    }
    {
        std::lock_guard g(call->mutex);
        call->client = nullptr;
    }
    if (!usage) fin.outputTokens = chunks;
    // What the server says it read: fewer prompt ids than were sent means it cut the prompt
    // (a fast-mode cap, say); cached tokens cannot exceed the prompt.
    const auto sent = static_cast<int64_t>(call->request.prompt.size());
    if (usage && !m_spec.textPrompts && fin.promptTokens < sent) fin.truncatedTokens = sent - fin.promptTokens;
    // llama.cpp says what it evaluated (prompt_n) and, in newer builds, what it reused (cache_n).
    if (fin.cachedTokens == 0 && serverCacheN >= 0) fin.cachedTokens = serverCacheN;
    else if (fin.cachedTokens == 0 && serverPromptN >= 0) fin.cachedTokens = fin.promptTokens - serverPromptN;
    fin.cachedTokens = std::clamp<int64_t>(fin.cachedTokens, 0, fin.promptTokens);
    fin.stop = fin.outputTokens >= call->request.maxTokens ? engine::StopReason::Length : engine::StopReason::Eos;
    fin.text = std::move(text);
    fin.timeNs = nowNs();
    if (fin.status == engine::FinishStatus::Ok) {
        m_queries += static_cast<uint64_t>(fin.promptTokens);
        m_hits += static_cast<uint64_t>(fin.cachedTokens);
    }
    call->sink(fin);
    ++m_finished;
    std::lock_guard g(m_mutex);
    m_calls.erase(call->id);
    m_done.push_back(call->id);
    m_idle.notify_all();
#endif
}

} // namespace mb::lab
