// GuardedHttpServer: reception (epoll) until a request head is whole, then a worker lane per kind of request.
#include "server/guarded_http_server.h"

#include "server/connection_stream.h"
#include "server/request_head.h"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

namespace mb::server {

namespace {

// httplib hands each accepted socket to its task queue; this one runs the hand-off (which
// only registers the socket with reception) on the listen thread itself.
struct InlineQueue final : httplib::TaskQueue {
    void enqueue(std::function<void()> fn) override { fn(); }
    void shutdown() override {}
};

thread_local const ConnectionStream* tlServing = nullptr;

const char* reasonOf(int status) {
    switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    default: return "Service Unavailable";
    }
}

// Sends the answer to a request the gate refuses (best effort: the socket is non-blocking).
void answer(Connection& c, int status, const std::string& message) {
    const std::string body =
        nlohmann::json{{"error", {{"message", message}, {"type", "invalid_request_error"}, {"code", status}}}}.dump(
            -1, ' ', false, nlohmann::json::error_handler_t::replace);
    const std::string reply = "HTTP/1.1 " + std::to_string(status) + " " + reasonOf(status) +
                              "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
                              std::to_string(body.size()) + "\r\n\r\n" + body;
    (void)::send(c.fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

void closeConnection(Connection& c) {
    if (c.fd < 0) return;
    ::shutdown(c.fd, SHUT_RDWR);
    ::close(c.fd);
    c.fd = -1;
}

} // namespace

struct GuardedHttpServer::Impl {
    struct Lane {
        std::mutex mutex;
        std::condition_variable ready;
        std::deque<std::unique_ptr<Connection>> queue;
        std::vector<std::thread> threads;
    };

    // A refused request's client may still be sending its body and read the answer only
    // after: closing at once would reset the connection and lose the answer. So the gate
    // half-closes and drops what arrives for this long.
    static constexpr std::chrono::milliseconds kLinger{2'000};

    GuardedHttpServer& owner;
    GateLimits limits;
    int epoll = -1;
    int wake = -1; // eventfd: reception's stop signal
    std::mutex mutex; // guards `waiting` and `shutDown`
    std::unordered_map<int, std::unique_ptr<Connection>> waiting; // by fd, waiting for a head
    bool shutDown = false;
    std::atomic<bool> stopping{false};
    Lane general, control;
    std::thread reception;

    Impl(GuardedHttpServer& o, GateLimits l) : owner(o), limits(l) {
        epoll = ::epoll_create1(EPOLL_CLOEXEC);
        wake = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (epoll < 0 || wake < 0) throw std::runtime_error("the HTTP server cannot create its epoll set");
        epoll_event ev{EPOLLIN, {.fd = wake}};
        ::epoll_ctl(epoll, EPOLL_CTL_ADD, wake, &ev);
        reception = std::thread([this] { receive(); });
        for (int i = 0; i < std::max(1, limits.workers); ++i) general.threads.emplace_back([this] { work(general); });
        control.threads.emplace_back([this] { work(control); });
    }

    // Answers, then lingers (see kLinger) before closing.
    void refuse(std::unique_ptr<Connection> c, int status, const std::string& message) {
        answer(*c, status, message);
        linger(std::move(c));
    }

    void linger(std::unique_ptr<Connection> c) {
        ::shutdown(c->fd, SHUT_WR);
        c->lingering = true;
        c->received.clear();
        c->deadline = GateClock::now() + kLinger;
        watch(std::move(c));
    }

    // Puts a connection in the waiting set, armed for one readable event.
    void watch(std::unique_ptr<Connection> c) {
        std::lock_guard g(mutex);
        if (shutDown) return closeConnection(*c);
        const int fd = c->fd;
        waiting.emplace(fd, std::move(c));
        epoll_event ev{EPOLLIN | EPOLLRDHUP | EPOLLONESHOT, {.fd = fd}};
        ::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &ev);
    }

    // Takes a connection that waits for (the rest of) a head, or whose buffer holds one.
    // `peerClosed`: no more bytes will come, so a head still incomplete is dropped.
    void admit(std::unique_ptr<Connection> c, bool peerClosed = false) {
        const RequestHead h = scanRequestHead(c->received, limits.maxHeadBytes, limits.maxBodyBytes);
        using S = RequestHead::State;
        if (h.state == S::TooLarge)
            return refuse(std::move(c), 431, "the request head is larger than " + std::to_string(limits.maxHeadBytes >> 10) + " KiB");
        if (h.state == S::Malformed) return refuse(std::move(c), h.status, h.error);
        if (h.state == S::Complete) {
            c->received.erase(0, h.leading);
            c->consumed = 0;
            c->headBytes = h.bytes;
            c->deadline = GateClock::now() + limits.bodyTimeout;
            const bool cheap = h.method == "GET" && !h.hasBody() && (h.path == "/health" || h.path == "/metrics");
            return enqueue(cheap ? control : general, std::move(c));
        }
        if (peerClosed) return closeConnection(*c);
        bool full;
        {
            std::lock_guard g(mutex);
            full = waiting.size() >= limits.maxWaiting || c->fd >= FD_SETSIZE;
        }
        if (full) {
            answer(*c, 503, "the server has too many open connections; retry later");
            return closeConnection(*c);
        }
        watch(std::move(c));
    }

    void enqueue(Lane& lane, std::unique_ptr<Connection> c) {
        {
            std::lock_guard g(lane.mutex);
            if (!stopping) {
                lane.queue.push_back(std::move(c));
                lane.ready.notify_one();
                return;
            }
        }
        closeConnection(*c);
    }

    // Reads what a readable waiting connection has, up to a little past the head limit.
    void onReadable(int fd) {
        std::unique_ptr<Connection> c;
        {
            std::lock_guard g(mutex);
            auto it = waiting.find(fd);
            if (it == waiting.end()) return;
            c = std::move(it->second);
            waiting.erase(it);
        }
        ::epoll_ctl(epoll, EPOLL_CTL_DEL, fd, nullptr);
        if (c->lingering) return drain(std::move(c));
        const size_t cap = limits.maxHeadBytes + (size_t{64} << 10);
        char chunk[16384];
        while (c->received.size() < cap) {
            const ssize_t n = ::recv(fd, chunk, sizeof chunk, MSG_DONTWAIT);
            if (n > 0) {
                c->received.append(chunk, static_cast<size_t>(n));
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
            // The peer closed (or the socket failed): a whole head already here is still served.
            return admit(std::move(c), /*peerClosed=*/true);
        }
        admit(std::move(c));
    }

    // Drops what a lingering connection sent; closes it at its end of stream.
    void drain(std::unique_ptr<Connection> c) {
        char chunk[65536];
        while (true) {
            const ssize_t n = ::recv(c->fd, chunk, sizeof chunk, MSG_DONTWAIT);
            if (n > 0) continue;
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return watch(std::move(c));
            return closeConnection(*c);
        }
    }

    // Closes connections past their head deadline: 408 to those that sent part of a head.
    void expire() {
        std::vector<std::unique_ptr<Connection>> late;
        {
            std::lock_guard g(mutex);
            const auto now = GateClock::now();
            for (auto it = waiting.begin(); it != waiting.end();) {
                if (it->second->deadline > now) { ++it; continue; }
                ::epoll_ctl(epoll, EPOLL_CTL_DEL, it->first, nullptr);
                late.push_back(std::move(it->second));
                it = waiting.erase(it);
            }
        }
        for (auto& c : late) {
            if (c->received.empty() || c->lingering) closeConnection(*c);
            else refuse(std::move(c), 408, "the request head did not arrive within " +
                                     std::to_string(limits.headTimeout.count()) + " ms");
        }
    }

    void receive() {
        epoll_event events[64];
        while (!stopping) {
            const int n = ::epoll_wait(epoll, events, 64, 100);
            for (int i = 0; i < n; ++i)
                if (events[i].data.fd != wake) onReadable(events[i].data.fd);
            expire();
        }
    }

    void work(Lane& lane) {
        while (true) {
            std::unique_ptr<Connection> c;
            {
                std::unique_lock lock(lane.mutex);
                lane.ready.wait(lock, [&] { return stopping || !lane.queue.empty(); });
                if (lane.queue.empty()) return;
                c = std::move(lane.queue.front());
                lane.queue.pop_front();
            }
            serve(std::move(c));
        }
    }

    // One request on a worker; a connection kept alive goes back to reception.
    void serve(std::unique_ptr<Connection> c) {
        const size_t budget = c->headBytes + limits.maxBodyBytes + limits.maxBodyBytes / 16;
        ConnectionStream stream(*c, budget, limits.writeTimeout, stopping);
        bool closeAfter = false;
        tlServing = &stream;
        const bool ok = owner.process_request(stream, stopping.load(), closeAfter, nullptr);
        tlServing = nullptr;
        if (stream.overBudget() && !stopping) return linger(std::move(c)); // the 413 is written
        if (!ok || closeAfter || stream.failed() || stopping) return closeConnection(*c);
        stream.keepUnread();
        c->deadline = GateClock::now() + limits.headTimeout;
        admit(std::move(c));
    }

    void shutdownAll() {
        {
            std::lock_guard g(mutex);
            if (shutDown) return;
            shutDown = true;
        }
        stopping = true;
        const uint64_t one = 1;
        (void)::write(wake, &one, sizeof one);
        reception.join();
        for (Lane* lane : {&general, &control}) {
            {
                std::lock_guard g(lane->mutex);
                lane->ready.notify_all();
            }
            for (auto& t : lane->threads) t.join();
            for (auto& c : lane->queue) closeConnection(*c);
            lane->queue.clear();
        }
        std::lock_guard g(mutex);
        for (auto& [fd, c] : waiting) closeConnection(*c);
        waiting.clear();
        ::close(epoll);
        ::close(wake);
    }
};

GuardedHttpServer::GuardedHttpServer(GateLimits limits) : m(std::make_unique<Impl>(*this, limits)) {
    new_task_queue = [] { return new InlineQueue; };
    set_payload_max_length(limits.maxBodyBytes);
}

GuardedHttpServer::~GuardedHttpServer() {
    shutdownConnections();
}

void GuardedHttpServer::shutdownConnections() {
    m->shutdownAll();
}

BodyFailure GuardedHttpServer::currentBodyFailure() {
    if (!tlServing) return BodyFailure::None;
    if (tlServing->overBudget()) return BodyFailure::OverLimit;
    if (tlServing->timedOut()) return BodyFailure::TimedOut;
    return BodyFailure::None;
}

const GateLimits& GuardedHttpServer::limits() const {
    return m->limits;
}

bool GuardedHttpServer::process_and_close_socket(socket_t sock) {
    auto c = std::make_unique<Connection>();
    c->fd = sock;
    ::fcntl(sock, F_SETFL, ::fcntl(sock, F_GETFL) | O_NONBLOCK);
    c->deadline = GateClock::now() + m->limits.headTimeout;
    m->admit(std::move(c));
    return true;
}

} // namespace mb::server
