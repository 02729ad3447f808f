// Test helpers for the server and the remote client: a live server on loopback, scripted servers, one request.
#pragma once

#include "engine/session.h"
#include "lab/remote_target.h"
#include "server/openai_server.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mb::test {


// An OpenAiServer on a free loopback port, serving on its own thread.
class LiveServer {
public:
    LiveServer(const std::string& model, const std::string& profile, std::string apiKey = {},
               const std::function<void(server::ServerOptions&)>& tune = {}) {
        session = engine::Session::start(model, *engine::Profile::builtin(profile), {.threads = 1});
        server::ServerOptions o;
        o.port = 0;
        o.modelName = "stories";
        o.apiKey = std::move(apiKey);
        if (tune) tune(o);
        http = std::make_unique<server::OpenAiServer>(*session, o);
        port = http->bind();
        thread = std::thread([this] { http->run(); });
    }
    ~LiveServer() {
        http->stop();
        thread.join();
    }
    std::string url() const { return "remote:http://127.0.0.1:" + std::to_string(port) + "/v1#stories"; }
    httplib::Client client() const { return httplib::Client("127.0.0.1", port); }

    std::unique_ptr<engine::Session> session;
    std::unique_ptr<server::OpenAiServer> http;
    int port = 0;
    std::thread thread;
};

// Submits one request to a target and waits for its Finished event; collects the tokens
// and when they came (steady_clock ns, as RequestEvent::timeNs).
struct Outcome {
    engine::RequestEvent finished;
    std::vector<std::string> pieces;
    bool scheduled = false;
    int64_t submittedNs = 0;
    std::vector<int64_t> tokenTimesNs;
};
inline Outcome runOne(lab::Target& t, engine::InferenceRequest r, std::function<void(uint64_t)> afterFirstToken = {}) {
    std::promise<void> done;
    Outcome o;
    std::mutex m;
    std::atomic<uint64_t> id{0};
    std::promise<void> submitted;
    auto submittedFuture = submitted.get_future().share();
    o.submittedNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now().time_since_epoch()).count();
    const uint64_t got = t.submit(std::move(r), [&](const engine::RequestEvent& e) {
        bool first = false;
        {
            std::lock_guard g(m);
            if (e.kind == engine::EventKind::Scheduled) o.scheduled = true;
            if (e.kind == engine::EventKind::Token) {
                o.pieces.push_back(e.text);
                o.tokenTimesNs.push_back(e.timeNs);
                first = o.pieces.size() == 1;
            }
            if (e.kind == engine::EventKind::Finished) o.finished = e;
        }
        if (first && afterFirstToken) {
            submittedFuture.wait();
            afterFirstToken(id.load());
        }
        // Last: once the waiter wakes, this function's captured locals are gone.
        if (e.kind == engine::EventKind::Finished) done.set_value();
    });
    id = got;
    submitted.set_value();
    done.get_future().wait();
    return o;
}

inline engine::InferenceRequest request(std::vector<int32_t> prompt, int maxTokens, bool stopAtEos = true) {
    engine::InferenceRequest r;
    r.prompt = std::move(prompt);
    r.maxTokens = maxTokens;
    r.sampling.temperature = 0;
    r.stopAtEos = stopAtEos;
    return r;
}

// A scripted server for failures our own server does not produce.
class ScriptedServer {
public:
    explicit ScriptedServer(std::function<void(const httplib::Request&, httplib::Response&)> handler) {
        http.Post("/v1/completions", std::move(handler));
        port = http.bind_to_any_port("127.0.0.1");
        thread = std::thread([this] { http.listen_after_bind(); });
    }
    ~ScriptedServer() {
        http.stop();
        thread.join();
    }
    lab::RemoteSpec spec() const { return lab::RemoteSpec::parse("http://127.0.0.1:" + std::to_string(port) + "/v1"); }
    httplib::Server http;
    int port = 0;
    std::thread thread;
};

} // namespace mb::test
