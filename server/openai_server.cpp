// OpenAiServer: request parsing, streaming through a per-request queue, OpenAI-shaped JSON out.
#include "server/openai_server.h"

#include "server/exchange.h"
#include "server/guarded_http_server.h"
#include "server/request_head.h"
#include "server/request_prompt.h"
#include "server/vision_encoder.h"

#include "engine/clip_model.h"

#include <httplib.h>
#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

namespace mb::server {

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

int64_t nowNs() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// Request bodies above this are refused with 413 (a 131,072-token prompt is well under 1 MiB).
constexpr size_t kMaxBodyBytes = size_t{16} << 20;

// "Bearer KEY", the scheme in any case (RFC 7235), one or more spaces before the key.
bool bearerMatches(const std::string& header, const std::string& key) {
    if (header.size() < 7) return false;
    for (size_t i = 0; i < 6; ++i)
        if (std::tolower(static_cast<unsigned char>(header[i])) != "bearer"[i]) return false;
    size_t at = 6;
    if (header[at] != ' ') return false;
    while (at < header.size() && header[at] == ' ') ++at;
    return header.compare(at, std::string::npos, key) == 0;
}


std::string dump(const Json& j) {
    return dumpJson(j);
}

void sendError(httplib::Response& res, const ApiError& e) {
    res.status = e.status;
    res.set_content(dump({{"error", {{"message", e.message}, {"type", e.type}, {"code", e.status}}}}),
                    "application/json");
}

// What one request asks for, parsed and checked.
struct ParsedRequest {
    bool chat = false;
    bool stream = false;
    bool includeUsage = false;
    engine::InferenceRequest inference;
};

// Debian's cpp-httplib 0.11 is built with a listen backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG,
// fixed inside the shared library). 32 clients connecting at once overflow it and some
// connections are reset. Listening again on the bound socket raises the backlog (Linux
// allows it); the socket is found by its port among this process's listening sockets.
void widenListenBacklog(int port) {
    const int maxFd = std::min(::getdtablesize(), 65536);
    for (int fd = 3; fd < maxFd; ++fd) {
        int accepting = 0;
        socklen_t len = sizeof accepting;
        if (::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &len) != 0 || !accepting) continue;
        sockaddr_storage a{};
        socklen_t alen = sizeof a;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &alen) != 0) continue;
        int p = -1;
        if (a.ss_family == AF_INET) p = ntohs(reinterpret_cast<sockaddr_in*>(&a)->sin_port);
        if (a.ss_family == AF_INET6) p = ntohs(reinterpret_cast<sockaddr_in6*>(&a)->sin6_port);
        if (p == port) ::listen(fd, SOMAXCONN);
    }
}

} // namespace

struct OpenAiServer::Impl {
    engine::Session& session;
    ServerOptions options;
    GuardedHttpServer http;
    ServerMetrics metrics;
    std::atomic<uint64_t> nextId{1};
    std::atomic<bool> stopping{false};
    std::unique_ptr<VisionEncoder> vision; // with options.vision

    Impl(engine::Session& s, ServerOptions o)
        : session(s), options(std::move(o)),
          http(GateLimits{.workers = options.httpThreads,
                          .headTimeout = options.headTimeout,
                          .bodyTimeout = options.bodyTimeout,
                          .maxBodyBytes = kMaxBodyBytes}) {
        if (options.vision) {
            options.vision->checkEmbeddingWidth(session.config().dim); // throws engine::ClipError
            vision = std::make_unique<VisionEncoder>(options.vision, options.visionThreads, options.visionDevice);
        }
    }

