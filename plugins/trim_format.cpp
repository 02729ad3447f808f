// trim_format: Markdown to plain text and tidy whitespace, one complete line at a time.
#include "plugins/builtins.h"
#include "plugins/text_stream.h"

#include "engine/unicode.h"

#include <optional>

namespace mb::plugins {

namespace {

using Json = nlohmann::json;

struct TrimConfig {
    bool markdown = true;
    bool whitespace = true;
};

bool blank(char c) { return c == ' ' || c == '\t'; }

// A letter or number next to an emphasis delimiter makes it part of a word (snake_case,
// 2*3*4); CJK characters do not, since CJK text has no spaces around bold words.
bool wordyAt(std::string_view s, size_t at) {
    if (at >= s.size()) return false;
    const char32_t cp = engine::decodeUtf8(s, at).codePoint;
    return isWordChar(cp) && !isCjk(cp);
}
bool wordyBefore(std::string_view s, size_t at) {
    if (at == 0) return false;
    size_t p = at - 1;
    while (p > 0 && (static_cast<unsigned char>(s[p]) & 0xC0) == 0x80) --p;
    return wordyAt(s, p);
}

size_t runOf(std::string_view s, size_t i) {
    size_t n = 0;
    while (i + n < s.size() && s[i + n] == s[i]) ++n;
    return n;
}

// [text](url) starting at s[at] == '['; sets `text` and the end (past ')').
bool parseLink(std::string_view s, size_t at, std::string_view& text, size_t& end) {
    int depth = 0;
    size_t close = at;
    for (; close < s.size(); ++close) {
        if (s[close] == '[') ++depth;
        if (s[close] == ']' && --depth == 0) break;
    }
    if (close + 1 >= s.size() || s[close + 1] != '(') return false;
    const size_t paren = s.find(')', close + 2);
    if (paren == std::string_view::npos) return false;
    text = s.substr(at + 1, close - at - 1);
    end = paren + 1;
    return true;
}

std::string inlineMarkdown(std::string_view s);

// An emphasis run of `*` or `_` at s[i] (1..3 long): the text inside its closer, or nothing.
std::optional<std::string> emphasis(std::string_view s, size_t i, size_t run, size_t& end) {
    if (run > 3 || wordyBefore(s, i) || i + run >= s.size() || blank(s[i + run])) return std::nullopt;
    for (size_t j = i + run; j < s.size();) {
        if (s[j] != s[i]) {
            ++j;
            continue;
        }
        const size_t r = runOf(s, j);
        if (r == run && !blank(s[j - 1]) && !wordyAt(s, j + r)) {
            end = j + r;
            return inlineMarkdown(s.substr(i + run, j - i - run));
        }
        j += r;
    }
    return std::nullopt;
}

// Inline code, images, links and emphasis of one line (outside code blocks).
std::string inlineMarkdown(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
        const char c = s[i];
        if (c == '`') {
            const size_t run = runOf(s, i);
            const size_t close = s.find(std::string(run, '`'), i + run);
            if (close != std::string_view::npos && runOf(s, close) == run) {
                out.append(s.substr(i + run, close - i - run));
                i = close + run;
            } else {
                out.append(run, '`');
                i += run;
            }
            continue;
        }
        std::string_view text;
        size_t end = 0;
        if ((c == '[' || (c == '!' && i + 1 < s.size() && s[i + 1] == '[')) && parseLink(s, i + (c == '!'), text, end)) {
            out += inlineMarkdown(text);
            i = end;
            continue;
        }
        if (c == '*' || c == '_') {
            const size_t run = runOf(s, i);
            if (auto inner = emphasis(s, i, run, end)) {
                out += *inner;
                i = end;
            } else {
                out.append(run, c);
                i += run;
            }
            continue;
        }
        out += c;
        ++i;
    }
    return out;
}

bool isRule(std::string_view t) {
    size_t marks = 0;
    char mark = 0;
    for (char c : t) {
        if (blank(c)) continue;
        if (c != '-' && c != '*' && c != '_') return false;
        if (mark && c != mark) return false;
        mark = c;
        ++marks;
    }
    return marks >= 3;
}

class TrimFormat final : public StreamPlugin {
public:
    explicit TrimFormat(const TrimConfig& c) : m_c(c) {}

private:
    Step step(std::string_view buf, bool final) override {
        Step s;
        size_t at = 0;
        for (size_t nl; (nl = buf.find('\n', at)) != std::string_view::npos; at = nl + 1)
            put(buf.substr(at, nl - at), true, s.out);
        if (final && at < buf.size()) put(buf.substr(at), false, s.out);
        s.consumed = final ? buf.size() : at;
        return s;
    }

