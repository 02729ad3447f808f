// scanRequestHead: find where a request head ends and check the body framing it declares.
#include "server/request_head.h"

#include <cctype>

namespace mb::server {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

std::string lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

RequestHead malformed(RequestHead h, int status, std::string error) {
    h.state = RequestHead::State::Malformed;
    h.status = status;
    h.error = std::move(error);
    return h;
}

// The request line "METHOD TARGET VERSION": method and path (target without its query).
void readRequestLine(std::string_view line, RequestHead& h) {
    line = trim(line);
    const size_t sp1 = line.find(' ');
    if (sp1 == std::string_view::npos) return; // httplib answers 400 for it
    h.method = std::string(line.substr(0, sp1));
    std::string_view target = line.substr(sp1 + 1);
    target = target.substr(0, target.find(' '));
    h.path = std::string(target.substr(0, target.find('?')));
}

// Checks one header's framing; returns false (with h made Malformed) when it is refused.
bool readFraming(std::string_view name, std::string_view value, size_t maxBodyBytes, RequestHead& h, int& encodings) {
    const std::string key = lower(name);
    if (key == "transfer-encoding") {
        if (++encodings > 1 || lower(value) != "chunked") {
            h = malformed(std::move(h), 501,
                          "Transfer-Encoding '" + std::string(value) + "' is not supported (only one 'chunked')");
            return false;
        }
        h.chunked = true;
    } else if (key == "content-length") {
        bool digits = !value.empty() && value.size() <= 18;
        for (char c : value) digits = digits && c >= '0' && c <= '9';
        if (!digits) {
            h = malformed(std::move(h), 400, "malformed Content-Length '" + std::string(value.substr(0, 40)) + "'");
            return false;
        }
        const int64_t n = std::stoll(std::string(value));
        if (h.contentLength >= 0 && n != h.contentLength) {
            h = malformed(std::move(h), 400, "two Content-Length headers disagree");
            return false;
        }
        h.contentLength = n;
        if (static_cast<uint64_t>(n) > maxBodyBytes) {
            h = malformed(std::move(h), 413, bodyTooLargeMessage(maxBodyBytes));
            return false;
        }
    }
    return true;
}

} // namespace

std::string bodyTooLargeMessage(size_t maxBodyBytes) {
    return "the request body is larger than " + std::to_string(maxBodyBytes >> 20) + " MiB";
}

RequestHead scanRequestHead(std::string_view received, size_t maxHeadBytes, size_t maxBodyBytes) {
    RequestHead h;
    while (h.leading < received.size() && (received[h.leading] == '\r' || received[h.leading] == '\n')) ++h.leading;
    const std::string_view head = received.substr(h.leading);
    // The blank line that ends the head: "\n\r\n" or "\n\n" (bare LF lines are tolerated).
    size_t end = std::string_view::npos;
    for (size_t at = head.find('\n'); at != std::string_view::npos; at = head.find('\n', at + 1)) {
        if (at + 1 < head.size() && head[at + 1] == '\n') { end = at + 2; break; }
        if (at + 2 < head.size() && head[at + 1] == '\r' && head[at + 2] == '\n') { end = at + 3; break; }
        if (at + 1 > maxHeadBytes) break;
    }
    if (end == std::string_view::npos || end > maxHeadBytes) {
        h.state = head.size() > maxHeadBytes || end != std::string_view::npos ? RequestHead::State::TooLarge
                                                                               : RequestHead::State::Incomplete;
        return h;
    }
    h.bytes = end;
    size_t lineStart = 0;
    int encodings = 0;
    for (size_t nl = head.find('\n'); lineStart < end; nl = head.find('\n', lineStart)) {
        const std::string_view line = head.substr(lineStart, nl - lineStart);
        if (lineStart == 0) {
            readRequestLine(line, h);
        } else if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
            if (!readFraming(trim(line.substr(0, colon)), trim(line.substr(colon + 1)), maxBodyBytes, h, encodings))
                return h;
        }
        lineStart = nl + 1;
    }
    if (h.chunked && h.contentLength >= 0)
        return malformed(std::move(h), 400, "both Content-Length and Transfer-Encoding: chunked");
    h.state = RequestHead::State::Complete;
    return h;
}

} // namespace mb::server
