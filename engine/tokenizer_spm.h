// SentencePiece-style tokenizer (GGUF model "llama"): score-ordered merges with byte fallback.
#pragma once

#include "engine/tokenizer.h"

#include <array>
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

    // O(n log n) in the text length: one priority queue of candidate pairs, with stale
    // entries skipped when popped instead of rescanning all pairs after each merge.
    std::vector<int32_t> encode(std::string_view text, bool addBos) const override;
    std::string piece(int32_t id) const override;
    bool hasByteToken(uint8_t byte) const { return m_byteIds[byte] >= 0; }

    // U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's stand-in for a space.
    static constexpr std::string_view kSpaceMark = "\xE2\x96\x81";

private:
    float score(int32_t id) const;

    // Token text -> id for the tokens a merge may produce. Not control, unknown or byte
    // tokens (SentencePiece keeps those out of its piece table), nor unused ones (which
    // SentencePiece never emits).
    std::unordered_map<std::string_view, int32_t> m_pieceIds;
    std::array<int32_t, 256> m_byteIds; // <0xXX> tokens, -1 where the vocabulary has none
    std::vector<std::string> m_pieces;  // decoded text per id
};

} // namespace mb::engine
