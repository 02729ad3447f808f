// SentencePiece-style tokenizer (GGUF model "llama"): score-ordered merges with byte fallback.
#pragma once

#include "engine/tokenizer.h"

#include <array>
#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace mb::engine {

// Private to the engine: build through Tokenizer::create. Not copyable, because the
// lookup table holds views into m_vocab's token strings.
class SpmTokenizer final : public Tokenizer {
public:
    // Precondition: the vocabulary passed Tokenizer::create's checks.
    explicit SpmTokenizer(Vocab vocab);
    SpmTokenizer(const SpmTokenizer&) = delete;
    SpmTokenizer& operator=(const SpmTokenizer&) = delete;

    std::string piece(int32_t id) const override;
    bool hasByteToken(uint8_t byte) const { return m_byteIds[byte] >= 0; }

    // U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's stand-in for a space.
    static constexpr std::string_view kSpaceMark = "\xE2\x96\x81";

private:
    struct Scratch;
    // The text is cut before a character when no mergeable piece holds the byte before the
    // cut followed by the byte after it: no merge can then cross the cut, so each piece
    // merges alone to the ids it gets in the whole text (English text: one piece a word).
    // Per piece O(k log k) in its length k: one heap of candidate pairs, with stale
    // entries skipped when popped instead of rescanning all pairs after each merge.
    // Whole tokens (Tokenizer::wholeTokens: user-defined ones such as Gemma's HTML tags and
    // runs of blanks, control ones when parsed) are matched first, longest first, as
    // llama.cpp does; the text between them is merged as above.
    void encodeText(std::string_view text, size_t maxTokens, SpecialTokens special,
                    std::vector<int32_t>& ids) const override;
    // Adds `text` to the piece in `scratch` character by character (the dummy prefix first
    // when `prefix`), merging each piece that ends; false once ids.size() > maxTokens.
    bool feed(std::string_view text, bool prefix, size_t maxTokens, Scratch& scratch,
              std::vector<int32_t>& ids) const;
    // The first character boundary at or after `from` that no whole token spans (no whole
    // token holds the byte pair around it), else the end of the text.
    size_t nextWholeCut(std::string_view text, size_t from, SpecialTokens special) const;
    // Merges the piece held in `scratch` (then cleared) and appends its ids.
    void encodePiece(Scratch& scratch, std::vector<int32_t>& ids) const;
    float score(int32_t id) const;
    static size_t pairIndex(char left, char right) {
        return static_cast<size_t>(static_cast<uint8_t>(left)) << 8 | static_cast<uint8_t>(right);
    }
    bool innerPair(char left, char right) const { return m_innerPairs[pairIndex(left, right)]; }

    // Token text -> id for the tokens a merge may produce. Not control, unknown or byte
    // tokens (SentencePiece keeps those out of its piece table), nor unused ones (which
    // SentencePiece never emits).
    std::unordered_map<std::string_view, int32_t> m_pieceIds;
    std::array<int32_t, 256> m_byteIds; // <0xXX> tokens, -1 where the vocabulary has none
    std::vector<std::string> m_pieces;  // decoded text per id
    std::bitset<65536> m_innerPairs;     // byte pairs (a << 8 | b) found inside a piece of m_pieceIds
    std::array<std::bitset<65536>, 2> m_wholePairs; // the same inside the whole tokens, per SpecialTokens
};

} // namespace mb::engine