    // One line (without its '\n'): transformed, then either dropped or written.
    void put(std::string_view raw, bool newline, std::string& out) {
        if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
        const bool code = m_inCode;
        std::optional<std::string> line = m_c.markdown ? markdown(raw) : std::string(raw);
        if (!line) return; // a fence or a rule: the whole line goes
        if (m_c.whitespace) line = tidy(*line, code);
        if (!m_c.whitespace) {
            out += *line;
            if (newline) out += '\n';
            return;
        }
        if (line->empty()) {
            m_blankPending = m_wrote;
            return;
        }
        if (m_wrote) out += m_blankPending ? "\n\n" : "\n";
        out += *line;
        m_wrote = true;
        m_blankPending = false;
    }

    std::optional<std::string> markdown(std::string_view raw) {
        size_t ind = 0;
        while (ind < raw.size() && blank(raw[ind])) ++ind;
        std::string_view rest = raw.substr(ind);
        if (rest.substr(0, 3) == "```" || rest.substr(0, 3) == "~~~") {
            m_inCode = !m_inCode;
            return std::nullopt;
        }
        if (m_inCode) return std::string(raw);
        if (isRule(rest)) return std::nullopt;
        while (!rest.empty() && rest[0] == '>') {
            rest.remove_prefix(1);
            if (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
        }
        std::string prefix;
        const size_t hashes = rest.find_first_not_of('#');
        if (hashes >= 1 && hashes <= 6 && (hashes == rest.size() || hashes == std::string_view::npos || blank(rest[hashes]))) {
            rest = hashes == std::string_view::npos ? std::string_view() : rest.substr(hashes);
            while (!rest.empty() && blank(rest.front())) rest.remove_prefix(1);
            while (!rest.empty() && (rest.back() == '#' || blank(rest.back()))) rest.remove_suffix(1);
        } else if (rest.size() >= 2 && (rest[0] == '-' || rest[0] == '*' || rest[0] == '+') && blank(rest[1])) {
            prefix = "- ";
            rest.remove_prefix(2);
            while (!rest.empty() && blank(rest.front())) rest.remove_prefix(1);
        }
        return std::string(raw.substr(0, ind)) + prefix + inlineMarkdown(rest);
    }

    // Trailing blanks go; inside the text (not in code blocks) runs of blanks become one space.
    static std::string tidy(std::string_view line, bool code) {
        size_t end = line.size();
        while (end > 0 && blank(line[end - 1])) --end;
        line = line.substr(0, end);
        if (code) return std::string(line);
        size_t ind = 0;
        while (ind < line.size() && blank(line[ind])) ++ind;
        std::string out(line.substr(0, ind));
        for (size_t i = ind; i < line.size(); ++i) {
            if (blank(line[i]) && blank(out.back())) continue;
            out += blank(line[i]) ? ' ' : line[i];
        }
        return out;
    }

    const TrimConfig& m_c;
    bool m_inCode = false;
    bool m_wrote = false;        // a non-blank line was written (later ones start with '\n')
    bool m_blankPending = false; // a blank line came after it
};

class TrimFormatFactory final : public PluginFactory {
public:
    explicit TrimFormatFactory(TrimConfig c) : m_c(c) {}
    std::string type() const override { return "trim_format"; }
    std::string describe() const override {
        std::string s = m_c.markdown ? "markdown" : "";
        if (m_c.whitespace) s += s.empty() ? "whitespace" : ", whitespace";
        return "trim_format(" + (s.empty() ? std::string("nothing") : s) + ")";
    }
    Json record() const override {
        return {{"type", "trim_format"}, {"markdown", m_c.markdown}, {"whitespace", m_c.whitespace}};
    }
    std::unique_ptr<Plugin> make() const override { return std::make_unique<TrimFormat>(m_c); }

private:
    TrimConfig m_c;
};

} // namespace

std::shared_ptr<const PluginFactory> makeTrimFormat(const Json& config) {
    const ConfigReader r(config, "trim_format", {"markdown", "whitespace"});
    TrimConfig c;
    c.markdown = r.boolean("markdown", true);
    c.whitespace = r.boolean("whitespace", true);
    return std::make_shared<TrimFormatFactory>(c);
}

} // namespace mb::plugins
