// An OpenAI-compatible HTTP server over one engine session: completions, chat, models, health, metrics.
#pragma once

#include "engine/session.h"
#include "engine/chat_template.h"
#include "plugins/chain.h"
#include "server/server_metrics.h"

#include <chrono>
#include <memory>
#include <string>

namespace mb::engine {
class ClipModel;
}

namespace mb::server {

struct ServerOptions {
    std::string host = "127.0.0.1"; // loopback unless the user asks for more
    int port = 8080;                // 0: any free port (tests)
    std::string apiKey;             // non-empty: /v1/* need "Authorization: Bearer KEY"
    std::string modelName;          // the id /v1/models lists; "model" in requests must match it
    engine::ChatFamily chatFamily = engine::ChatFamily::Plain;
    int httpThreads = 64;           // requests served at once (streams hold one each); /health and
                                    // /metrics have a worker of their own
    std::chrono::milliseconds headTimeout{10'000}; // to send a whole request head (or idle between requests)
    std::chrono::milliseconds bodyTimeout{30'000}; // to send the body after its head
    // Output plugins applied to every response, streamed or not (PRODUCT.md §11); a plugin
    // that ends a response gives finish_reason "content_filter", one that fails an error.
    std::shared_ptr<const plugins::Chain> plugins;
    // The vision encoder + projector (serve --mmproj), its width checked against the model's;
    // null: image parts are refused. visionThreads: the encoder's pool (one encode at a time);
    // visionDevice: where it runs (serve's --device, as the session's).
    std::shared_ptr<const engine::ClipModel> vision;
    int visionThreads = 1;
    engine::Device visionDevice;
};

// Endpoints: POST /v1/completions and /v1/chat/completions (streaming as server-sent
// events ending in `data: [DONE]`, or one JSON response; `stream_options.include_usage`
// adds a usage chunk with `prompt_tokens_details.cached_tokens`), GET /v1/models,
// GET /health, GET /metrics (Prometheus text). Completions take a string or an array of
// token ids as the prompt. A chat message's content may be an array of text and image_url
// parts (data: URLs only, server/image_parts.h; needs `vision`): each image is encoded on
// the request's HTTP worker, one at a time, and its positions count as prompt tokens.
// Errors are OpenAI-shaped JSON: 400 for a bad request or a prompt over the profile's
// limit, 401 without the key, 404 for another model name, 503 when the session's queue is
// full. A client that disconnects mid-stream has its request cancelled.
//
// Threads: connections wait for their request head in the gate's reception thread
// (server/guarded_http_server.h), then a worker runs the handler; tokens arrive on
// the session's engine thread and are handed to the handler through a per-request queue.
// The session is used, not owned, and must outlive the server.
class OpenAiServer {
public:
    OpenAiServer(engine::Session& session, ServerOptions options);
    ~OpenAiServer();
    OpenAiServer(const OpenAiServer&) = delete;
    OpenAiServer& operator=(const OpenAiServer&) = delete;

    // Binds the address; returns the port (the chosen one when options.port == 0).
    // Throws std::runtime_error when it cannot (address in use, bad host). The port is held
    // exclusively: no SO_REUSEPORT, so a second server on a port in use fails here.
    int bind();
    // Serves until stop(); call after bind(), from any one thread.
    void run();
    // Thread-safe; makes run() return. In-flight streams end.
    void stop();
    const ServerMetrics& metrics() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m;
};

} // namespace mb::server
