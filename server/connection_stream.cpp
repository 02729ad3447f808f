// ConnectionStream: httplib's view of a gated connection, bounded in time and bytes.
#include "server/connection_stream.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mb::server {

namespace {

int pollFor(int fd, short events, std::chrono::milliseconds wait) {
    pollfd p{fd, events, 0};
    int r;
    do {
        r = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, wait.count())));
    } while (r < 0 && errno == EINTR);
    return r > 0 && (p.revents & (events | POLLHUP | POLLERR)) ? 1 : r;
}

void addressOf(const sockaddr_storage& a, std::string& ip, int& port) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
        const auto* v4 = reinterpret_cast<const sockaddr_in*>(&a);
        ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
        port = ntohs(v4->sin_port);
    } else if (a.ss_family == AF_INET6) {
        const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&a);
        ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
        port = ntohs(v6->sin6_port);
    }
    ip = text;
}

} // namespace

ConnectionStream::ConnectionStream(Connection& c, size_t byteBudget, std::chrono::milliseconds writeTimeout,
                                   const std::atomic<bool>& stopping)
    : m_c(c), m_budget(byteBudget), m_writeTimeout(writeTimeout), m_stopping(stopping) {}

bool ConnectionStream::waitReadable() const {
    while (true) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(m_c.deadline - GateClock::now());
        if (left.count() <= 0) {
            m_timedOut = true;
            return false;
        }
        if (m_stopping.load()) return false;
        const int r = pollFor(m_c.fd, POLLIN, std::min(left, std::chrono::milliseconds(250)));
        if (r > 0) return true;
        if (r < 0) return false;
    }
}

bool ConnectionStream::is_readable() const {
    return m_c.consumed < m_c.received.size() || waitReadable();
}

bool ConnectionStream::is_writable() const {
    if (m_broken || pollFor(m_c.fd, POLLOUT, m_writeTimeout) <= 0) return false;
    // A peer that has gone reads as end of stream (pipelined bytes read as alive).
    char probe;
    const ssize_t n = ::recv(m_c.fd, &probe, 1, MSG_PEEK | MSG_DONTWAIT);
    return n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
}

ssize_t ConnectionStream::read(char* ptr, size_t size) {
    if (m_read >= m_budget) {
        m_overBudget = true;
        return -1;
    }
    size = std::min(size, m_budget - m_read);
    if (m_c.consumed < m_c.received.size()) {
        const size_t n = std::min(size, m_c.received.size() - m_c.consumed);
        std::memcpy(ptr, m_c.received.data() + m_c.consumed, n);
        m_c.consumed += n;
        m_read += n;
        return static_cast<ssize_t>(n);
    }
    // The buffer is spent: refill it (the head's line reader asks for one byte at a time).
    m_c.received.clear();
    m_c.consumed = 0;
    while (true) {
        if (!waitReadable()) return -1;
        char chunk[16384];
        const ssize_t n = ::recv(m_c.fd, chunk, sizeof chunk, 0);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
        if (n <= 0) {
            m_broken = n < 0;
            return n;
        }
        m_c.received.assign(chunk, static_cast<size_t>(n));
        return read(ptr, size);
    }
}

ssize_t ConnectionStream::write(const char* ptr, size_t size) {
    while (true) {
        const ssize_t n = ::send(m_c.fd, ptr, size, MSG_NOSIGNAL);
        if (n >= 0) return n;
        if (errno == EINTR) continue;
        if ((errno == EAGAIN || errno == EWOULDBLOCK) && pollFor(m_c.fd, POLLOUT, m_writeTimeout) > 0) continue;
        m_broken = true;
        return -1;
    }
}

void ConnectionStream::get_remote_ip_and_port(std::string& ip, int& port) const {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getpeername(m_c.fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) addressOf(a, ip, port);
}

void ConnectionStream::get_local_ip_and_port(std::string& ip, int& port) const {
    sockaddr_storage a{};
    socklen_t len = sizeof a;
    if (::getsockname(m_c.fd, reinterpret_cast<sockaddr*>(&a), &len) == 0) addressOf(a, ip, port);
}

void ConnectionStream::keepUnread() {
    m_c.received.erase(0, m_c.consumed);
    m_c.consumed = 0;
}

} // namespace mb::server
