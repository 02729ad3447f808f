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

    std::string piece(int32_t id) const override;

private:
    struct Scratch;
    // Whole tokens (Tokenizer::wholeTokens: user-defined ones such as Qwen's <think>, and
    // control ones when parsed) are matched first, longest first, as llama.cpp does.
    // Per pre-token, O(k log k) in its byte length k (a heap of candidate merges). The
    // text goes through in chunks of a few KiB cut where no pre-token or user-defined
    // token can span the cut (see the .cpp), so tokens match those of the whole text.
    void encodeText(std::string_view text, size_t maxTokens, SpecialTokens special,
                    std::vector<int32_t>& ids) const override;
    // One chunk: whole tokens, then the pre-tokens of the text between them.
    void encodeChunk(std::string_view chunk, size_t maxTokens, SpecialTokens special, Scratch& scratch,
                     std::vector<int32_t>& ids) const;
    void encodeWords(std::string_view text, size_t maxTokens, Scratch& scratch, std::vector<int32_t>& ids) const;
    void encodeWord(std::string_view word, Scratch& scratch, std::vector<int32_t>& ids) const;

    struct Merge {
        int32_t left, right; // token ids of the pair
        int32_t result;      // token id of the merged pair
    };
    static uint64_t pairKey(int32_t left, int32_t right) {
        return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
               static_cast<uint32_t>(right);
    }

    const PreTokenizer* m_pre = nullptr; // row of m_vocab.pre, never null after construction
    // Per SpecialTokens (AsText, Parse): false when a whole token holds ' ' or '\n'.
    std::array<bool, 2> m_chunked{true, true};

    std::unordered_map<std::string_view, int32_t> m_tokenIds;
    std::unordered_map<uint64_t, int32_t> m_mergeRanks; // (left id, right id) -> rank
    std::vector<Merge> m_merges;                         // by rank; {-1, -1, -1} for unusable ones
    std::array<int32_t, 256> m_byteIds{};         // token of each byte's stand-in character
    std::vector<std::string> m_pieces;            // decoded bytes per id
};

} // namespace mb::engine
