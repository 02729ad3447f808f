// The head of an HTTP/1.1 request as the connection gate sees it: complete or not, its lane and its body framing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mb::server {

// What the gate knows of a request from the bytes received so far.
struct RequestHead {
    enum class State {
        Incomplete, // no blank line yet, and under the size limit
        Complete,   // the head ends at `bytes`; the fields below are set
        TooLarge,   // no blank line within the limit: answer 431
        Malformed,  // a complete head the gate refuses: answer `status` with `error`
    };
    State state = State::Incomplete;
    size_t leading = 0;        // blank-line bytes before the request line (dropped by the gate)
    size_t bytes = 0;          // the head's length after them, including its closing blank line
    std::string method;        // "GET", "POST", ...
    std::string path;          // the request target without its query
    bool chunked = false;      // Transfer-Encoding: chunked
    int64_t contentLength = -1; // -1: no Content-Length header
    int status = 0;            // Malformed: 400, 413 or 501
    std::string error;         // Malformed: one line for the client

    // A body follows the head (a declared length above zero, or chunks).
    bool hasBody() const { return chunked || contentLength > 0; }
};

// "the request body is larger than 16 MiB": the one wording of a 413, whoever refuses.
std::string bodyTooLargeMessage(size_t maxBodyBytes);

// Scans `received` (the connection's unread bytes, starting at a request) for a whole
// head of at most `maxHeadBytes`, and checks its framing: Content-Length must be decimal
// digits (one value, or repeats of one value) no larger than `maxBodyBytes` (else 413
// before any body is read); Transfer-Encoding may only be "chunked" (else 501), and
// never together with Content-Length (400: the two framings disagree on where the
// request ends). Leading blank lines before a request line are skipped, as RFC 9112
// allows: they are counted in `leading`, not in `bytes`.
RequestHead scanRequestHead(std::string_view received, size_t maxHeadBytes, size_t maxBodyBytes);

} // namespace mb::server
