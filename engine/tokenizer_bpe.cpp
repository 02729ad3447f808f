// GPT-2 style byte-level BPE tokenizer (GGUF model "gpt2"): regex pre-tokenizer, ranked merges.
#include "engine/tokenizer_bpe.h"

#include "engine/gguf.h"
#include "engine/unicode.h"

#include <queue>

namespace mb::engine {

namespace {

// GPT-2's byte alphabet: printable Latin-1 bytes stand for themselves; the others
// (controls, space, DEL, NBSP, soft hyphen) move to U+0100 and up in byte order, so
// every byte has a visible stand-in that no pre-token boundary can split.
constexpr char32_t kAlphabetEnd = 256 + 68; // stand-ins stay below this

constexpr std::array<char32_t, 256> makeByteAlphabet() {
    std::array<char32_t, 256> alphabet{};
    char32_t next = 256;
    for (char32_t b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        alphabet[b] = printable ? b : next++;
    }
    return alphabet;
}

constexpr std::array<int16_t, kAlphabetEnd> makeAlphabetBytes() {
    std::array<int16_t, kAlphabetEnd> bytes{};
    for (auto& b : bytes) b = -1;
    const auto alphabet = makeByteAlphabet();
    for (int b = 0; b < 256; ++b) bytes[alphabet[b]] = static_cast<int16_t>(b);
    return bytes;
}

constexpr auto kByteAlphabet = makeByteAlphabet();
constexpr auto kAlphabetBytes = makeAlphabetBytes();

struct Char {
    CodePointClass cls;
    char32_t cp;
    size_t offset; // byte offset in the text
};

struct Symbol {
    int32_t id; // -1 once merged into its left neighbour
    int prev;
    int next;
};

// A candidate merge of `left` and `right`, valid only while both still hold the ids
// they had when it was queued and are still neighbours.
struct Candidate {
    int32_t rank;
    int left;
    int right;
    int32_t leftId;
    int32_t rightId;
    int32_t result;
};

// Lowest rank first; on equal ranks the leftmost pair.
struct CandidateOrder {
    bool operator()(const Candidate& a, const Candidate& b) const {
        if (a.rank != b.rank) return a.rank > b.rank;
        return a.left > b.left;
    }
};

bool isContractionTail(char32_t a) {
    return a == 's' || a == 't' || a == 'm' || a == 'd';
}

// Index one past the GPT-2 pre-token that starts at chars[i] (i < chars.size()).
size_t gpt2TokenEnd(const std::vector<Char>& chars, size_t i) {
    const size_t n = chars.size();
    const auto runEnd = [&](size_t j, CodePointClass cls) {
        while (j < n && chars[j].cls == cls) ++j;
        return j;
    };
    const auto cpAt = [&](size_t j) { return j < n ? chars[j].cp : char32_t(0); };

    // The alternatives in pattern order; the first that matches at i wins.
    const char32_t c = chars[i].cp;
    if (c == '\'') {
        if (isContractionTail(cpAt(i + 1))) return i + 2;
        const char32_t a = cpAt(i + 1), b = cpAt(i + 2);
        if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l'))
            return i + 3;
    }
    // " ?X+" for X = letters, numbers, other: an optional ASCII space, then a run.
    const size_t start = (c == ' ' && i + 1 < n) ? i + 1 : i;
    const CodePointClass cls = chars[start].cls;
    if (cls != CodePointClass::Whitespace) return runEnd(start, cls);
    // \s+(?!\S): the whitespace run, minus its last character when a non-space follows
    // (that one then leads the next pre-token); a single whitespace character before a
    // non-space falls to the plain \s+.
    const size_t wsEnd = runEnd(i, CodePointClass::Whitespace);
    return (wsEnd == n || wsEnd - i == 1) ? wsEnd : wsEnd - 1;
}

} // namespace

std::vector<std::pair<size_t, size_t>> splitGpt2(std::string_view text) {
    std::vector<Char> chars;
    chars.reserve(text.size());
    for (size_t pos = 0; pos < text.size();) {
        const Utf8Char c = decodeUtf8(text, pos);
        const CodePointClass cls =
            c.status == Utf8Status::Ok ? codePointClass(c.codePoint) : CodePointClass::Other;
        chars.push_back({cls, c.codePoint, pos});
        pos += c.length;
    }
    const auto offsetOf = [&](size_t i) {
        return i < chars.size() ? chars[i].offset : text.size();
    };

    std::vector<std::pair<size_t, size_t>> pieces;
    for (size_t i = 0; i < chars.size();) {
        const size_t end = gpt2TokenEnd(chars, i);
        pieces.emplace_back(offsetOf(i), offsetOf(end) - offsetOf(i));
        i = end;
    }
    return pieces;
}

BpeTokenizer::BpeTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)) {
    const size_t n = m_vocab.tokens.size();
    m_tokenIds.reserve(n);
    m_pieces.resize(n);
    for (size_t i = 0; i < n; ++i) {
        const auto id = static_cast<int32_t>(i);
        const std::string& text = m_vocab.tokens[i];
        m_tokenIds.emplace(std::string_view(text), id); // first id wins for duplicates

        const TokenKind kind = m_vocab.kinds.empty() ? TokenKind::Normal : m_vocab.kinds[i];
        if (isControl(id)) continue;
        // User-defined tokens are stored as plain text, not in the byte alphabet.
        if (kind == TokenKind::UserDefined) {
            m_pieces[i] = text;
            continue;
        }
        std::string& piece = m_pieces[i];
        for (size_t pos = 0; pos < text.size();) {
            const Utf8Char c = decodeUtf8(text, pos);
            if (c.status == Utf8Status::Ok && c.codePoint < kAlphabetEnd &&
                kAlphabetBytes[c.codePoint] >= 0)
                piece += static_cast<char>(kAlphabetBytes[c.codePoint]);
            else
                piece.append(text, pos, c.length);
            pos += c.length;
        }
    }

    for (int b = 0; b < 256; ++b) {
        std::string stand;
        appendUtf8(stand, kByteAlphabet[b]);
        const auto it = m_tokenIds.find(stand);
        if (it == m_tokenIds.end())
            throw GgufError("byte-level BPE vocabulary has no token for byte " + std::to_string(b));
        m_byteIds[b] = it->second;
    }

    m_merges.reserve(m_vocab.merges.size());
    std::string joined;
    for (size_t rank = 0; rank < m_vocab.merges.size(); ++rank) {
        const std::string& merge = m_vocab.merges[rank];
        // Tokens never contain a plain space (it is 'Ġ' in the alphabet), so the first
        // space after the first character separates the halves.
        const size_t space = merge.find(' ', 1);
        if (space == std::string::npos)
            throw GgufError("malformed BPE merge '" + merge + "' at rank " + std::to_string(rank));
        const std::string_view left(merge.data(), space);
        const std::string_view right(merge.data() + space + 1, merge.size() - space - 1);
        joined.assign(left);
        joined.append(right);
        const auto l = m_tokenIds.find(left);
        const auto r = m_tokenIds.find(right);
        const auto result = m_tokenIds.find(joined);
        // A merge whose parts or result are not tokens can never apply to token ids.
        if (l == m_tokenIds.end() || r == m_tokenIds.end() || result == m_tokenIds.end()) continue;
        m_merges.emplace(pairKey(l->second, r->second),
                         Merge{static_cast<int32_t>(rank), result->second});
    }
}

