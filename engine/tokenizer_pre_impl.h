// Private to the pre-tokenizers: decoded characters, and regex stages as matcher functions.
#pragma once

#include "engine/tokenizer_pre.h"
#include "engine/unicode.h"

#include <initializer_list>
#include <string_view>
#include <vector>

namespace mb::engine::pre {

struct Char {           // 16 bytes a character
    size_t offset;      // byte offset in the text
    char32_t cp;        // U+FFFD for ill-formed bytes
    CodePointClass cls; // Other for ill-formed bytes
    bool punct;         // \p{P}
};

// A decoded text with bounds-checked lookups: positions at or past `end` (the end of
// the piece being matched) read as no character, which is how regex lookahead sees the
// end of a piece.
class Chars {
public:
    explicit Chars(std::string_view text);
    size_t size() const { return m_chars.size(); }
    const Char& operator[](size_t i) const { return m_chars[i]; }
    // Code point at i, or 0 when i >= end (no rule looks for U+0000).
    char32_t cp(size_t i, size_t end) const { return i < end ? m_chars[i].cp : 0; }
    bool is(size_t i, size_t end, CodePointClass cls) const {
        return i < end && m_chars[i].cls == cls;
    }
    bool letter(size_t i, size_t end) const { return is(i, end, CodePointClass::Letter); }
    bool number(size_t i, size_t end) const { return is(i, end, CodePointClass::Number); }
    bool space(size_t i, size_t end) const { return is(i, end, CodePointClass::Whitespace); }
    bool punct(size_t i, size_t end) const { return i < end && m_chars[i].punct; }
    size_t offsetOf(size_t i) const { return i < m_chars.size() ? m_chars[i].offset : m_bytes; }

private:
    std::vector<Char> m_chars;
    size_t m_bytes;
};

// One regex of a pre-tokenizer: the end of its match starting at chars[i] inside the
// piece that ends at `end`, or i when it does not match there. Alternatives are tried in
// pattern order, the first that matches wins (as in ECMAScript, PCRE and Rust regex).
using Matcher = size_t (*)(const Chars& chars, size_t i, size_t end);

// Applies the stages in order: each one splits every piece of the previous stage into
// its matches and the unmatched stretches between them (llama.cpp's unicode_regex_split).
TextPieces runStages(std::string_view text, std::initializer_list<Matcher> stages);

// GPT-2's pattern; it matches at every position.
size_t matchGpt2(const Chars& chars, size_t i, size_t end);

// (?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]) at i: its end, or i.
size_t matchContraction(const Chars& chars, size_t i, size_t end);

// The end of the run of characters from i for which pred holds.
template <typename Pred> size_t runEnd(size_t i, size_t end, Pred pred) {
    while (i < end && pred(i)) ++i;
    return i;
}

} // namespace mb::engine::pre
