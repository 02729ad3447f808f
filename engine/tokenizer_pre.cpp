// The pre-tokenizer table, the stage runner, and the one-regex splits (GPT-2, Llama 3, GPT-4o).
#include "engine/tokenizer_pre.h"

#include "engine/tokenizer_pre_impl.h"

#include <algorithm>

namespace mb::engine {

namespace pre {

Chars::Chars(std::string_view text) : m_bytes(text.size()) {
    m_chars.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const Utf8Char c = decodeUtf8(text, pos);
        const bool ok = c.status == Utf8Status::Ok;
        m_chars.push_back({pos, c.codePoint,
                           ok ? codePointClass(c.codePoint) : CodePointClass::Other,
                           ok && isPunctuation(c.codePoint)});
        pos += c.length;
    }
}

TextPieces runStages(std::string_view text, std::initializer_list<Matcher> stages) {
    const Chars chars(text);
    // Pieces as the character index one past each; every stage refines the list.
    std::vector<size_t> ends{chars.size()}, next;
    for (const Matcher match : stages) {
        next.clear();
        size_t begin = 0;
        for (const size_t end : ends) {
            size_t gap = begin; // start of the unmatched stretch before i
            for (size_t i = begin; i < end;) {
                const size_t e = match(chars, i, end);
                if (e == i) {
                    ++i;
                    continue;
                }
                if (gap < i) next.push_back(i);
                next.push_back(e);
                i = gap = e;
            }
            if (gap < end) next.push_back(end);
            begin = end;
        }
        ends.swap(next);
    }

    TextPieces pieces;
    pieces.reserve(ends.size());
    size_t begin = 0;
    for (const size_t end : ends) {
        if (end == begin) continue; // only an empty text yields an empty piece
        pieces.emplace_back(chars.offsetOf(begin), chars.offsetOf(end) - chars.offsetOf(begin));
        begin = end;
    }
    return pieces;
}

size_t matchContraction(const Chars& chars, size_t i, size_t end) {
    if (chars.cp(i, end) != '\'') return i;
    const auto lower = [&](size_t j) {
        const char32_t c = chars.cp(j, end);
        return (c >= 'A' && c <= 'Z') ? c + ('a' - 'A') : c;
    };
    const char32_t a = lower(i + 1), b = lower(i + 2);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return i + 3;
    return i;
}

size_t matchGpt2(const Chars& chars, size_t i, size_t end) {
    // Contractions are case-sensitive in GPT-2's pattern.
    const char32_t c = chars.cp(i, end);
    if (c == '\'') {
        const char32_t a = chars.cp(i + 1, end), b = chars.cp(i + 2, end);
        if (a == 's' || a == 't' || a == 'm' || a == 'd') return i + 2;
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
            return i + 3;
    }
    // " ?X+" for X = letters, numbers, other: an optional ASCII space, then a run.
    const size_t start = (c == ' ' && i + 1 < end) ? i + 1 : i;
    const CodePointClass cls = chars[start].cls;
    if (cls != CodePointClass::Whitespace)
        return runEnd(start, end, [&](size_t j) { return chars[j].cls == cls; });
    // \s+(?!\S): the whitespace run, minus its last character when a non-space follows
    // (that one then leads the next pre-token); a single whitespace character before a
    // non-space falls to the plain \s+.
    const size_t wsEnd = runEnd(i, end, [&](size_t j) { return chars.space(j, end); });
    return (wsEnd == end || wsEnd - i == 1) ? wsEnd : wsEnd - 1;
}

} // namespace pre

