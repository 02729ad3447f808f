// SentencePiece-style tokenizer (GGUF model "llama"): score-ordered merges with byte fallback.
#include "engine/tokenizer_spm.h"

#include "engine/unicode.h"

#include <queue>

namespace mb::engine {

namespace {

// Parses "<0xXX>" (the byte-fallback token spelling); -1 when `text` is not one.
int parseByteToken(std::string_view text) {
    if (text.size() != 6 || text.substr(0, 3) != "<0x" || text[5] != '>') return -1;
    int value = 0;
    for (char c : text.substr(3, 2)) {
        value <<= 4;
        if (c >= '0' && c <= '9')
            value |= c - '0';
        else if (c >= 'A' && c <= 'F')
            value |= c - 'A' + 10;
        else if (c >= 'a' && c <= 'f')
            value |= c - 'a' + 10;
        else
            return -1;
    }
    return value;
}

// One symbol of the text being merged: a byte range of the normalized text, linked to
// its live neighbours. A symbol absorbed by a merge keeps length 0.
struct Symbol {
    int prev;
    int next;
    size_t offset;
    size_t length;
};

// A candidate merge of symbol `left` with its right neighbour `right`. `length` is the
// merged byte length at the time it was queued; a mismatch when popped means one side
// has changed since, so the entry is stale.
struct Candidate {
    float score;
    int left;
    int right;
    size_t length;
};

// Highest score first; on equal scores the leftmost pair, as SentencePiece does.
struct CandidateOrder {
    bool operator()(const Candidate& a, const Candidate& b) const {
        if (a.score != b.score) return a.score < b.score;
        return a.left > b.left;
    }
};

} // namespace

SpmTokenizer::SpmTokenizer(Vocab vocab) : Tokenizer(std::move(vocab)) {
    m_byteIds.fill(-1);
    const size_t n = m_vocab.tokens.size();
    m_pieces.resize(n);
    m_pieceIds.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        const auto id = static_cast<int32_t>(i);
        const std::string& text = m_vocab.tokens[i];
        const TokenKind kind = m_vocab.kinds.empty() ? TokenKind::Normal : m_vocab.kinds[i];

        // Without token types, a "<0xXX>" spelling is the only hint that a token is a byte.
        const int byte = parseByteToken(text);
        const bool isByte = byte >= 0 && (kind == TokenKind::Byte || m_vocab.kinds.empty());
        if (isByte && m_byteIds[byte] < 0) m_byteIds[byte] = id;

        if (isControl(id)) {
            m_pieces[i].clear();
        } else if (isByte) {
            m_pieces[i] = std::string(1, static_cast<char>(byte));
        } else if (kind == TokenKind::Unknown) {
            // SentencePiece's surface form for an unknown piece.
            m_pieces[i] = " \xE2\x81\x87 ";
        } else {
            std::string& piece = m_pieces[i];
            for (size_t pos = 0; pos < text.size();) {
                if (text.compare(pos, kSpaceMark.size(), kSpaceMark) == 0) {
                    piece += ' ';
                    pos += kSpaceMark.size();
                } else {
                    piece += text[pos++];
                }
            }
        }

        // First id wins for duplicate spellings.
        if (!isByte && kind != TokenKind::Control && kind != TokenKind::Unknown &&
            kind != TokenKind::Unused)
            m_pieceIds.emplace(std::string_view(text), id);
    }
}

float SpmTokenizer::score(int32_t id) const {
    return m_vocab.scores.empty() ? 0.0f : m_vocab.scores[static_cast<size_t>(id)];
}

std::string SpmTokenizer::piece(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= m_pieces.size()) return {};
    return m_pieces[static_cast<size_t>(id)];
}

std::vector<int32_t> SpmTokenizer::encode(std::string_view text, bool addBos) const {
    std::vector<int32_t> ids;
    if (addBos && m_vocab.bos >= 0) ids.push_back(m_vocab.bos);
    if (text.empty()) return ids;

    // Normalize: the dummy prefix, then every space as U+2581 (llama's SentencePiece
    // model uses the identity normalizer otherwise, so runs of spaces are kept).
    std::string normalized;
    normalized.reserve(text.size() + kSpaceMark.size() * 4);
    if (m_vocab.addSpacePrefix) normalized += kSpaceMark;
    for (char c : text) {
        if (c == ' ')
            normalized += kSpaceMark;
        else
            normalized += c;
    }

    // One symbol per UTF-8 character; ill-formed bytes become symbols of their own that
    // no piece matches, so byte fallback keeps them intact.
    std::vector<Symbol> symbols;
    symbols.reserve(normalized.size());
    for (size_t pos = 0; pos < normalized.size();) {
        const size_t length = decodeUtf8(normalized, pos).length;
        const int index = static_cast<int>(symbols.size());
        symbols.push_back({index - 1, index + 1, pos, length});
        pos += length;
    }
    symbols.back().next = -1;

    const std::string_view whole(normalized);
    std::priority_queue<Candidate, std::vector<Candidate>, CandidateOrder> queue;
    const auto tryPair = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const size_t length = symbols[left].length + symbols[right].length;
        const auto it = m_pieceIds.find(whole.substr(symbols[left].offset, length));
        if (it == m_pieceIds.end()) return;
        queue.push({score(it->second), left, right, length});
    };
    for (size_t i = 1; i < symbols.size(); ++i)
        tryPair(static_cast<int>(i) - 1, static_cast<int>(i));

    while (!queue.empty()) {
        const Candidate top = queue.top();
        queue.pop();
        Symbol& left = symbols[top.left];
        Symbol& right = symbols[top.right];
        if (left.length == 0 || right.length == 0 || left.length + right.length != top.length)
            continue;
        left.length += right.length;
        right.length = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = top.left;
        tryPair(left.prev, top.left);
        tryPair(top.left, left.next);
    }

    for (int i = 0; i >= 0; i = symbols[i].next) {
        const std::string_view symbol = whole.substr(symbols[i].offset, symbols[i].length);
        if (const auto it = m_pieceIds.find(symbol); it != m_pieceIds.end()) {
            ids.push_back(it->second);
            continue;
        }
        // Only single characters can be missing (merges only form known pieces): spell
        // them as bytes, or as one unknown token when the vocabulary lacks a byte.
        bool haveBytes = true;
        for (char c : symbol) haveBytes = haveBytes && m_byteIds[static_cast<uint8_t>(c)] >= 0;
        if (haveBytes) {
            for (char c : symbol) ids.push_back(m_byteIds[static_cast<uint8_t>(c)]);
        } else if (m_vocab.unk >= 0) {
            ids.push_back(m_vocab.unk);
        }
    }
    return ids;
}

} // namespace mb::engine
