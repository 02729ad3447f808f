// UTF-8 decoding and encoding, and the code point classes the BPE pre-tokenizers need.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mb::engine {

enum class Utf8Status : uint8_t {
    Ok,         // a whole, well-formed character
    Invalid,    // ill-formed bytes; `length` covers the maximal ill-formed subpart (>= 1)
    Incomplete, // a well-formed start that the end of the input cuts off
};

struct Utf8Char {
    char32_t codePoint = 0; // U+FFFD unless status is Ok
    uint8_t length = 1;     // bytes consumed, 1..4, never past the end of the input
    Utf8Status status = Utf8Status::Ok;
};

inline constexpr char32_t kReplacementChar = 0xFFFD;

// Decodes the character starting at `text[pos]` (precondition: pos < text.size()).
// Strict: overlong forms, surrogates and values above U+10FFFF are Invalid. Invalid
// sequences are consumed one maximal subpart at a time (Unicode's "substitution of
// maximal subparts"), so replacing each with U+FFFD gives the standard result.
Utf8Char decodeUtf8(std::string_view text, size_t pos);

// Appends the UTF-8 form of `cp` (cp must be a scalar value; others append U+FFFD).
void appendUtf8(std::string& out, char32_t cp);

// Length of the incomplete but so far well-formed character at the end of `text`
// (0 when the text ends on a character boundary or with ill-formed bytes).
size_t incompleteUtf8Tail(std::string_view text);

// `text` with every ill-formed subpart (including a cut-off tail) replaced by U+FFFD.
std::string sanitizeUtf8(std::string_view text);

// The classes of the GPT-2 pre-tokenizer regex: \p{L}, \p{N}, \s, and everything else.
enum class CodePointClass : uint8_t { Other = 0, Letter = 1, Number = 2, Whitespace = 3 };

// From generated range tables (tools/gen_unicode_tables.py); ASCII is a direct lookup.
CodePointClass codePointClass(char32_t cp);

// \p{P}: Unicode's punctuation categories (Pc Pd Ps Pe Pi Pf Po). ASCII $+<=>^`|~ are
// symbols (S*), not punctuation. Generated ranges; one binary search above ASCII.
bool isPunctuation(char32_t cp);

} // namespace mb::engine
