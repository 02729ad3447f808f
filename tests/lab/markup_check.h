// Test helpers for rendered reports: an XML well-formedness check for the HTML and a CSV reader.
#pragma once

#include <string>
#include <vector>

namespace mb::test {

// "" when `xml` is well-formed as far as tags go: every start tag closed in order,
// attributes quoted, only the five XML entities, text free of '<'. Else the first problem.
inline std::string wellFormedProblem(const std::string& xml) {
    std::vector<std::string> open;
    size_t i = 0;
    while (i < xml.size()) {
        const char c = xml[i];
        if (c == '&') {
            const size_t semi = xml.find(';', i);
            if (semi == std::string::npos) return "unterminated entity at " + std::to_string(i);
            const std::string e = xml.substr(i, semi - i + 1);
            if (e != "&amp;" && e != "&lt;" && e != "&gt;" && e != "&quot;" && e != "&apos;")
                return "unknown entity " + e;
            i = semi + 1;
            continue;
        }
        if (c != '<') {
            if (c == '>') return "stray '>' at " + std::to_string(i);
            ++i;
            continue;
        }
        const size_t end = xml.find('>', i);
        if (end == std::string::npos) return "unterminated tag at " + std::to_string(i);
        std::string tag = xml.substr(i + 1, end - i - 1);
        i = end + 1;
        if (tag.rfind("!DOCTYPE", 0) == 0 || tag.rfind("?xml", 0) == 0) continue;
        // Quotes must balance inside a tag (a '>' inside an attribute would break this check).
        size_t quotes = 0;
        for (char q : tag) quotes += q == '"' ? 1 : 0;
        if (quotes % 2) return "unbalanced quotes in <" + tag + ">";
        if (tag.empty()) return "empty tag";
        if (tag[0] == '/') {
            const std::string name = tag.substr(1);
            if (open.empty() || open.back() != name)
                return "</" + name + "> closes " + (open.empty() ? std::string("nothing") : "<" + open.back() + ">");
            open.pop_back();
            continue;
        }
        if (tag.back() == '/') continue; // self-closing
        open.push_back(tag.substr(0, tag.find_first_of(" \t\n")));
    }
    if (!open.empty()) return "<" + open.back() + "> never closed";
    return "";
}

// RFC 4180 rows (quoted fields with doubled quotes, LF line ends).
inline std::vector<std::vector<std::string>> readCsv(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false, any = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
            else if (c == '"') quoted = false;
            else field += c;
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().push_back(field), field.clear();
        } else if (c == '\n') {
            rows.back().push_back(field), field.clear();
            rows.emplace_back();
        } else {
            field += c;
        }
        any = true;
    }
    if (!field.empty()) rows.back().push_back(field);
    if (rows.back().empty()) rows.pop_back();
    if (!any) rows.clear();
    return rows;
}

} // namespace mb::test