std::string BpeTokenizer::piece(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= m_pieces.size()) return {};
    return m_pieces[static_cast<size_t>(id)];
}

void BpeTokenizer::encodeWord(std::string_view word, std::vector<int32_t>& ids) const {
    std::vector<Symbol> symbols(word.size());
    for (size_t i = 0; i < word.size(); ++i) {
        const int index = static_cast<int>(i);
        symbols[i] = {m_byteIds[static_cast<uint8_t>(word[i])], index - 1, index + 1};
    }
    symbols.back().next = -1;

    std::priority_queue<Candidate, std::vector<Candidate>, CandidateOrder> queue;
    const auto tryPair = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const auto it = m_merges.find(pairKey(symbols[left].id, symbols[right].id));
        if (it == m_merges.end()) return;
        queue.push(
            {it->second.rank, left, right, symbols[left].id, symbols[right].id, it->second.result});
    };
    for (size_t i = 1; i < symbols.size(); ++i)
        tryPair(static_cast<int>(i) - 1, static_cast<int>(i));

    while (!queue.empty()) {
        const Candidate top = queue.top();
        queue.pop();
        Symbol& left = symbols[top.left];
        Symbol& right = symbols[top.right];
        if (left.id != top.leftId || right.id != top.rightId || left.next != top.right) continue;
        left.id = top.result;
        right.id = -1;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = top.left;
        tryPair(left.prev, top.left);
        tryPair(top.left, left.next);
    }

    for (int i = 0; i >= 0; i = symbols[i].next) ids.push_back(symbols[i].id);
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool addBos) const {
    std::vector<int32_t> ids;
    ids.reserve(text.size() / 3 + 2);
    if (addBos && m_vocab.bos >= 0) ids.push_back(m_vocab.bos);
    for (const auto& [offset, length] : splitGpt2(text))
        encodeWord(text.substr(offset, length), ids);
    return ids;
}

} // namespace mb::engine
