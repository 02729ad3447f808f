// Incremental server-sent-events parsing for streaming completions (partial reads, comments, CRLF).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mb::lab {

// Feed bytes as they arrive, in pieces of any size; complete events come out. Follows the
// WHATWG event-stream rules that matter for OpenAI-style streams: lines end in LF, CRLF or
// CR; a blank line ends an event; "data:" with or without one following space appends a
// line to the event's data (several data lines join with LF); lines starting with ':' are
// comments; "event:"/"id:"/"retry:" and unknown fields are ignored; an event without data
// is not delivered. One non-standard field is read: llama.cpp's server reports a failed
// request inside its stream as a line "error: {JSON}", delivered at once as the event
// {"error": JSON} (a value that is not an object becomes a JSON string there). A UTF-8 BOM at the very start is skipped.
class SseParser {
public:
    // The data of every event completed by `bytes`, in order.
    std::vector<std::string> feed(std::string_view bytes);
    // An event left open at the end of the stream (no blank line after it), if any; the
    // parser is reset. Some servers omit the final blank line.
    std::vector<std::string> finish();
    // Bytes held for the event and line not yet complete (a caller bounds them).
    size_t buffered() const { return m_line.size() + m_data.size(); }

private:
    void line(std::string_view l, std::vector<std::string>& out);

    std::string m_line;   // the incomplete line so far
    std::string m_data;   // the current event's data
    bool m_hasData = false;
    bool m_lastWasCr = false;
    bool m_started = false;
};

} // namespace mb::lab
