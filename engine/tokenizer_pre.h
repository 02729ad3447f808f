// BPE pre-tokenizers by tokenizer.ggml.pre name: how text is cut into words before merges.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mb::engine {

// Byte ranges (offset, length) that cover the text in order, one per pre-token.
using TextPieces = std::vector<std::pair<size_t, size_t>>;

// Every split is hand-written over code points and follows the regexes llama.cpp runs
// for that name (src/llama-vocab.cpp), including how llama.cpp evaluates them: a
// multi-regex pre-tokenizer applies each regex inside the pieces of the one before, and
// text a regex does not match stays a piece of its own. Ill-formed UTF-8 bytes count as
// "other" characters and are kept as is. All are pure functions, O(n) in the text for
// typical input.
using SplitFn = TextPieces (*)(std::string_view text);

// One row per tokenizer.ggml.pre name. Names that llama.cpp treats alike share a split.
struct PreTokenizer {
    std::string_view name;
    SplitFn split;
    // A word that is itself a token is emitted whole instead of being merged
    // (llama.cpp's ignore_merges, Hugging Face's "ignore_merges": Llama 3).
    bool ignoreMerges;
    // add_bos_token when the file has no such key (llama.cpp adds BOS for Llama 3).
    bool addBos;
};

// The row for `name`, or nullptr for a name the engine does not know.
const PreTokenizer* findPreTokenizer(std::string_view name);

// The known names, comma-separated, for error messages.
std::string preTokenizerNames();

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
TextPieces splitGpt2(std::string_view text);
// Llama 3 (tiktoken cl100k): (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|
// \p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ (contractions in ASCII
// case only, as llama.cpp spells them).
TextPieces splitLlama3(std::string_view text);
// Qwen 2: Llama 3's pattern with single digits (\p{N} instead of \p{N}{1,3}).
TextPieces splitQwen2(std::string_view text);
// GPT-4o (o200k) as llama.cpp evaluates it: letter runs split before an uppercase letter
// that follows a lowercase one ("HelloWorld" -> "Hello", "World"), with the contraction
// as a suffix, \p{N}{1,3}, and punctuation runs that take trailing [\r\n/]*. llama.cpp
// sees case only in ASCII: other letters count as both upper and lower case, and marks
// (\p{M}) are not letters.
TextPieces splitGpt4o(std::string_view text);
// Falcon: runs of [\p{P}$+<=>^~|`] first, then GPT-2, then [0-9]{3} groups.
TextPieces splitFalcon(std::string_view text);
// StarCoder (also smollm, refact, command-r, ...): every \p{N} alone, then GPT-2.
TextPieces splitStarcoder(std::string_view text);
// DeepSeek LLM: [\r\n], \s?[Latin, Greek, Cyrillic, ... letters]+, \s?[ASCII and CJK
// punctuation]+, \s+$, [CJK ideographs, U+0800..U+4E00, Hangul]+, \p{N}+.
TextPieces splitDeepseekLlm(std::string_view text);
// DeepSeek Coder: [\r\n], \s?\p{L}+, \s?\p{P}+, [CJK ideographs, U+0800..U+4E00,
// Hangul]+, \p{N}.
TextPieces splitDeepseekCoder(std::string_view text);
// llama.cpp's "default": runs of [\p{P}$+<=>^~|]+, then GPT-2, \p{N}+, [0-9]{3} groups.
TextPieces splitLlamaCppDefault(std::string_view text);

} // namespace mb::engine
