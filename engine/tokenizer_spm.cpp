// SentencePiece-style tokenizer (GGUF model "llama"): score-ordered merges with byte fallback.
#include "engine/tokenizer_spm.h"

#include "engine/unicode.h"

#include <algorithm>
#include <climits>
#include <stdexcept>

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

// One symbol of the piece being merged: a byte range of the normalized piece, linked to
// its live neighbours. A symbol absorbed by a merge keeps length 0. 16 bytes a character.
struct Symbol {
    int32_t prev;
    int32_t next;
    uint32_t offset;
    uint32_t length;
};

// A candidate merge of symbol `left` with its right neighbour. `length` is the merged
// byte length at the time it was queued; a mismatch when popped means one side has
// changed since (lengths only grow, and the neighbour changes only when `left` grows),
// so the entry is stale. 12 bytes: a piece of n characters holds up to about 3n.
struct Candidate {
    float score;
    int32_t left;
    uint32_t length;
};

// Highest score first; on equal scores the leftmost pair, as SentencePiece does.
struct CandidateOrder {
    bool operator()(const Candidate& a, const Candidate& b) const {
        if (a.score != b.score) return a.score < b.score;
        return a.left > b.left;
    }
};

// Pieces without a cut longer than this would overflow the 32-bit offsets and indices.
constexpr size_t kMaxPieceBytes = INT32_MAX;

} // namespace

// Reused from piece to piece of one encode, so their capacity follows the longest piece.
struct SpmTokenizer::Scratch {
    std::string normalized; // the piece: the dummy prefix and spaces as U+2581
    std::vector<Symbol> symbols;
    std::vector<Candidate> heap; // a max-heap under CandidateOrder
};

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
        } else if (kind == TokenKind::UserDefined) {
            // Verbatim, as llama.cpp gives them (converters store their blanks as spaces).
            m_pieces[i] = text;
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
            kind != TokenKind::Unused) {
            m_pieceIds.emplace(std::string_view(text), id);
            for (size_t k = 1; k < text.size(); ++k) m_innerPairs.set(pairIndex(text[k - 1], text[k]));
            m_longestTokenBytes = std::max(m_longestTokenBytes, m_pieces[i].size());
        }
    }
    // An unknown token stands for one character of up to 4 bytes; a byte token for 1.
    if (m_vocab.unk >= 0) m_longestTokenBytes = std::max<size_t>(m_longestTokenBytes, 4);
    for (const SpecialTokens special : {SpecialTokens::AsText, SpecialTokens::Parse}) {
        auto& pairs = m_wholePairs[special == SpecialTokens::Parse];
        for (const int32_t id : wholeTokens(special)) {
            const std::string& text = m_vocab.tokens[static_cast<size_t>(id)];
            for (size_t k = 1; k < text.size(); ++k) pairs.set(pairIndex(text[k - 1], text[k]));
        }
    }
}

float SpmTokenizer::score(int32_t id) const {
    return m_vocab.scores.empty() ? 0.0f : m_vocab.scores[static_cast<size_t>(id)];
}

std::string SpmTokenizer::piece(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= m_pieces.size()) return {};
    return m_pieces[static_cast<size_t>(id)];
}

namespace {
// Text with whole tokens is partitioned in chunks of at least this many bytes (up to a cut).
constexpr size_t kChunkBytes = 8192;
} // namespace

bool SpmTokenizer::feed(std::string_view text, bool prefix, size_t maxTokens, Scratch& scratch,
                        std::vector<int32_t>& ids) const {
    // Normalize as the piece grows: the dummy prefix, then every space as U+2581 (llama's
    // SentencePiece model uses the identity normalizer otherwise, so runs of spaces are
    // kept). One symbol per UTF-8 character of the text; ill-formed bytes become symbols
    // of their own that no piece matches, so byte fallback keeps them intact.
    const auto add = [&](std::string_view character) {
        std::string& piece = scratch.normalized;
        if (!piece.empty() && !innerPair(piece.back(), character.front())) {
            encodePiece(scratch, ids);
            if (ids.size() > maxTokens) return false;
        }
        if (piece.size() + character.size() > kMaxPieceBytes)
            throw std::length_error("the text has over 2 GiB without a place to cut it for encoding");
        const auto index = static_cast<int32_t>(scratch.symbols.size());
        scratch.symbols.push_back({index - 1, index + 1, static_cast<uint32_t>(piece.size()),
                                   static_cast<uint32_t>(character.size())});
        piece.append(character);
        return true;
    };
    if (prefix && m_vocab.addSpacePrefix && !add(kSpaceMark)) return false;
    for (size_t pos = 0; pos < text.size();) {
        const size_t length = decodeUtf8(text, pos).length;
        if (!add(text[pos] == ' ' ? kSpaceMark : text.substr(pos, length))) return false;
        pos += length;
    }
    return true;
}

