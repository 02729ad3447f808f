// One client connection as httplib reads and writes it: buffered bytes first, then the socket, within a deadline and a byte budget.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

namespace mb::server {

using GateClock = std::chrono::steady_clock;

// A connection between requests or while one is served. Owned by one thread at a time:
// the gate's reception thread while it waits for a head, a worker while it is served.
struct Connection {
    int fd = -1;
    std::string received;          // bytes read from the socket and not yet consumed
    size_t consumed = 0;           // how much of `received` the current request has read
    GateClock::time_point deadline; // waiting: for the whole head; served: for the body
    size_t headBytes = 0;          // served: the current request's head length
    bool lingering = false;        // answered and half-closed: the rest of its body is read and dropped
};

// httplib::Stream over a Connection. Reads come from `received` first and then from the
// non-blocking socket; a read fails (-1) once the deadline has passed or once the
// request has read more than its byte budget (head + body, framing included), and says
// which. Writes wait at most `writeTimeout` for the socket to take bytes. A read also
// gives up within 250 ms of `stopping` turning true (the server is shutting down).
class ConnectionStream final : public httplib::Stream {
public:
    ConnectionStream(Connection& c, size_t byteBudget, std::chrono::milliseconds writeTimeout,
                     const std::atomic<bool>& stopping);

    bool is_readable() const override;
    bool is_writable() const override;
    ssize_t read(char* ptr, size_t size) override;
    ssize_t write(const char* ptr, size_t size) override;
    void get_remote_ip_and_port(std::string& ip, int& port) const override;
    void get_local_ip_and_port(std::string& ip, int& port) const override;
    int socket() const override { return m_c.fd; }

    bool overBudget() const { return m_overBudget; }
    bool timedOut() const { return m_timedOut; }
    bool failed() const { return m_overBudget || m_timedOut || m_broken; }

    // Moves the unread rest of `received` to its front (for the connection's next request).
    void keepUnread();

private:
    // Waits for the socket to be readable within the deadline; false (and timedOut) past it.
    bool waitReadable() const;

    Connection& m_c;
    size_t m_budget;
    size_t m_read = 0; // bytes this request has read
    std::chrono::milliseconds m_writeTimeout;
    const std::atomic<bool>& m_stopping;
    mutable bool m_timedOut = false;
    bool m_overBudget = false;
    bool m_broken = false;
};

} // namespace mb::server
