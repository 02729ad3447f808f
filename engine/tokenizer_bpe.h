// Byte-level BPE tokenizer (GGUF model "gpt2"): a named pre-tokenizer, then ranked merges.
#pragma once

#include "engine/tokenizer.h"
#include "engine/tokenizer_pre.h"

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mb::engine {

// Private to the engine: build through Tokenizer::create. Not copyable, because the
// lookup table holds views into m_vocab's token strings.
class BpeTokenizer final : public Tokenizer {
public:
    // Precondition: the vocabulary passed Tokenizer::create's checks. Throws GgufError
    // when a byte has no token of its own or the pre-tokenizer name is unknown.
    // Loading Llama 3's 128K tokens and 280K merges takes a few hundred ms (hash maps).
    explicit BpeTokenizer(Vocab vocab);
    BpeTokenizer(const BpeTokenizer&) = delete;
    BpeTokenizer& operator=(const BpeTokenizer&) = delete;

    // User-defined tokens (type USER_DEFINED, e.g. Qwen's <think>) are matched as whole
    // tokens first, longest first, as llama.cpp does; control tokens stay plain text.
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
    void encodeText(std::string_view text, std::vector<int32_t>& ids) const;
    void encodeWord(std::string_view word, std::vector<int32_t>& ids) const;

    const PreTokenizer* m_pre = nullptr; // row of m_vocab.pre, never null after construction
    std::vector<int32_t> m_userTokens;   // USER_DEFINED ids, longest text first

    std::unordered_map<std::string_view, int32_t> m_tokenIds;
    std::unordered_map<uint64_t, Merge> m_merges; // (left id, right id) -> rank and result
    std::array<int32_t, 256> m_byteIds{};         // token of each byte's stand-in character
    std::vector<std::string> m_pieces;            // decoded bytes per id
};

} // namespace mb::engine