    ParsedRequest parse(const httplib::Request& req, bool chat) {
        Json body;
        try {
            body = Json::parse(req.body);
        } catch (const std::exception& e) {
            throw ApiError{400, "invalid_request_error", std::string("the body is not JSON: ") + e.what()};
        }
        if (!body.is_object()) throw ApiError{400, "invalid_request_error", "the body must be a JSON object"};
        const auto bad = badRequest;
        try {
            if (body.contains("model") && !body["model"].is_null() && !options.modelName.empty() &&
                body["model"].get<std::string>() != options.modelName)
                throw ApiError{404, "not_found_error",
                               "model '" + body["model"].get<std::string>() + "' is not served here (this server has '" +
                                   options.modelName + "')"};
            // OpenAI clients send null for "not set": treat it as absent. Counts must be integers.
            for (auto it = body.begin(); it != body.end();)
                it = it.value().is_null() ? body.erase(it) : std::next(it);
            for (const char* key : {"n", "max_tokens", "max_completion_tokens", "top_k", "seed"})
                if (body.contains(key) && !body[key].is_number_integer())
                    throw bad(std::string(key) + ": must be an integer");
            if (body.value("n", 1) != 1) throw bad("n: only 1 choice per request is supported");
            if (body.contains("stop") && !body["stop"].is_null() && !(body["stop"].is_array() && body["stop"].empty()))
                throw bad("stop: stop sequences are not supported; the request ends at EOS or max_tokens");
            ParsedRequest p;
            p.chat = chat;
            p.stream = body.value("stream", false);
            if (body.contains("stream_options") && body["stream_options"].is_object())
                p.includeUsage = body["stream_options"].value("include_usage", false);
            if (chat) p.inference = chatRequestOf(body, {session, options.chatFamily, vision.get(), metrics});
            else p.inference.prompt = completionPromptOf(body, session);
            const int64_t maxTokens =
                body.contains("max_completion_tokens") ? body["max_completion_tokens"].get<int64_t>()
                                                       : body.value("max_tokens", int64_t{chat ? 256 : 16});
            if (maxTokens < 1 || maxTokens > 1 << 20) throw bad("max_tokens: must be between 1 and 1048576");
            p.inference.maxTokens = static_cast<int32_t>(maxTokens);
            auto& s = p.inference.sampling;
            s.temperature = body.value("temperature", 1.0f);
            s.topP = body.value("top_p", 1.0f);
            s.topK = body.value("top_k", 0);
            s.minP = body.value("min_p", 0.0f);
            s.repeatPenalty = body.value("repetition_penalty", 1.0f);
            if (body.contains("seed") && !body["seed"].is_null()) s.seed = body["seed"].get<uint64_t>();
            if (const std::string why = s.validate(); !why.empty()) throw bad(why);
            p.inference.stopAtEos = !body.value("ignore_eos", false);
            return p;
        } catch (const Json::exception& e) {
            throw bad(std::string("a field has the wrong type: ") + e.what());
        }
    }

