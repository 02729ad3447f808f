// UTF-8 decoding and encoding, and the code point classes the BPE pre-tokenizers need.
#include "engine/unicode.h"

#include <algorithm>
#include <array>
#include <iterator>

namespace mb::engine {

namespace {

// Runs of code point classes, generated; see the .inc header for the packing.
constexpr uint32_t kClassRuns[] = {
#include "engine/unicode_tables.inc"
};

constexpr std::array<CodePointClass, 128> makeAsciiClasses() {
    std::array<CodePointClass, 128> classes{};
    for (char32_t cp = 0; cp < 128; ++cp) {
        auto it = std::upper_bound(std::begin(kClassRuns), std::end(kClassRuns),
                                   (uint32_t(cp) << 2) | 3u);
        classes[cp] = CodePointClass(*(it - 1) & 3u);
    }
    return classes;
}

constexpr std::array<CodePointClass, 128> kAsciiClasses = makeAsciiClasses();

struct CodePointRange {
    char32_t first;
    char32_t last; // inclusive
};

// \p{P} ranges, generated.
constexpr CodePointRange kPunctuationRanges[] = {
#include "engine/unicode_punct.inc"
};

constexpr std::array<bool, 128> makeAsciiPunctuation() {
    std::array<bool, 128> punct{};
    for (const CodePointRange& r : kPunctuationRanges) {
        for (char32_t cp = r.first; cp <= r.last && cp < 128; ++cp) punct[cp] = true;
    }
    return punct;
}

constexpr std::array<bool, 128> kAsciiPunctuation = makeAsciiPunctuation();

} // namespace

Utf8Char decodeUtf8(std::string_view text, size_t pos) {
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
    const uint8_t lead = byte(pos);
    if (lead < 0x80) return {lead, 1, Utf8Status::Ok};

    // Per lead byte: continuation count, the initial bits, and the allowed range of the
    // second byte, which is what rules out overlongs, surrogates and > U+10FFFF.
    int need = 0;
    char32_t cp = 0;
    uint8_t lo = 0x80, hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        need = 1;
        cp = lead & 0x1Fu;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        need = 2;
        cp = lead & 0x0Fu;
        if (lead == 0xE0) lo = 0xA0;
        if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        need = 3;
        cp = lead & 0x07u;
        if (lead == 0xF0) lo = 0x90;
        if (lead == 0xF4) hi = 0x8F;
    } else {
        return {kReplacementChar, 1, Utf8Status::Invalid};
    }

    for (int k = 1; k <= need; ++k) {
        if (pos + k >= text.size())
            return {kReplacementChar, static_cast<uint8_t>(k), Utf8Status::Incomplete};
        const uint8_t b = byte(pos + k);
        if (b < lo || b > hi)
            return {kReplacementChar, static_cast<uint8_t>(k), Utf8Status::Invalid};
        cp = (cp << 6) | (b & 0x3Fu);
        lo = 0x80;
        hi = 0xBF;
    }
    return {cp, static_cast<uint8_t>(need + 1), Utf8Status::Ok};
}

void appendUtf8(std::string& out, char32_t cp) {
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = kReplacementChar;
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

size_t incompleteUtf8Tail(std::string_view text) {
    // A character is at most 4 bytes, so only a lead byte among the last 3 can start a
    // cut-off character; decoding from it tells whether the tail is a valid prefix.
    const size_t start = text.size() > 3 ? text.size() - 3 : 0;
    for (size_t pos = start; pos < text.size(); ++pos) {
        const auto b = static_cast<uint8_t>(text[pos]);
        if ((b & 0xC0) == 0x80) continue; // continuation byte, not a start
        const Utf8Char c = decodeUtf8(text, pos);
        if (c.status == Utf8Status::Incomplete && pos + c.length == text.size()) return c.length;
    }
    return 0;
}

std::string sanitizeUtf8(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const Utf8Char c = decodeUtf8(text, pos);
        if (c.status == Utf8Status::Ok)
            out.append(text.substr(pos, c.length));
        else
            appendUtf8(out, kReplacementChar);
        pos += c.length;
    }
    return out;
}

CodePointClass codePointClass(char32_t cp) {
    if (cp < 128) return kAsciiClasses[cp];
    if (cp > 0x10FFFF) return CodePointClass::Other;
    // The last run whose first code point is <= cp.
    auto it =
        std::upper_bound(std::begin(kClassRuns), std::end(kClassRuns), (uint32_t(cp) << 2) | 3u);
    return CodePointClass(*(it - 1) & 3u);
}

bool isPunctuation(char32_t cp) {
    if (cp < 128) return kAsciiPunctuation[cp];
    // The first range that ends at or after cp.
    const auto it = std::lower_bound(
        std::begin(kPunctuationRanges), std::end(kPunctuationRanges), cp,
        [](const CodePointRange& r, char32_t value) { return r.last < value; });
    return it != std::end(kPunctuationRanges) && it->first <= cp;
}

} // namespace mb::engine