size_t SpmTokenizer::nextWholeCut(std::string_view text, size_t from, SpecialTokens special) const {
    const auto& pairs = m_wholePairs[special == SpecialTokens::Parse];
    for (size_t i = std::max<size_t>(from, 1); i < text.size(); ++i) {
        const bool continuation = (static_cast<uint8_t>(text[i]) & 0xC0) == 0x80;
        if (!continuation && !pairs[pairIndex(text[i - 1], text[i])]) return i;
    }
    return text.size();
}

void SpmTokenizer::encodeText(std::string_view text, size_t maxTokens, SpecialTokens special,
                              std::vector<int32_t>& ids) const {
    Scratch scratch;
    if (wholeTokens(special).empty()) {
        if (feed(text, true, maxTokens, scratch, ids)) encodePiece(scratch, ids);
        return;
    }
    // As llama.cpp: the text between whole tokens is encoded stretch by stretch, each
    // starting with the dummy prefix. The partition goes chunk by chunk, cut where no whole
    // token can span the cut, so its work stops with a capped encode; a stretch of plain
    // text goes on across a cut.
    std::vector<Span> spans, split;
    bool stretchStart = true;
    for (size_t begin = 0; begin < text.size();) {
        const size_t end = nextWholeCut(text, begin + kChunkBytes, special);
        const std::string_view chunk = text.substr(begin, end - begin);
        partition(chunk, special, spans, split);
        for (const Span& span : spans) {
            if (span.id >= 0) {
                encodePiece(scratch, ids);
                ids.push_back(span.id);
                stretchStart = true;
            } else {
                if (!feed(chunk.substr(span.offset, span.length), stretchStart, maxTokens, scratch, ids)) return;
                stretchStart = false;
            }
            if (ids.size() > maxTokens) return;
        }
        begin = end;
    }
    encodePiece(scratch, ids);
}

void SpmTokenizer::encodePiece(Scratch& scratch, std::vector<int32_t>& ids) const {
    std::vector<Symbol>& symbols = scratch.symbols;
    std::vector<Candidate>& heap = scratch.heap;
    const std::string_view whole(scratch.normalized);
    if (symbols.empty()) return;
    symbols.back().next = -1;
    heap.reserve(symbols.size()); // the first pairs, without a doubling for a long piece

    const auto tryPair = [&](int32_t left, int32_t right) {
        if (left < 0 || right < 0) return;
        const uint32_t length = symbols[left].length + symbols[right].length;
        const auto it = m_pieceIds.find(whole.substr(symbols[left].offset, length));
        if (it == m_pieceIds.end()) return;
        heap.push_back({score(it->second), left, length});
        std::push_heap(heap.begin(), heap.end(), CandidateOrder{});
    };
    for (size_t i = 1; i < symbols.size(); ++i)
        tryPair(static_cast<int32_t>(i) - 1, static_cast<int32_t>(i));

    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), CandidateOrder{});
        const Candidate top = heap.back();
        heap.pop_back();
        Symbol& left = symbols[top.left];
        if (left.length == 0 || left.next < 0) continue;
        Symbol& right = symbols[left.next];
        if (right.length == 0 || left.length + right.length != top.length) continue;
        left.length += right.length;
        right.length = 0;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = top.left;
        tryPair(left.prev, top.left);
        tryPair(top.left, left.next);
    }

    for (int32_t i = 0; i >= 0; i = symbols[i].next) {
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
    scratch.normalized.clear();
    symbols.clear();
    heap.clear();
}

} // namespace mb::engine
