// Byte-level BPE tokenizer (GGUF model "gpt2"): a named pre-tokenizer, then ranked merges.
#include "engine/tokenizer_bpe.h"

#include "engine/gguf.h"
#include "engine/quote.h"
#include "engine/unicode.h"

#include <algorithm>

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

// A candidate merge of symbol `left` with its right neighbour by the merge of this rank,
// valid only while the two still hold that merge's pair of ids (a rank names one pair).
// 8 bytes: a word of n bytes holds up to about 3n of them.
struct Candidate {
    int32_t rank;
    int32_t left;
};

// Lowest rank first; on equal ranks the leftmost pair.
struct CandidateOrder {
    bool operator()(const Candidate& a, const Candidate& b) const {
        if (a.rank != b.rank) return a.rank > b.rank;
        return a.left > b.left;
    }
};

// Text is encoded in chunks of at least this many bytes (up to the next cut).
constexpr size_t kChunkBytes = 8192;

bool isAsciiLetter(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// The first cut at or after `from`, else the end of the text. A cut goes before a blank
// (' ' or '\n') that sits between two ASCII letters, "x y" or "x\ny". Every pre-tokenizer
// of tokenizer_pre.h ends a pre-token there: no rule's match runs from a letter into a
// blank (letter runs stop at it, contractions are letters, the optional lead of a word
// is the character before its letters, "other" runs and their [\r\n]* tail cannot
// contain a letter), and every rule's last stage starts a match at the blank (" ?\p{L}+",
// "\s?L+", a lone "\n"). What a match before the cut decides reads nothing past the
// blank beyond "not a letter, not a quote", which holds at the end of a chunk too; the
// matches after it start from the same place. Whole tokens (user-defined ones, control
// ones when parsed) without a blank in them cannot span it either, so the chunks give the
// whole text's tokens.
size_t nextCut(std::string_view text, size_t from) {
    for (size_t i = std::max<size_t>(from, 1); i + 1 < text.size(); ++i) {
        const char c = text[i];
        if ((c == ' ' || c == '\n') && isAsciiLetter(text[i - 1]) && isAsciiLetter(text[i + 1])) return i;
    }
    return text.size();
}

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
        m_longestTokenBytes = std::max(m_longestTokenBytes, piece.size());
    }

    for (int b = 0; b < 256; ++b) {
        std::string stand;
        appendUtf8(stand, kByteAlphabet[b]);
        const auto it = m_tokenIds.find(stand);
        if (it == m_tokenIds.end())
            throw GgufError("byte-level BPE vocabulary has no token for byte " + std::to_string(b));
        m_byteIds[b] = it->second;
    }

    // A whole token with a blank in it could span a cut.
    for (const SpecialTokens special : {SpecialTokens::AsText, SpecialTokens::Parse})
        for (const int32_t id : wholeTokens(special))
            if (m_vocab.tokens[static_cast<size_t>(id)].find_first_of(" \n") != std::string::npos)
                m_chunked[special == SpecialTokens::Parse] = false;

    m_mergeRanks.reserve(m_vocab.merges.size());
    m_merges.assign(m_vocab.merges.size(), Merge{-1, -1, -1});
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
        // The first rank wins for a pair listed twice.
        if (m_mergeRanks.emplace(pairKey(l->second, r->second), static_cast<int32_t>(rank)).second)
            m_merges[rank] = {l->second, r->second, result->second};
    }
}

std::string BpeTokenizer::piece(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= m_pieces.size()) return {};
    return m_pieces[static_cast<size_t>(id)];
}

// Reused from word to word and chunk to chunk of one encode.
struct BpeTokenizer::Scratch {
    std::vector<Symbol> symbols;
    std::vector<Candidate> heap; // a min-heap on rank under CandidateOrder
    std::string spelled;         // a word in the byte alphabet, for ignoreMerges
    std::vector<Span> spans, split;
};

void BpeTokenizer::encodeWord(std::string_view word, Scratch& scratch, std::vector<int32_t>& ids) const {
    std::vector<Symbol>& symbols = scratch.symbols;
    std::vector<Candidate>& heap = scratch.heap;
    symbols.resize(word.size());
    for (size_t i = 0; i < word.size(); ++i) {
        const int index = static_cast<int>(i);
        symbols[i] = {m_byteIds[static_cast<uint8_t>(word[i])], index - 1, index + 1};
    }
    symbols.back().next = -1;

    heap.clear();
    heap.reserve(symbols.size()); // the first pairs, without a doubling for a long word
    const auto tryPair = [&](int left, int right) {
        if (left < 0 || right < 0) return;
        const auto it = m_mergeRanks.find(pairKey(symbols[left].id, symbols[right].id));
        if (it == m_mergeRanks.end()) return;
        heap.push_back({it->second, left});
        std::push_heap(heap.begin(), heap.end(), CandidateOrder{});
    };
    for (size_t i = 1; i < symbols.size(); ++i)
        tryPair(static_cast<int>(i) - 1, static_cast<int>(i));

    while (!heap.empty()) {
        std::pop_heap(heap.begin(), heap.end(), CandidateOrder{});
        const Candidate top = heap.back();
        heap.pop_back();
        Symbol& left = symbols[top.left];
        const Merge& merge = m_merges[static_cast<size_t>(top.rank)];
        if (left.id != merge.left || left.next < 0 || symbols[left.next].id != merge.right) continue;
        Symbol& right = symbols[left.next];
        left.id = merge.result;
        right.id = -1;
        left.next = right.next;
        if (right.next >= 0) symbols[right.next].prev = top.left;
        tryPair(left.prev, top.left);
        tryPair(top.left, left.next);
    }

    for (int i = 0; i >= 0; i = symbols[i].next) ids.push_back(symbols[i].id);
}

void BpeTokenizer::encodeWords(std::string_view text, size_t maxTokens, Scratch& scratch,
                               std::vector<int32_t>& ids) const {
    for (const auto& [offset, length] : m_pre->split(text)) {
        if (ids.size() > maxTokens) return;
        const std::string_view word = text.substr(offset, length);
        if (m_pre->ignoreMerges) {
            std::string& spelled = scratch.spelled;
            spelled.clear();
            for (const char b : word) appendUtf8(spelled, kByteAlphabet[static_cast<uint8_t>(b)]);
            if (const auto it = m_tokenIds.find(spelled); it != m_tokenIds.end()) {
                ids.push_back(it->second);
                continue;
            }
        }
        encodeWord(word, scratch, ids);
    }
}

void BpeTokenizer::encodeChunk(std::string_view chunk, size_t maxTokens, SpecialTokens special, Scratch& scratch,
                               std::vector<int32_t>& ids) const {
    std::vector<Span>& spans = scratch.spans;
    partition(chunk, special, spans, scratch.split);
    for (const Span& span : spans) {
        if (ids.size() > maxTokens) return;
        if (span.id >= 0)
            ids.push_back(span.id);
        else
            encodeWords(chunk.substr(span.offset, span.length), maxTokens, scratch, ids);
    }
}

void BpeTokenizer::encodeText(std::string_view text, size_t maxTokens, SpecialTokens special,
                              std::vector<int32_t>& ids) const {
    Scratch scratch;
    const bool chunked = m_chunked[special == SpecialTokens::Parse];
    for (size_t begin = 0; begin < text.size() && ids.size() <= maxTokens;) {
        const size_t end = chunked ? nextCut(text, begin + kChunkBytes) : text.size();
        encodeChunk(text.substr(begin, end - begin), maxTokens, special, scratch, ids);
        begin = end;
    }
}

} // namespace mb::engine
