// SseParser: a line splitter that survives reads cut anywhere, plus the field rules.
#include "lab/sse_parser.h"

#include <nlohmann/json.hpp>

namespace mb::lab {

std::vector<std::string> SseParser::feed(std::string_view bytes) {
    std::vector<std::string> out;
    if (!m_started && !bytes.empty()) {
        m_started = true;
        if (bytes.substr(0, 3) == "\xEF\xBB\xBF") bytes.remove_prefix(3);
    }
    for (const char c : bytes) {
        if (c == '\n' && m_lastWasCr) { // the LF of a CRLF: the line already ended at CR
            m_lastWasCr = false;
            continue;
        }
        m_lastWasCr = c == '\r';
        if (c == '\n' || c == '\r') {
            line(m_line, out);
            m_line.clear();
        } else {
            m_line.push_back(c);
        }
    }
    return out;
}

std::vector<std::string> SseParser::finish() {
    std::vector<std::string> out;
    if (!m_line.empty()) line(m_line, out);
    if (m_hasData) out.push_back(std::move(m_data));
    *this = SseParser{};
    return out;
}

void SseParser::line(std::string_view l, std::vector<std::string>& out) {
    if (l.empty()) { // the end of an event
        if (m_hasData) out.push_back(std::move(m_data));
        m_data.clear();
        m_hasData = false;
        return;
    }
    if (l.front() == ':') return; // a comment (keep-alive)
    const size_t colon = l.find(':');
    const std::string_view field = l.substr(0, colon);
    std::string_view value = colon == std::string_view::npos ? std::string_view{} : l.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (field == "error") { // llama.cpp's server: "error: {JSON}" on a line of its own
        const bool object = !value.empty() && value.front() == '{';
        out.push_back("{\"error\":" + (object ? std::string(value) : nlohmann::json(std::string(value)).dump()) + "}");
        return;
    }
    if (field != "data") return;
    if (m_hasData) m_data.push_back('\n');
    m_data.append(value);
    m_hasData = true;
}

} // namespace mb::lab
