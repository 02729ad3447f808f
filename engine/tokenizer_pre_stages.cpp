// The multi-regex pre-tokenizers (falcon, starcoder, deepseek, llama.cpp's default) as stages.
#include "engine/tokenizer_pre.h"

#include "engine/tokenizer_pre_impl.h"

#include <algorithm>
#include <iterator>

namespace mb::engine {

namespace {

using pre::Chars;
using pre::runEnd;

struct Range {
    char32_t first;
    char32_t last; // inclusive
};

template <size_t N> bool inRanges(const Range (&ranges)[N], char32_t cp) {
    const auto it = std::lower_bound(std::begin(ranges), std::end(ranges), cp,
                                     [](const Range& r, char32_t value) { return r.last < value; });
    return it != std::end(ranges) && it->first <= cp;
}

// DeepSeek LLM's letter class, the literal ranges of its second regex (Latin, Greek,
// Coptic, Cyrillic, Armenian, Georgian, Cherokee, letterlike symbols, Glagolitic,
// fullwidth Latin, Deseret, Osage, Old Hungarian, Warang Citi, Adlam).
constexpr Range kDeepseekLetters[] = {
    {0x41, 0x5A},       {0x61, 0x7A},       {0xB5, 0xB5},       {0xC0, 0xD6},
    {0xD8, 0xF6},       {0xF8, 0x1BA},      {0x1BC, 0x1BF},     {0x1C4, 0x293},
    {0x295, 0x2AF},     {0x370, 0x373},     {0x376, 0x377},     {0x37B, 0x37D},
    {0x37F, 0x37F},     {0x386, 0x386},     {0x388, 0x38A},     {0x38C, 0x38C},
    {0x38E, 0x3A1},     {0x3A3, 0x3F5},     {0x3F7, 0x481},     {0x48A, 0x52F},
    {0x531, 0x556},     {0x10A0, 0x10C5},   {0x13A0, 0x13F5},   {0x13F8, 0x13FD},
    {0x1C90, 0x1CBA},   {0x1CBD, 0x1CBF},   {0x1D00, 0x1D2B},   {0x1D6B, 0x1D77},
    {0x1D79, 0x1D9A},   {0x1E00, 0x1F15},   {0x1F18, 0x1F1D},   {0x1F20, 0x1F45},
    {0x1F48, 0x1F4D},   {0x1F50, 0x1F57},   {0x1F59, 0x1F59},   {0x1F5B, 0x1F5B},
    {0x1F5D, 0x1F5D},   {0x1F5F, 0x1F7D},   {0x1F80, 0x1FB4},   {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE},   {0x1FC2, 0x1FC4},   {0x1FC6, 0x1FCC},   {0x1FD0, 0x1FD3},
    {0x1FD6, 0x1FDB},   {0x1FE0, 0x1FEC},   {0x1FF2, 0x1FF4},   {0x1FF6, 0x1FFC},
    {0x2102, 0x2102},   {0x2107, 0x2107},   {0x210A, 0x2113},   {0x2115, 0x2115},
    {0x2119, 0x211D},   {0x2124, 0x2124},   {0x2126, 0x2126},   {0x2128, 0x2128},
    {0x212A, 0x212D},   {0x212F, 0x2134},   {0x2139, 0x2139},   {0x213C, 0x213F},
    {0x2145, 0x2149},   {0x214E, 0x214E},   {0x2183, 0x2184},   {0x2C00, 0x2C7B},
    {0x2C7E, 0x2CE4},   {0x2CEB, 0x2CEE},   {0x2CF2, 0x2CF3},   {0xA640, 0xA66D},
    {0xA680, 0xA69B},   {0xA722, 0xA76F},   {0xA771, 0xA787},   {0xA78B, 0xA78E},
    {0xAB70, 0xABBF},   {0xFB00, 0xFB06},   {0xFB13, 0xFB17},   {0xFF21, 0xFF3A},
    {0xFF41, 0xFF5A},   {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

// DeepSeek LLM's punctuation class [!-/:-~！-／：-～‘-‟　-。]. U+3000 is listed too, but
// llama.cpp hands that regex whitespace as U+000B, so the ideographic space never
// matches it (it is taken by \s? instead).
constexpr Range kDeepseekPunct[] = {
    {0x21, 0x2F},     {0x3A, 0x7E},     {0x2018, 0x201F},
    {0x3001, 0x3002}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E},
};

// [一-龥ࠀ-一가-퟿]: CJK ideographs to U+9FA5, U+0800..U+4E00, Hangul syllables and on.
constexpr Range kDeepseekCjk[] = {{0x800, 0x9FA5}, {0xAC00, 0xD7FF}};

bool isAsciiDigit(char32_t c) {
    return c >= '0' && c <= '9';
}

// [\r\n]
size_t matchNewline(const Chars& s, size_t i, size_t end) {
    const char32_t c = s.cp(i, end);
    return (c == '\r' || c == '\n') ? i + 1 : i;
}

// \p{N}
size_t matchDigit(const Chars& s, size_t i, size_t end) {
    return s.number(i, end) ? i + 1 : i;
}

// \p{N}+
size_t matchDigits(const Chars& s, size_t i, size_t end) {
    return runEnd(i, end, [&](size_t j) { return s.number(j, end); });
}

// [0-9][0-9][0-9]
size_t matchThreeAsciiDigits(const Chars& s, size_t i, size_t end) {
    for (size_t j = i; j < i + 3; ++j) {
        if (!isAsciiDigit(s.cp(j, end))) return i;
    }
    return i + 3;
}

// [\p{P}$+<=>^~|`]+ (falcon) and [\p{P}$+<=>^~|]+ (default)
template <bool kBacktick> size_t matchPunctRun(const Chars& s, size_t i, size_t end) {
    return runEnd(i, end, [&](size_t j) {
        const char32_t c = s.cp(j, end);
        return s.punct(j, end) || c == '$' || c == '+' || c == '<' || c == '=' || c == '>' ||
               c == '^' || c == '~' || c == '|' || (kBacktick && c == '`');
    });
}

// \s?X+ for a class X: one whitespace character may lead, then a run of X.
template <typename Pred>
size_t matchSpaceThenRun(const Chars& s, size_t i, size_t end, Pred inClass) {
    const size_t start = (s.space(i, end) && i + 1 < end && inClass(i + 1)) ? i + 1 : i;
    if (start < end && inClass(start)) return runEnd(start, end, inClass);
    return i;
}

size_t matchSpaceLetters(const Chars& s, size_t i, size_t end) {
    return matchSpaceThenRun(s, i, end, [&](size_t j) { return s.letter(j, end); });
}

size_t matchSpacePunct(const Chars& s, size_t i, size_t end) {
    return matchSpaceThenRun(s, i, end, [&](size_t j) { return s.punct(j, end); });
}

size_t matchDeepseekLetters(const Chars& s, size_t i, size_t end) {
    return matchSpaceThenRun(
        s, i, end, [&](size_t j) { return j < end && inRanges(kDeepseekLetters, s[j].cp); });
}

size_t matchDeepseekPunct(const Chars& s, size_t i, size_t end) {
    return matchSpaceThenRun(
        s, i, end, [&](size_t j) { return j < end && inRanges(kDeepseekPunct, s[j].cp); });
}

// \s+$: a whitespace run that reaches the end of the piece.
size_t matchTrailingSpace(const Chars& s, size_t i, size_t end) {
    const size_t e = runEnd(i, end, [&](size_t j) { return s.space(j, end); });
    return e == end ? e : i;
}

size_t matchCjk(const Chars& s, size_t i, size_t end) {
    return runEnd(i, end, [&](size_t j) {
        // llama.cpp hands this regex whitespace as U+000B, so U+2000.. and U+3000 stay out.
        return j < end && !s.space(j, end) && inRanges(kDeepseekCjk, s[j].cp);
    });
}

} // namespace

TextPieces splitFalcon(std::string_view text) {
    return pre::runStages(text, {matchPunctRun<true>, pre::matchGpt2, matchThreeAsciiDigits});
}

TextPieces splitStarcoder(std::string_view text) {
    return pre::runStages(text, {matchDigit, pre::matchGpt2});
}

TextPieces splitDeepseekLlm(std::string_view text) {
    return pre::runStages(text, {matchNewline, matchDeepseekLetters, matchDeepseekPunct,
                                 matchTrailingSpace, matchCjk, matchDigits});
}

TextPieces splitDeepseekCoder(std::string_view text) {
    return pre::runStages(text,
                          {matchNewline, matchSpaceLetters, matchSpacePunct, matchCjk, matchDigit});
}

TextPieces splitLlamaCppDefault(std::string_view text) {
    return pre::runStages(
        text, {matchPunctRun<false>, pre::matchGpt2, matchDigits, matchThreeAsciiDigits});
}

} // namespace mb::engine
