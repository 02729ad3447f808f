// The vocabulary of a model as GGUF metadata describes it (tokenizer.ggml.*).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mb::engine {

class GgufFile;

// GGUF token types (tokenizer.ggml.token_type).
enum class TokenKind : int32_t {
    Undefined = 0,
    Normal = 1,
    Unknown = 2,
    Control = 3,
    UserDefined = 4,
    Unused = 5,
    Byte = 6,
};

enum class TokenizerModel {
    Spm, // tokenizer.ggml.model = "llama": SentencePiece with score-ordered merges
    Bpe, // tokenizer.ggml.model = "gpt2": byte-level BPE with merge ranks
};

// Plain data: everything a tokenizer needs, independent of the file it came from.
struct Vocab {
    TokenizerModel model = TokenizerModel::Spm;
    std::string pre;                    // tokenizer.ggml.pre (BPE pre-tokenizer name), may be empty
    std::vector<std::string> tokens;    // token text; SPM uses U+2581 for spaces
    std::vector<float> scores;          // SPM merge scores (empty -> all 0)
    std::vector<TokenKind> kinds;       // empty -> all Normal
    std::vector<std::string> merges;    // BPE merges "left right", in rank order
    int32_t bos = -1;
    int32_t eos = -1;
    int32_t unk = -1;
    int32_t pad = -1;
    bool addBos = true;                 // tokenizer.ggml.add_bos_token
    bool addSpacePrefix = true;         // tokenizer.ggml.add_space_prefix (SPM)

    // Reads tokenizer.ggml.* from a GGUF file (vocab-only files are fine).
    // Throws GgufError when the keys are missing, inconsistent or of an unknown model.
    static Vocab fromGguf(const GgufFile& file);
};

} // namespace mb::engine
