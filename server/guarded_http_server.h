// An httplib::Server whose connections wait for their request head in one reception thread, so slow or idle clients hold no worker.
#pragma once

#include <httplib.h>

#include <chrono>
#include <cstddef>
#include <memory>

namespace mb::server {

struct GateLimits {
    int workers = 64;                                   // requests served at once (a stream holds one)
    std::chrono::milliseconds headTimeout{10'000};      // to receive a whole head, or idle between requests
    std::chrono::milliseconds bodyTimeout{30'000};      // to receive the body after its head
    std::chrono::milliseconds writeTimeout{5'000};      // for the client to take each write
    size_t maxHeadBytes = size_t{16} << 10;             // 431 past this
    size_t maxBodyBytes = size_t{16} << 20;             // 413 past this, whatever the framing
    size_t maxWaiting = 1000;                           // connections waiting for a head; 503 past this
};

// Why the request being served on this thread failed while its body was read.
enum class BodyFailure { None, OverLimit, TimedOut };

// httplib accepts connections; this class takes each one from there. The reception thread
// (epoll) reads a connection's bytes until its head is whole, checks its framing
// (server/request_head.h) and answers what it refuses itself (400, 408, 413, 431, 501, 503)
// without a worker. A whole head goes to a lane: GET /health and GET /metrics without a
// body to a control worker of their own (so a server whose workers all stream still
// answers them), everything else to the `workers`. A worker runs httplib's request
// processing over a ConnectionStream bounded by the body timeout and the byte limit; a
// kept-alive connection then returns to reception. The handlers and httplib's routing are
// unchanged.
class GuardedHttpServer : public httplib::Server {
public:
    explicit GuardedHttpServer(GateLimits limits);
    ~GuardedHttpServer() override;

    // After stop(): closes the connections waiting for a head and joins the workers once
    // they finish the request they serve. Idempotent.
    void shutdownConnections();

    // For an error handler: why this thread's current request body could not be read.
    static BodyFailure currentBodyFailure();

    const GateLimits& limits() const;

private:
    bool process_and_close_socket(socket_t sock) override; // called on httplib's listen thread

    struct Impl;
    std::unique_ptr<Impl> m;
    friend struct Impl;
};

} // namespace mb::server
