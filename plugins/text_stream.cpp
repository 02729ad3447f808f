// Helpers shared by the built-in plugins: a buffered stream base, config checking, case folding, CJK.
#include "plugins/text_stream.h"

#include "engine/unicode.h"

namespace mb::plugins {

using Json = nlohmann::json;

Emit StreamPlugin::text(std::string_view chunk) {
    if (m_done) return {};
    m_buf.append(chunk);
    const size_t whole = m_buf.size() - engine::incompleteUtf8Tail(m_buf);
    Step s = step(std::string_view(m_buf).substr(0, whole), false);
    m_buf.erase(0, s.consumed);
    if (s.end) {
        m_done = true;
        m_buf.clear();
    }
    return Emit{std::move(s.out), s.end, std::move(s.reason)};
}

Emit StreamPlugin::end() {
    if (m_done) return {};
    m_done = true;
    Step s = step(m_buf, true);
    m_buf.clear();
    return Emit{std::move(s.out), s.end, std::move(s.reason)};
}

ConfigReader::ConfigReader(const Json& config, std::string plugin, std::initializer_list<const char*> known)
    : m_config(config), m_plugin(std::move(plugin)) {
    if (!config.is_object()) fail("the entry must be a JSON object");
    std::string unknown, knownList;
    for (const char* k : known) knownList += std::string(knownList.empty() ? "" : ", ") + k;
    for (auto it = config.begin(); it != config.end(); ++it) {
        if (it.key() == "type") continue;
        bool ok = false;
        for (const char* k : known) ok = ok || it.key() == k;
        if (!ok) unknown += std::string(unknown.empty() ? "'" : ", '") + it.key() + "'";
    }
    if (!unknown.empty()) fail("unknown key " + unknown + " (known: " + knownList + ")");
}

void ConfigReader::fail(const std::string& message) const { throw PluginError(m_plugin + ": " + message); }

const Json* ConfigReader::find(const char* key) const {
    const auto it = m_config.find(key);
    return it == m_config.end() ? nullptr : &*it;
}

bool ConfigReader::boolean(const char* key, bool fallback) const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (!v->is_boolean()) fail(std::string("\"") + key + "\" must be true or false");
    return v->get<bool>();
}

std::string ConfigReader::string(const char* key, const std::string& fallback) const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (!v->is_string()) fail(std::string("\"") + key + "\" must be a string");
    return v->get<std::string>();
}

std::string ConfigReader::requiredString(const char* key) const {
    if (!find(key)) fail(std::string("needs \"") + key + "\"");
    return string(key, "");
}

int64_t ConfigReader::integer(const char* key, int64_t fallback, int64_t min, int64_t max) const {
    const Json* v = find(key);
    if (!v) return fallback;
    if (!v->is_number_integer()) fail(std::string("\"") + key + "\" must be an integer");
    const int64_t n = v->get<int64_t>();
    if (n < min || n > max)
        fail(std::string("\"") + key + "\" must be between " + std::to_string(min) + " and " + std::to_string(max));
    return n;
}

std::vector<std::string> ConfigReader::stringList(const char* key, bool required) const {
    const Json* v = find(key);
    if (!v) {
        if (required) fail(std::string("needs \"") + key + "\", a list of strings");
        return {};
    }
    if (!v->is_array() || v->empty()) fail(std::string("\"") + key + "\" must be a non-empty list of strings");
    std::vector<std::string> out;
    for (const Json& s : *v) {
        if (!s.is_string() || s.get_ref<const std::string&>().empty())
            fail(std::string("\"") + key + "\" must hold non-empty strings only");
        const std::string& str = s.get_ref<const std::string&>();
        if (engine::sanitizeUtf8(str) != str) fail(std::string("\"") + key + "\" holds a string that is not valid UTF-8");
        out.push_back(str);
    }
    return out;
}

std::vector<CodePoint> decodeAll(std::string_view text) {
    std::vector<CodePoint> out;
    out.reserve(text.size() + 1);
    for (size_t i = 0; i < text.size();) {
        const engine::Utf8Char c = engine::decodeUtf8(text, i);
        out.push_back({c.codePoint, i});
        i += c.length;
    }
    out.push_back({0, text.size()});
    return out;
}

namespace {

char32_t foldGreek(char32_t c) {
    if (c == 0x386) return 0x3AC;
    if (c >= 0x388 && c <= 0x38A) return c + 37;
    if (c == 0x38C) return 0x3CC;
    if (c == 0x38E || c == 0x38F) return c + 63;
    if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
    if (c == 0x3C2) return 0x3C3; // final sigma matches sigma
    return c;
}

char32_t foldCyrillic(char32_t c) {
    if (c <= 0x40F) return c + 80;
    if (c <= 0x42F) return c + 32;
    if (c <= 0x45F) return c;
    if (c == 0x4C0) return 0x4CF;
    if (c >= 0x4C1 && c <= 0x4CE) return c % 2 == 1 ? c + 1 : c;
    const bool paired = c <= 0x481 || (c >= 0x48A && c <= 0x4BF) || c >= 0x4D0;
    return paired && c % 2 == 0 ? c + 1 : c;
}

char32_t foldLatinExtA(char32_t c) {
    if (c == 0x130) return U'i';
    if (c == 0x178) return 0xFF;
    if (c == 0x17F) return U's';
    if (c == 0x131 || c == 0x138 || c == 0x149) return c;
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return c % 2 == 1 ? c + 1 : c;
    return c % 2 == 0 ? c + 1 : c;
}

} // namespace

char32_t foldCase(char32_t c) {
    if (c < 0x80) return c >= U'A' && c <= U'Z' ? c + 32 : c;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
    if (c >= 0x100 && c <= 0x17F) return foldLatinExtA(c);
    if (c >= 0x386 && c <= 0x3C2) return foldGreek(c);
    if (c >= 0x400 && c <= 0x52F) return foldCyrillic(c);
    return c;
}

bool isCjk(char32_t c) {
    struct Range {
        char32_t lo, hi;
    };
    static constexpr Range kRanges[] = {
        {0x1100, 0x11FF}, {0x2E80, 0x2FDF}, {0x3000, 0x303F}, {0x3040, 0x30FF}, {0x3100, 0x31FF},
        {0x3200, 0x33FF}, {0x3400, 0x4DBF}, {0x4E00, 0x9FFF}, {0xA960, 0xA97F}, {0xAC00, 0xD7FF},
        {0xF900, 0xFAFF}, {0xFE30, 0xFE4F}, {0xFF00, 0xFFEF}, {0x20000, 0x3FFFF},
    };
    for (const Range& r : kRanges)
        if (c >= r.lo && c <= r.hi) return true;
    return false;
}

bool isCombining(char32_t c) {
    return (c >= 0x300 && c <= 0x36F) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x1DC0 && c <= 0x1DFF) ||
           (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE20 && c <= 0xFE2F) || (c >= 0xFE00 && c <= 0xFE0F) ||
           c == 0x200D || (c >= 0xE0100 && c <= 0xE01EF);
}

bool isWordChar(char32_t c) {
    const engine::CodePointClass k = engine::codePointClass(c);
    return k == engine::CodePointClass::Letter || k == engine::CodePointClass::Number || isCombining(c);
}

} // namespace mb::plugins
