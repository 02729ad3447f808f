// Tokenizers on hostile inputs: memory bounded by the ids, pieces that match the whole text, caps.
#include "address_space_limit.h"
#include "engine/chat_template.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"
#include "test_data.h"
#include "tokenizer_vectors.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <new>
#include <random>
#include <string>
#include <vector>

namespace mb::engine {
namespace {

namespace fs = std::filesystem;
using test::loadTokenizer;
using test::readVectors;

constexpr const char* kVocabs[] = {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-llama3.gguf",
                                   "ggml-vocab-qwen3.gguf"};

// English-like prose of `bytes` bytes from a fixed seed: words, punctuation, digits, line breaks.
std::string prose(size_t bytes) {
    static const char* const words[] = {"the", "a", "little", "girl", "named", "Lily", "went", "to", "park",
                                        "and", "saw", "big", "red", "ball", "She", "was", "very", "happy",
                                        "don't", "it's", "HTTP", "server", "tokenizer", "42", "2024", "naïve",
                                        "café", "über", "(x)", "foo_bar", "--", "...", "\"quoted\""};
    std::mt19937 rng(7);
    std::string text;
    text.reserve(bytes + 16);
    while (text.size() < bytes) {
        text += words[rng() % std::size(words)];
        const uint32_t r = rng() % 32;
        text += r == 0 ? ".\n" : r == 1 ? ", " : r == 2 ? "\n\n" : r == 3 ? "  " : r == 4 ? "\t" : " ";
    }
    text.resize(bytes);
    return text;
}

// Random text from an alphabet chosen to hit every rule near a cut: letters and blanks in
// all orders, \r, tabs, quotes, digits, punctuation, accented and CJK letters, emoji, and
// ill-formed bytes.
std::string tricky(size_t bytes, uint32_t seed) {
    static const char* const pieces[] = {"a", "b", "Z", " ", " ", "\n", "\r\n", "\t", "'s", "'", "'ll", "1",
                                         "234", ".", "!", "/", "<", "é", "日本", "\xE3\x80\x80", "😀", "\xFF",
                                         "\xE2\x96", "  ", "\n\n", "x y", "x\ny", "A B", "\xC2\xA0", "_"};
    std::mt19937 rng(seed);
    std::string text;
    while (text.size() < bytes) text += pieces[rng() % std::size(pieces)];
    return text;
}

// Every vector input of every vocabulary, each after a different separator.
std::string vectorInputs() {
    static const char* const separators[] = {" ", "\n", "x y", "a\nb", "", "  ", "\n\n", "z "};
    std::string text;
    size_t i = 0;
    for (const char* name : {"ggml-vocab-llama-spm.gguf", "ggml-vocab-gpt-2.gguf", "ggml-vocab-llama3.gguf",
                             "ggml-vocab-qwen3.gguf", "stories260K-tok512.gguf"}) {
        const fs::path inp = mb::test::dataDir() / "vocab" / (std::string(name) + ".inp");
        const fs::path out = mb::test::dataDir() / "vocab" / (std::string(name) + ".out");
        for (const auto& c : readVectors(inp, out)) text += separators[i++ % std::size(separators)] + c.text;
    }
    return text;
}

// The vocabulary with one token added that the text never holds but that stops the
// tokenizer from cutting: an SPM piece holding every byte pair, a BPE user-defined token
// with a blank in it. Its tokenizer encodes any text in one piece, as before cuts existed.
Vocab uncuttable(Vocab v) {
    if (v.kinds.empty()) v.kinds.assign(v.tokens.size(), TokenKind::Normal);
    std::string token;
    if (v.model == TokenizerModel::Spm) {
        for (int a = 0; a < 256; ++a)
            for (int b = 0; b < 256; ++b) token += {static_cast<char>(a), static_cast<char>(b)};
        v.kinds.push_back(TokenKind::Normal);
    } else {
        token = "zq zq\nzq";
        v.kinds.push_back(TokenKind::UserDefined);
    }
    v.tokens.push_back(token);
    if (!v.scores.empty()) v.scores.push_back(-1e30f);
    return v;
}

Vocab vocabOf(const fs::path& path) {
    return Vocab::fromGguf(GgufFile::open(path.string()));
}

void expectPiecesMatchTheWholeText(const Vocab& vocab, const std::string& text) {
    const auto cutting = Tokenizer::create(vocab);
    const auto whole = Tokenizer::create(uncuttable(vocab));
    const std::vector<int32_t> ids = cutting->encode(text, true);
    EXPECT_EQ(ids, whole->encode(text, true));
    EXPECT_GE(ids.size(), cutting->minTokens(text.size()));
}

TEST(TokenizerLimits, PiecesGiveTheTokensOfTheWholeText) {
    MB_REQUIRE_DATA(dir, "vocab");
    const std::string text = vectorInputs() + prose(40000) + tricky(60000, 1) + vectorInputs() + tricky(30000, 2);
    for (const char* name : kVocabs) {
        SCOPED_TRACE(name);
        expectPiecesMatchTheWholeText(vocabOf(dir / name), text);
    }
    MB_REQUIRE_DATA(stories, "models/stories260K.gguf");
    expectPiecesMatchTheWholeText(vocabOf(stories), text);
}

TEST(TokenizerLimits, EveryPreTokenizerCutsOnlyWhereItsPreTokensEnd) {
    MB_REQUIRE_DATA(gpt2, "vocab/ggml-vocab-gpt-2.gguf");
    const std::string text = vectorInputs() + tricky(40000, 3) + prose(20000);
    Vocab vocab = vocabOf(gpt2);
    // One name per split function of engine/tokenizer_pre.cpp's table.
    for (const char* pre : {"gpt-2", "llama-bpe", "qwen2", "gpt-4o", "falcon", "starcoder", "deepseek-llm",
                            "deepseek-coder", "default"}) {
        SCOPED_TRACE(pre);
        vocab.pre = pre;
        expectPiecesMatchTheWholeText(vocab, text);
    }
}

// 16 MiB of prose encodes within 128 MiB of address space beyond what the process holds:
// the ids (4 bytes a token, a token per 3-5 bytes, doubled while the vector grows) and one
// piece's scratch. Before the text was cut, SentencePiece held 48 bytes a byte (840 MB)
// and BPE 24 bytes a character plus the pre-token list (550 MB).
TEST(TokenizerLimits, LongTextsEncodeInMemoryBoundedByTheirIds) {
    if (!mb::test::kAddressSpaceLimitWorks) GTEST_SKIP() << "address-space limits do not work under a sanitizer";
    MB_REQUIRE_DATA(spm, "vocab/ggml-vocab-llama-spm.gguf");
    MB_REQUIRE_DATA(bpe, "vocab/ggml-vocab-gpt-2.gguf");
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    for (const fs::path& path : {spm, bpe}) {
        SCOPED_TRACE(path.filename().string());
        const auto tok = loadTokenizer(path);
        const std::string text = prose(size_t{16} << 20);
        EXPECT_EXIT(
            {
                if (!mb::test::limitAddressSpace(size_t{128} << 20)) std::_Exit(3);
                try {
                    const std::vector<int32_t> ids = tok->encode(text, false);
                    std::_Exit(ids.size() > text.size() / 8 ? 0 : 4);
                } catch (const std::bad_alloc&) {
                    std::_Exit(1);
                }
            },
            ::testing::ExitedWithCode(0), "");
    }
}

TEST(TokenizerLimits, CappedEncodeStopsOneTokenOverTheCap) {
    MB_REQUIRE_DATA(dir, "vocab");
    const std::string small = prose(20000);
    const std::string huge = prose(size_t{32} << 20);
    for (const char* name : kVocabs) {
        SCOPED_TRACE(name);
        const auto tok = loadTokenizer(dir / name);
        const std::vector<int32_t> all = tok->encode(small, true);
        ASSERT_GT(all.size(), 200u);
        for (const size_t cap : {size_t{0}, size_t{1}, size_t{100}, all.size() - 1}) {
            const CappedTokens capped = tok->encode(small, true, cap);
            EXPECT_TRUE(capped.overCap) << cap;
            EXPECT_EQ(capped.ids, std::vector<int32_t>(all.begin(), all.begin() + static_cast<ptrdiff_t>(cap) + 1));
        }
        const CappedTokens fits = tok->encode(small, true, all.size());
        EXPECT_FALSE(fits.overCap);
        EXPECT_EQ(fits.ids, all);
        // 32 MiB of text, and the encode comes back with 512 + 1 ids: it stopped there.
        const CappedTokens early = tok->encode(huge, true, 512);
        EXPECT_TRUE(early.overCap);
        EXPECT_EQ(early.ids.size(), 513u);
        EXPECT_EQ(early.ids, std::vector<int32_t>(all.begin(), all.begin() + 513));
    }
}

TEST(TokenizerLimits, BytesBoundTheTokenCountFromBelow) {
    MB_REQUIRE_DATA(dir, "vocab");
    for (const char* name : kVocabs) {
        SCOPED_TRACE(name);
        const auto tok = loadTokenizer(dir / name);
        EXPECT_GT(tok->longestTokenBytes(), 1u);
        EXPECT_LT(tok->longestTokenBytes(), 1000u);
        const fs::path inp = dir / (std::string(name) + ".inp"), out = dir / (std::string(name) + ".out");
        for (const auto& c : readVectors(inp, out)) EXPECT_GE(c.ids.size(), tok->minTokens(c.text.size())) << c.text;
        // The tightest case: text made of the longest token alone still needs minTokens.
        for (const std::string& text : {std::string(100000, ' '), std::string(100000, '-'), prose(100000)})
            EXPECT_GE(tok->encode(text, false).size(), tok->minTokens(text.size()));
    }
    EXPECT_EQ(loadTokenizer(dir / kVocabs[0])->minTokens(0), 0u);
}

TEST(TokenizerLimits, CappedChatPromptStopsOneTokenOver) {
    MB_REQUIRE_DATA(path, "vocab/ggml-vocab-qwen3.gguf");
    const auto tok = loadTokenizer(path);
    const std::vector<ChatMessage> messages = {{"system", prose(3000)}, {"user", prose(5000)}};
    const std::vector<int32_t> all = chatPrompt(*tok, ChatFamily::ChatMl, messages);
    ASSERT_GT(all.size(), 1000u);
    for (const size_t cap : {size_t{0}, size_t{3}, size_t{700}, all.size() - 1}) {
        const CappedTokens capped = chatPrompt(*tok, ChatFamily::ChatMl, messages, cap);
        EXPECT_TRUE(capped.overCap) << cap;
        EXPECT_EQ(capped.ids, std::vector<int32_t>(all.begin(), all.begin() + static_cast<ptrdiff_t>(cap) + 1));
    }
    const CappedTokens fits = chatPrompt(*tok, ChatFamily::ChatMl, messages, all.size());
    EXPECT_FALSE(fits.overCap);
    EXPECT_EQ(fits.ids, all);
}

} // namespace
} // namespace mb::engine