    void handle(const httplib::Request& req, httplib::Response& res, bool chat) {
        ParsedRequest p;
        try {
            p = parse(req, chat);
        } catch (const ApiError& e) {
            metrics.requestFailed();
            return sendError(res, e);
        }
        const std::string id = (chat ? "chatcmpl-" : "cmpl-") + std::to_string(nextId++);
        const int64_t created =
            std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
        int64_t imageTokens = 0;
        for (const engine::PromptImage& im : p.inference.images) imageTokens += im.count;
        ResponseShape shape{chat, p.stream, p.includeUsage, id, created, options.modelName,
                            static_cast<int64_t>(p.inference.prompt.size()), imageTokens};
        auto ex = std::make_shared<Exchange>(std::move(shape), session, metrics);
        ex->submittedNs = nowNs();
        engine::EventSink sink;
        if (options.plugins && !options.plugins->empty()) {
            // The chain runs on the exchange's post-processing stage, never on the engine thread.
            Exchange* raw = ex.get();
            plugins::RequestInfo info{nextId.load(), session.profile().name,
                                      static_cast<int64_t>(p.inference.prompt.size()), p.inference.maxTokens};
            ex->stage = std::make_unique<lab::PostStage>(
                *options.plugins, std::move(info),
                [raw](const engine::RequestEvent& e, const std::string& shown, int64_t, const plugins::ChainRun& run) {
                    raw->onEvent(e, shown, &run);
                });
            sink = [ex](const engine::RequestEvent& e) { ex->stage->push(e); };
        } else {
            // Runs on the engine thread: format and queue, never block.
            sink = [ex](const engine::RequestEvent& e) {
                ex->onEvent(e, e.kind == engine::EventKind::Token ? e.text : std::string(), nullptr);
            };
        }
        ex->id = session.submit(p.inference, sink);
        {
            // Rejections arrive inside submit: answer them with an HTTP error, not a stream.
            std::lock_guard g(ex->mutex);
            if (ex->finished && ex->final.status == engine::FinishStatus::Rejected) {
                const bool full = ex->final.error.find("queue is full") != std::string::npos;
                return sendError(res, {full ? 503 : 400, full ? "server_overloaded" : "invalid_request_error",
                                       ex->final.error});
            }
        }
        if (p.stream) {
            if (p.chat) {
                std::lock_guard g(ex->mutex);
                ex->chunks.push_front(ex->frame("", nullptr, true));
            }
            res.set_header("Cache-Control", "no-cache");
            res.set_chunked_content_provider(
                "text/event-stream",
                [this, ex](size_t, httplib::DataSink& out) {
                    std::unique_lock lock(ex->mutex);
                    ex->changed.wait_for(lock, std::chrono::milliseconds(200),
                                         [&] { return !ex->chunks.empty() || ex->finished || stopping.load(); });
                    while (!ex->chunks.empty()) {
                        const std::string c = std::move(ex->chunks.front());
                        ex->chunks.pop_front();
                        lock.unlock();
                        if (!out.write(c.data(), c.size())) return false; // the client went away
                        lock.lock();
                    }
                    if (ex->finished) {
                        lock.unlock();
                        out.done();
                        return true;
                    }
                    if (stopping.load()) { // end the stream with a reason rather than cut it
                        lock.unlock();
                        session.cancel(ex->id);
                        const std::string bye = "data: " +
                                                dump({{"error", {{"message", "the server is shutting down"},
                                                                 {"type", "server_error"}}}}) +
                                                "\n\ndata: [DONE]\n\n";
                        out.write(bye.data(), bye.size());
                        out.done();
                        return true;
                    }
                    return out.is_writable();
                },
                [this, ex](bool success) {
                    bool done;
                    {
                        std::lock_guard g(ex->mutex);
                        done = ex->finished;
                    }
                    if (!success && !done) session.cancel(ex->id);
                });
            return;
        }
        std::unique_lock lock(ex->mutex);
        while (!ex->finished) {
            ex->changed.wait_for(lock, std::chrono::milliseconds(200));
            if (stopping.load() && !ex->finished) {
                lock.unlock();
                session.cancel(ex->id);
                lock.lock();
            }
        }
        const engine::RequestEvent e = ex->final;
        if (!ex->postprocessError.empty()) return sendError(res, {500, "server_error", ex->postprocessError});
        if (e.status != engine::FinishStatus::Ok)
            return sendError(res, {e.status == engine::FinishStatus::Cancelled ? 503 : 500,
                                   e.status == engine::FinishStatus::Cancelled ? "cancelled" : "server_error",
                                   e.error.empty() ? "the request was cancelled" : e.error});
        Json choice{{"index", 0}, {"finish_reason", finishReasonOf(e, ex->endedByPlugin)}};
        if (chat) {
            choice["message"] = {{"role", "assistant"}, {"content", ex->text}};
        } else {
            choice["text"] = ex->text;
            choice["logprobs"] = nullptr;
        }
        res.set_content(dump({{"id", id},
                              {"object", chat ? "chat.completion" : "text_completion"},
                              {"created", created},
                              {"model", options.modelName},
                              {"choices", Json::array({choice})},
                              {"usage", usageOf(e.promptTokens, e.outputTokens, e.cachedTokens, e.imageTokens)}}),
                        "application/json");
    }

