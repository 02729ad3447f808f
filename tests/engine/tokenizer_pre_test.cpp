// BPE pre-tokenizers on hand-written strings; Llama 3 and Qwen 3 against llama.cpp's vectors.
#include "engine/gguf.h"
#include "engine/tokenizer.h"
#include "engine/tokenizer_pre.h"
#include "engine/unicode.h"
#include "engine/vocab.h"
#include "test_data.h"
#include "tokenizer_vectors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace mb::engine {
namespace {

using test::checkVectors;
using test::kVectorCases;
using test::readVectors;
using V = std::vector<std::string>;

V split(std::string_view name, std::string_view text) {
    const PreTokenizer* row = findPreTokenizer(name);
    if (!row) {
        ADD_FAILURE() << "no pre-tokenizer " << name;
        return {};
    }
    V pieces;
    for (const auto& [offset, length] : row->split(text))
        pieces.emplace_back(text.substr(offset, length));
    return pieces;
}

// The expectations below were worked out from the regexes llama.cpp runs for each name
// and cross-checked against a Python emulation of llama.cpp's unicode_regex_split.

TEST(PreTokenizer, Llama3) {
    EXPECT_EQ(split("llama-bpe", "I'M HERE, YOU'RE 1234567"),
              (V{"I", "'M", " HERE", ",", " YOU", "'RE", " ", "123", "456", "7"}));
    EXPECT_EQ(split("llama-bpe", "a\n\n  b \r\n"), (V{"a", "\n\n", " ", " b", " \r\n"}));
    // CJK and Hangul are letters; emoji and '!' are "other" and take a trailing newline.
    EXPECT_EQ(split("llama-bpe", "中文字 한국어😀👍🏽!!\n/x"),
              (V{"中文字", " 한국어", "😀👍🏽!!\n", "/x"}));
    EXPECT_EQ(split("llama3", "x 1234"), split("llama-bpe", "x 1234"));
    EXPECT_EQ(split("llama-bpe", ""), V{});
}

TEST(PreTokenizer, Qwen2SplitsEveryDigit) {
    EXPECT_EQ(split("qwen2", "I'M YOU'LL 2024"),
              (V{"I", "'M", " YOU", "'LL", " ", "2", "0", "2", "4"}));
    EXPECT_EQ(split("qwen2", "a\n\n  b \r\n"), (V{"a", "\n\n", " ", " b", " \r\n"}));
    EXPECT_EQ(split("qwen2", "中文字 한국어😀!!"), (V{"中文字", " 한국어", "😀!!"}));
}

TEST(PreTokenizer, Gpt4oSplitsCaseRunsAndKeepsContractionsOnTheWord) {
    EXPECT_EQ(split("gpt-4o", "HelloWorld I'M YOU'RE 1234567"),
              (V{"Hello", "World", " I'M", " YOU'RE", " ", "123", "456", "7"}));
    // As llama.cpp evaluates it, a non-ASCII letter is both upper and lower case, so
    // "ÀBC" ends its first piece after À; punctuation takes a trailing [\r\n/]*.
    EXPECT_EQ(split("gpt-4o", "ÀBC dé/\n/x"), (V{"À", "BC", " dé", "/\n/", "x"}));
    EXPECT_EQ(split("gpt-4o", "中文字 한国😀!!\n\n y"), (V{"中文字", " 한国", "😀!!\n\n", " y"}));
}

TEST(PreTokenizer, FalconSplitsPunctuationFirstAndDigitsInThrees) {
    EXPECT_EQ(
        split("falcon", "x = a+b; // I'M 1234567"),
        (V{"x", " ", "=", " a", "+", "b", ";", " ", "//", " I", "'", "M", " ", "123", "456", "7"}));
    EXPECT_EQ(split("falcon", "a\n\n  b"), (V{"a", "\n\n ", " b"}));
    EXPECT_EQ(split("falcon", "中文😀!!"), (V{"中文", "😀", "!!"}));
}

TEST(PreTokenizer, StarcoderAndSmollmIsolateDigits) {
    EXPECT_EQ(split("starcoder", "I'M you're 2024"),
              (V{"I", "'", "M", " you", "'re", " ", "2", "0", "2", "4"}));
    EXPECT_EQ(split("starcoder", "a\n\n  b"), (V{"a", "\n\n ", " b"}));
    EXPECT_EQ(split("starcoder", "中文😀!!"), (V{"中文", "😀!!"}));
    EXPECT_EQ(split("smollm", "I'M x1234"), (V{"I", "'", "M", " x", "1", "2", "3", "4"}));
}

TEST(PreTokenizer, DeepseekLlm) {
    EXPECT_EQ(split("deepseek-llm", "Hello, WORLD's 12345!"),
              (V{"Hello", ",", " WORLD", "'", "s", " ", "12345", "!"}));
    EXPECT_EQ(split("deepseek-llm", "a\n\n  b  "), (V{"a", "\n", "\n", " ", " b", "  "}));
    EXPECT_EQ(split("deepseek-llm", "中文字 한국어😀!!"), (V{"中文字", " ", "한국어", "😀", "!!"}));
    // Its punctuation class [!-/:-~...] holds a-z too, so inside the word "café" it takes "caf".
    EXPECT_EQ(split("deepseek-llm", "café!"), (V{"caf", "é", "!"}));
}

TEST(PreTokenizer, DeepseekCoder) {
    EXPECT_EQ(split("deepseek-coder", "Hello, WORLD's 12345!"),
              (V{"Hello", ",", " WORLD", "'", "s", " ", "1", "2", "3", "4", "5", "!"}));
    EXPECT_EQ(split("deepseek-coder", "a\n\n  b  "), (V{"a", "\n", "\n", " ", " b", "  "}));
    EXPECT_EQ(split("deepseek-coder", "中文字 한국어😀!!"), (V{"中文字", " ", "한국어", "😀", "!!"}));
}

TEST(PreTokenizer, LlamaCppDefaultAndGpt2) {
    EXPECT_EQ(split("default", "x = a+b; I'M 1234567"),
              (V{"x", " ", "=", " a", "+", "b", ";", " I", "'", "M", " ", "123", "456", "7"}));
    EXPECT_EQ(split("default", "中文😀!!"), (V{"中文", "😀", "!!"}));
    EXPECT_EQ(split("gpt-2", "I'M x1234"), (V{"I", "'", "M", " x", "1234"}));
    EXPECT_EQ(split("", "I'M x1234"), split("gpt-2", "I'M x1234"));
}

TEST(PreTokenizer, IllFormedBytesStayInThePieces) {
    for (const char* name : {"llama-bpe", "qwen2", "gpt-4o", "falcon", "starcoder", "deepseek-llm",
                             "deepseek-coder", "default"}) {
        std::string joined;
        for (const auto& piece : split(name, "a\xFF\xFE b\xE6\x97")) joined += piece;
        EXPECT_EQ(joined, "a\xFF\xFE b\xE6\x97") << name;
    }
}

TEST(PreTokenizer, TableFlags) {
    ASSERT_NE(findPreTokenizer("llama-bpe"), nullptr);
    EXPECT_TRUE(findPreTokenizer("llama-bpe")->ignoreMerges);
    EXPECT_TRUE(findPreTokenizer("llama-bpe")->addBos);
    EXPECT_FALSE(findPreTokenizer("qwen2")->addBos);
    EXPECT_FALSE(findPreTokenizer("gpt-2")->addBos);
    EXPECT_EQ(findPreTokenizer("llama-3"), nullptr);
    EXPECT_EQ(preTokenizerNames().find(", ,"), std::string::npos);
}

TEST(TokenizerUnicode, Punctuation) {
    for (char32_t c : {U'!', U'"', U'\'', U',', U'.', U'_', U'{', U'、', U'。', U'「', U'…', U'！'})
        EXPECT_TRUE(isPunctuation(c)) << uint32_t(c);
    for (char32_t c : {U'$', U'+', U'<', U'^', U'`', U'|', U'~', U'a', U'1', U' ', U'€', U'😀'})
        EXPECT_FALSE(isPunctuation(c)) << uint32_t(c);
}

int32_t idOf(const Tokenizer& tokenizer, std::string_view text) {
    const auto& tokens = tokenizer.vocab().tokens;
    const auto it = std::find(tokens.begin(), tokens.end(), text);
    return it == tokens.end() ? -1 : static_cast<int32_t>(it - tokens.begin());
}

bool contains(const std::vector<int32_t>& ids, int32_t id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// Loads a vocabulary, saying how long it took (printed, never asserted).
std::unique_ptr<Tokenizer> timedLoad(const std::filesystem::path& path) {
    const auto t0 = std::chrono::steady_clock::now();
    const GgufFile file = GgufFile::open(path.string());
    Vocab vocab = Vocab::fromGguf(file);
    const auto t1 = std::chrono::steady_clock::now();
    const size_t tokens = vocab.tokens.size(), merges = vocab.merges.size();
    auto tokenizer = Tokenizer::create(std::move(vocab));
    const auto t2 = std::chrono::steady_clock::now();
    const auto ms = [](auto d) { return std::chrono::duration<double, std::milli>(d).count(); };
    std::printf("[ load     ] %s: %zu tokens, %zu merges: read %.0f ms, tokenizer %.0f ms\n",
                path.filename().string().c_str(), tokens, merges, ms(t1 - t0), ms(t2 - t1));
    return tokenizer;
}

TEST(TokenizerVectors, Llama3) {
    MB_REQUIRE_DATA(gguf, "vocab/ggml-vocab-llama3.gguf");
    const auto cases = readVectors(gguf.string() + ".inp", gguf.string() + ".out");
    ASSERT_EQ(cases.size(), kVectorCases);
    const auto tokenizer = timedLoad(gguf);
    EXPECT_EQ(tokenizer->size(), 128256u);
    EXPECT_EQ(tokenizer->vocab().pre, "llama-bpe");
    const size_t plain = checkVectors(*tokenizer, cases);
    // No add_bos_token key: BOS by default, as llama.cpp does for llama-bpe.
    EXPECT_TRUE(tokenizer->vocab().addBos);
    ASSERT_EQ(tokenizer->bos(), 128000);
    const size_t withBos = checkVectors(*tokenizer, cases, true, {128000});
    std::printf("[ vectors  ] llama3 %zu/%zu without BOS, %zu/%zu with BOS\n", plain, cases.size(),
                withBos, cases.size());
    EXPECT_EQ(plain, kVectorCases);
    EXPECT_EQ(withBos, kVectorCases);
}

TEST(TokenizerVectors, Llama3ControlTokenTextStaysText) {
    MB_REQUIRE_DATA(gguf, "vocab/ggml-vocab-llama3.gguf");
    const auto tokenizer = test::loadTokenizer(gguf);
    const std::string text =
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>";
    const auto ids = tokenizer->encode(text, false);
    for (const char* special : {"<|begin_of_text|>", "<|start_header_id|>", "<|eot_id|>"}) {
        const int32_t id = idOf(*tokenizer, special);
        ASSERT_GE(id, 0) << special;
        EXPECT_TRUE(tokenizer->isControl(id)) << special;
        EXPECT_FALSE(contains(ids, id)) << special;
    }
    EXPECT_EQ(tokenizer->decode(ids), text);
    EXPECT_EQ(tokenizer->encode(text, true).front(), 128000);
}

TEST(TokenizerVectors, Qwen3) {
    MB_REQUIRE_DATA(gguf, "vocab/ggml-vocab-qwen3.gguf");
    const auto cases = readVectors(gguf.string() + ".inp", gguf.string() + ".out");
    ASSERT_EQ(cases.size(), kVectorCases);
    const auto tokenizer = timedLoad(gguf);
    EXPECT_EQ(tokenizer->size(), 151936u);
    EXPECT_EQ(tokenizer->vocab().pre, "qwen2");
    EXPECT_FALSE(tokenizer->vocab().addBos);
    const size_t plain = checkVectors(*tokenizer, cases);
    // add_bos_token is false, so the default encoding is the plain one; an explicit
    // request puts the file's BOS id first where it names one.
    const size_t byDefault = checkVectors(*tokenizer, cases, tokenizer->vocab().addBos);
    size_t withBos = kVectorCases;
    if (tokenizer->bos() >= 0) withBos = checkVectors(*tokenizer, cases, true, {tokenizer->bos()});
    std::printf("[ vectors  ] qwen3 %zu/%zu without BOS, %zu/%zu with the file's BOS default, "
                "%zu/%zu with BOS (id %d)\n",
                plain, cases.size(), byDefault, cases.size(), withBos, cases.size(),
                tokenizer->bos());
    EXPECT_EQ(plain, kVectorCases);
    EXPECT_EQ(byDefault, kVectorCases);
    EXPECT_EQ(withBos, kVectorCases);
}

TEST(TokenizerVectors, Qwen3MatchesUserDefinedTokensButNotControlOnes) {
    MB_REQUIRE_DATA(gguf, "vocab/ggml-vocab-qwen3.gguf");
    const auto tokenizer = test::loadTokenizer(gguf);
    const int32_t think = idOf(*tokenizer, "<think>");
    const int32_t endThink = idOf(*tokenizer, "</think>");
    const int32_t imStart = idOf(*tokenizer, "<|im_start|>");
    ASSERT_GE(think, 0);
    ASSERT_GE(endThink, 0);
    ASSERT_GE(imStart, 0);
    EXPECT_EQ(tokenizer->vocab().kinds[static_cast<size_t>(think)], TokenKind::UserDefined);
    EXPECT_TRUE(tokenizer->isControl(imStart));

    std::vector<int32_t> expected{think};
    for (int32_t id : tokenizer->encode("\nok\n", false)) expected.push_back(id);
    expected.push_back(endThink);
    EXPECT_EQ(tokenizer->encode("<think>\nok\n</think>", false), expected);
    EXPECT_EQ(tokenizer->decode(expected), "<think>\nok\n</think>");

    const std::string chat = "<|im_start|>user\nHi<|im_end|>";
    const auto ids = tokenizer->encode(chat, false);
    EXPECT_FALSE(contains(ids, imStart));
    EXPECT_FALSE(contains(ids, idOf(*tokenizer, "<|im_end|>")));
    EXPECT_EQ(tokenizer->decode(ids), chat);
}

} // namespace
} // namespace mb::engine
