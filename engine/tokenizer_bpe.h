// GPT-2 style byte-level BPE tokenizer (GGUF model "gpt2"): regex pre-tokenizer, ranked merges.
#pragma once

#include "engine/tokenizer.h"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mb::engine {

// Splits `text` the way GPT-2's pattern
//   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// does, as byte ranges (offset, length) that cover the text in order. Hand-written over
// code points; ill-formed UTF-8 bytes count as "other" characters and are kept as is.
std::vector<std::pair<size_t, size_t>> splitGpt2(std::string_view text);

// Private to the engine: build through Tokenizer::create. Not copyable, because the
// lookup table holds views into m_vocab's token strings.
class BpeTokenizer final : public Tokenizer {
public:
    // Precondition: the vocabulary passed Tokenizer::create's checks. Throws GgufError
    // when a byte has no token of its own.
    explicit BpeTokenizer(Vocab vocab);
    BpeTokenizer(const BpeTokenizer&) = delete;
    BpeTokenizer& operator=(const BpeTokenizer&) = delete;

    // Per pre-token, O(k log k) in its byte length k (a heap of candidate merges).
    std::vector<int32_t> encode(std::string_view text, bool addBos) const override;
    std::string piece(int32_t id) const override;

private:
    struct Merge {
        int32_t rank;
        int32_t result; // token id of the merged pair
    };
    static uint64_t pairKey(int32_t left, int32_t right) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
               static_cast<uint32_t>(right);
    }
    void encodeWord(std::string_view word, std::vector<int32_t>& ids) const;

    std::unordered_map<std::string_view, int32_t> m_tokenIds;
    std::unordered_map<uint64_t, Merge> m_merges; // (left id, right id) -> rank and result
    std::array<int32_t, 256> m_byteIds{};         // token of each byte's stand-in character
    std::vector<std::string> m_pieces;            // decoded bytes per id
};

} // namespace mb::engine