namespace {

using pre::Chars;
using pre::runEnd;

bool isNewline(char32_t c) {
    return c == '\r' || c == '\n';
}

// The alternatives Llama 3, Qwen 2 and GPT-4o share after their word rules:
// \p{N}{1,maxDigits} | ' ?[^\s\p{L}\p{N}]+[\r\n]*' (also '/' in the tail for GPT-4o) |
// \s*[\r\n]+ | \s+(?!\S) | \s+.
size_t matchTail(const Chars& s, size_t i, size_t end, size_t maxDigits, bool slashTail) {
    if (s.number(i, end))
        return runEnd(i, std::min(end, i + maxDigits), [&](size_t j) { return s.number(j, end); });
    const auto other = [&](size_t j) { return s.is(j, end, CodePointClass::Other); };
    const size_t p = s.cp(i, end) == ' ' ? i + 1 : i;
    if (other(p)) {
        const size_t e = runEnd(p, end, other);
        return runEnd(e, end, [&](size_t j) {
            const char32_t c = s.cp(j, end);
            return isNewline(c) || (slashTail && c == '/');
        });
    }
    const size_t wsEnd = runEnd(i, end, [&](size_t j) { return s.space(j, end); });
    // \s*[\r\n]+ ends after the last \r or \n of the whitespace run.
    for (size_t j = wsEnd; j > i; --j) {
        if (isNewline(s.cp(j - 1, end))) return j;
    }
    if (wsEnd - i > 1 && wsEnd < end) return wsEnd - 1; // \s+(?!\S)
    return std::max(wsEnd, i + 1);                      // \s+ (every character matches)
}

// [^\r\n\p{L}\p{N}]?\p{L}+ at i: its end, or i.
size_t matchLetters(const Chars& s, size_t i, size_t end) {
    if (isNewline(s.cp(i, end)) || s.number(i, end)) return i;
    const size_t start = s.letter(i, end) ? i : i + 1;
    if (!s.letter(start, end)) return i;
    return runEnd(start, end, [&](size_t j) { return s.letter(j, end); });
}

template <size_t kMaxDigits> size_t matchLlama3(const Chars& s, size_t i, size_t end) {
    if (const size_t e = pre::matchContraction(s, i, end); e > i) return e;
    if (const size_t e = matchLetters(s, i, end); e > i) return e;
    return matchTail(s, i, end, kMaxDigits, false);
}

// GPT-4o's two word alternatives, [^\r\n\p{L}\p{N}]? U* L+ C? | [^\r\n\p{L}\p{N}]? U+ L* C?
// with U = a letter but not a-z, L = a letter but not A-Z, C = a contraction: the
// backtracking of U* and L+ worked out by hand. Returns the end, or i.
size_t matchGpt4oWord(const Chars& s, size_t i, size_t end) {
    const auto upper = [&](size_t j) {
        const char32_t c = s.cp(j, end);
        return s.letter(j, end) && !(c >= 'a' && c <= 'z');
    };
    const auto lower = [&](size_t j) {
        const char32_t c = s.cp(j, end);
        return s.letter(j, end) && !(c >= 'A' && c <= 'Z');
    };
    const char32_t c = s.cp(i, end);
    // The optional lead is never given back: without it no letter starts at i.
    const bool lead = i < end && !isNewline(c) && !s.letter(i, end) && !s.number(i, end);
    const size_t p = lead ? i + 1 : i;
    const size_t q = runEnd(p, end, upper);
    size_t e = p;
    if (lower(q)) {
        e = runEnd(q, end, lower); // U* took the whole upper run, L+ follows
    } else {
        // U* gives back characters until L+ can start on one; L+ then ends where U*'s
        // next character (not lower, or we would have stopped there) begins.
        for (size_t j = q; j > p; --j) {
            if (lower(j - 1)) {
                e = j;
                break;
            }
        }
    }
    if (e == p) {
        if (q == p) return i; // no letter at p: neither alternative matches
        e = q;                // U+ then an empty L* (q is not lower)
    }
    return pre::matchContraction(s, e, end);
}

size_t matchGpt4o(const Chars& s, size_t i, size_t end) {
    if (const size_t e = matchGpt4oWord(s, i, end); e > i) return e;
    return matchTail(s, i, end, 3, true);
}

// Names llama.cpp maps to the same rules share a row's split; flags as llama.cpp sets
// them per name. "" is a file without the key: GPT-2's split, as before any name existed.
constexpr PreTokenizer kPreTokenizers[] = {
    {"", splitGpt2, false, false},
    {"gpt-2", splitGpt2, false, false},
    {"phi-2", splitGpt2, false, false},
    {"roberta-bpe", splitGpt2, false, false},
    {"olmo", splitGpt2, false, false},
    {"jais", splitGpt2, false, false},
    {"mpt", splitGpt2, false, false},
    {"default", splitLlamaCppDefault, false, false},
    {"llama-bpe", splitLlama3, true, true},
    {"llama3", splitLlama3, true, true},
    {"llama-v3", splitLlama3, true, true},
    {"falcon3", splitLlama3, true, true},
    {"dbrx", splitLlama3, false, false},
    {"smaug-bpe", splitLlama3, false, false},
    {"qwen2", splitQwen2, false, false},
    {"deepseek-r1-qwen", splitQwen2, false, false},
    {"stablelm2", splitQwen2, false, false},
    {"megrez", splitQwen2, false, false},
    {"gpt-4o", splitGpt4o, false, false},
    {"llama4", splitGpt4o, false, false},
    {"falcon", splitFalcon, false, false},
    {"starcoder", splitStarcoder, false, false},
    {"smollm", splitStarcoder, false, false},
    {"refact", splitStarcoder, false, false},
    {"command-r", splitStarcoder, false, false},
    {"codeshell", splitStarcoder, false, false},
    {"exaone", splitStarcoder, false, false},
    {"minerva-7b", splitStarcoder, false, false},
    {"deepseek-llm", splitDeepseekLlm, false, false},
    {"deepseek-coder", splitDeepseekCoder, false, false},
};

} // namespace

TextPieces splitGpt2(std::string_view text) {
    return pre::runStages(text, {pre::matchGpt2});
}
TextPieces splitLlama3(std::string_view text) {
    return pre::runStages(text, {matchLlama3<3>});
}
TextPieces splitQwen2(std::string_view text) {
    return pre::runStages(text, {matchLlama3<1>});
}
TextPieces splitGpt4o(std::string_view text) {
    return pre::runStages(text, {matchGpt4o});
}

const PreTokenizer* findPreTokenizer(std::string_view name) {
    for (const PreTokenizer& row : kPreTokenizers) {
        if (row.name == name) return &row;
    }
    return nullptr;
}

std::string preTokenizerNames() {
    std::string names;
    for (const PreTokenizer& row : kPreTokenizers) {
        if (row.name.empty()) continue;
        if (!names.empty()) names += ", ";
        names += row.name;
    }
    return names;
}

} // namespace mb::engine
