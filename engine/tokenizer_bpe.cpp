// Byte-level BPE tokenizer (GGUF model "gpt2"): a named pre-tokenizer, then ranked merges.
#include "engine/tokenizer_bpe.h"

#include "engine/gguf.h"
#include "engine/quote.h"
#include "engine/unicode.h"

#include <algorithm>
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

} // namespace

BpeTokenizer::BpeTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)) {
    m_pre = findPreTokenizer(m_vocab.pre);
    if (!m_pre)
        throw GgufError("unsupported BPE pre-tokenizer " + quoteName(m_vocab.pre) +
                        " (supported: " + preTokenizerNames() + ")");
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
            if (!text.empty()) m_userTokens.push_back(id);
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

    // Longest first, as llama.cpp matches them; ties by id for a fixed order.
    std::stable_sort(m_userTokens.begin(), m_userTokens.end(), [&](int32_t a, int32_t b) {
        return m_vocab.tokens[static_cast<size_t>(a)].size() > m_vocab.tokens[static_cast<size_t>(b)].size();
    });

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

void BpeTokenizer::encodeText(std::string_view text, std::vector<int32_t>& ids) const {
    std::string spelled; // a word in the byte alphabet, for ignoreMerges
    for (const auto& [offset, length] : m_pre->split(text)) {
        const std::string_view word = text.substr(offset, length);
        if (m_pre->ignoreMerges) {
            spelled.clear();
            for (const char b : word) appendUtf8(spelled, kByteAlphabet[static_cast<uint8_t>(b)]);
            if (const auto it = m_tokenIds.find(spelled); it != m_tokenIds.end()) {
                ids.push_back(it->second);
                continue;
            }
        }
        encodeWord(word, ids);
    }
}

namespace {

// A stretch of the text: plain text (id -1) or one whole user-defined token.
struct Span {
    size_t offset;
    size_t length;
    int32_t id;
};

// Splits every text span of `spans` at each occurrence of `token` (left to right).
void splitAt(std::string_view text, std::string_view token, int32_t id, std::vector<Span>& spans) {
    std::vector<Span> out;
    out.reserve(spans.size());
    for (const Span& span : spans) {
        if (span.id >= 0) {
            out.push_back(span);
            continue;
        }
        const std::string_view part = text.substr(span.offset, span.length);
        size_t from = 0;
        for (size_t at; (at = part.find(token, from)) != std::string_view::npos;) {
            if (at > from) out.push_back({span.offset + from, at - from, -1});
            out.push_back({span.offset + at, token.size(), id});
            from = at + token.size();
        }
        if (from < part.size()) out.push_back({span.offset + from, part.size() - from, -1});
    }
    spans.swap(out);
}

} // namespace

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool addBos) const {
    std::vector<int32_t> ids;
    ids.reserve(text.size() / 3 + 2);
    if (addBos && m_vocab.bos >= 0) ids.push_back(m_vocab.bos);
    if (text.empty()) return ids;
    std::vector<Span> spans{{0, text.size(), -1}};
    for (const int32_t id : m_userTokens)
        splitAt(text, m_vocab.tokens[static_cast<size_t>(id)], id, spans);
    for (const Span& span : spans) {
        if (span.id >= 0)
            ids.push_back(span.id);
        else
            encodeText(text.substr(span.offset, span.length), ids);
    }
    return ids;
}

} // namespace mb::engine
