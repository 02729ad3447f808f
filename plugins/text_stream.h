// Helpers shared by the built-in plugins: a buffered stream base, config checking, case folding, CJK.
#pragma once

#include "plugins/plugin.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace mb::plugins {

// A plugin that keeps what it has not decided in a buffer. text() appends the chunk and
// calls step() on the whole characters held (an incomplete UTF-8 tail waits for the next
// chunk); step() returns what it decided and how many bytes of the buffer that used up.
// end() calls step() once with `final` set and everything held (a cut-off tail included),
// and step() must then use up all of it. After an `end` step, later calls emit nothing.
class StreamPlugin : public Plugin {
public:
    Emit text(std::string_view chunk) final;
    Emit end() final;

protected:
    struct Step {
        std::string out;
        size_t consumed = 0;   // bytes of the buffer decided (emitted, replaced or dropped)
        bool end = false;
        std::string reason;
    };
    virtual Step step(std::string_view buffer, bool final) = 0;

private:
    std::string m_buf;
    bool m_done = false;
};

// Checks one chain entry's keys and values; every error is one line starting "<plugin>: ".
class ConfigReader {
public:
    // `config` must be an object; keys outside `known` (and "type") are refused by name.
    ConfigReader(const nlohmann::json& config, std::string plugin, std::initializer_list<const char*> known);

    const nlohmann::json* find(const char* key) const; // nullptr when absent
    bool boolean(const char* key, bool fallback) const;
    std::string string(const char* key, const std::string& fallback) const;
    std::string requiredString(const char* key) const;
    int64_t integer(const char* key, int64_t fallback, int64_t min, int64_t max) const;
    // A non-empty array of non-empty, valid UTF-8 strings.
    std::vector<std::string> stringList(const char* key, bool required) const;
    [[noreturn]] void fail(const std::string& message) const;

private:
    const nlohmann::json& m_config;
    std::string m_plugin;
};

// A code point's decoded form with where it starts in its text.
struct CodePoint {
    char32_t cp;
    size_t offset;
};
// Every character of `text` (ill-formed bytes become U+FFFD, one per maximal subpart), and
// a final entry {0, text.size()} so that [i].offset..[i+1].offset spans character i.
std::vector<CodePoint> decodeAll(std::string_view text);

// Simple lower-case folding of ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic
// (U+0400..U+052F); everything else is returned unchanged. One code point to one code
// point, so folding never moves offsets. Final sigma folds to sigma, U+0130 to 'i', U+017F to 's'.
char32_t foldCase(char32_t cp);

// Han (with extensions and compatibility ideographs), Hiragana, Katakana, Bopomofo,
// Hangul, CJK symbols and punctuation, full-width forms.
bool isCjk(char32_t cp);

// Combining marks (U+0300..036F and the other combining blocks), ZWJ and variation
// selectors: they continue the character before them, so they count as part of a word.
bool isCombining(char32_t cp);

// A letter, number or combining mark: what a whole-word match must not touch.
bool isWordChar(char32_t cp);

} // namespace mb::plugins