    void routes() {
        http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
            if (options.apiKey.empty() || req.path.rfind("/v1/", 0) != 0) return httplib::Server::HandlerResponse::Unhandled;
            if (bearerMatches(req.get_header_value("Authorization"), options.apiKey))
                return httplib::Server::HandlerResponse::Unhandled;
            metrics.requestFailed();
            sendError(res, {401, "authentication_error", "missing or wrong API key (Authorization: Bearer KEY)"});
            return httplib::Server::HandlerResponse::Handled;
        });
        http.Post("/v1/completions", [this](const httplib::Request& q, httplib::Response& r) { handle(q, r, false); });
        http.Post("/v1/chat/completions", [this](const httplib::Request& q, httplib::Response& r) { handle(q, r, true); });
        http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& r) {
            r.set_content(dump({{"object", "list"},
                                {"data", Json::array({{{"id", options.modelName},
                                                       {"object", "model"},
                                                       {"owned_by", "modebench"},
                                                       {"max_model_len", session.contextLimit()}}})}}),
                          "application/json");
        });
        http.Get("/health", [](const httplib::Request&, httplib::Response& r) {
            r.set_content(R"({"status":"ok"})", "application/json");
        });
        http.Get("/metrics", [this](const httplib::Request&, httplib::Response& r) {
            r.set_content(metrics.render(session.stats(), options.modelName), "text/plain; version=0.0.4");
        });
        // A body past the limit is refused while it is read, whatever its framing (the gate
        // answers a declared Content-Length past it before reading any): 413 with the limit named.
        http.set_error_handler([](const httplib::Request&, httplib::Response& r) {
            if (!r.body.empty()) return;
            const BodyFailure body = GuardedHttpServer::currentBodyFailure();
            if (body == BodyFailure::OverLimit || r.status == 413) {
                r.set_header("Connection", "close");
                sendError(r, {413, "invalid_request_error", bodyTooLargeMessage(kMaxBodyBytes)});
            } else if (body == BodyFailure::TimedOut) {
                r.set_header("Connection", "close");
                sendError(r, {408, "invalid_request_error", "the request body did not arrive in time"});
            } else {
                sendError(r, {r.status, r.status == 404 ? "not_found_error" : "invalid_request_error",
                              "HTTP " + std::to_string(r.status)});
            }
        });
    }
};

OpenAiServer::OpenAiServer(engine::Session& session, ServerOptions options)
    : m(std::make_unique<Impl>(session, std::move(options))) {
    m->routes();
}

OpenAiServer::~OpenAiServer() {
    stop();
}

int OpenAiServer::bind() {
    // httplib's default options set SO_REUSEPORT on Linux, which lets a second server bind a
    // port already served and the kernel then splits connections between the two. Only
    // SO_REUSEADDR (rebinding over TIME_WAIT after a restart) is wanted.
    m->http.set_socket_options([](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    int port = m->options.port;
    if (port == 0) {
        port = m->http.bind_to_any_port(m->options.host);
        if (port < 0) throw std::runtime_error("cannot listen on " + m->options.host + " (any port)");
    } else {
        errno = 0;
        if (!m->http.bind_to_port(m->options.host, port)) {
            // httplib reports only failure; bind()'s errno survives its close() of the socket.
            const int err = errno;
            const std::string where = m->options.host + ":" + std::to_string(port);
            if (err == EADDRINUSE) throw std::runtime_error("cannot listen on " + where + ": port in use");
            if (err == EADDRNOTAVAIL) throw std::runtime_error("cannot listen on " + where + ": not an address of this machine");
            if (err == EACCES) throw std::runtime_error("cannot listen on " + where + ": permission denied");
            throw std::runtime_error("cannot listen on " + where + " (in use, or not an address of this machine)");
        }
    }
    widenListenBacklog(port);
    return port;
}

void OpenAiServer::run() {
    m->http.listen_after_bind();
}

void OpenAiServer::stop() {
    m->stopping = true;
    m->http.stop();
    m->http.shutdownConnections();
}

const ServerMetrics& OpenAiServer::metrics() const {
    return m->metrics;
}

} // namespace mb::server
