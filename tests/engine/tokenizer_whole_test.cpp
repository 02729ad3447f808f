// Whole tokens: user-defined tokens matched before SentencePiece and BPE, and control tokens parsed only when asked.
#include "engine/gguf.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"
#include "test_data.h"
#include "tokenizer_vectors.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace mb::engine {
namespace {

using Ids = std::vector<int32_t>;
constexpr auto kParse = SpecialTokens::Parse;

// A Gemma-like SentencePiece vocabulary: <unk> <s> </s>, bytes at 3..258, then
// ▁=259 h=260 i=261 hi=262 ▁hi=263, user-defined <table>=264 "\n\n"=265 "  "=266 "   "=267
// <t=268, control <start_of_turn>=269 <end_of_turn>=270.
Vocab gemmaLikeVocab(bool addSpacePrefix) {
    Vocab v;
    v.model = TokenizerModel::Spm;
    v.addSpacePrefix = addSpacePrefix;
    const auto add = [&](std::string text, TokenKind kind, float score) {
        v.tokens.push_back(std::move(text));
        v.kinds.push_back(kind);
        v.scores.push_back(score);
    };
    add("<unk>", TokenKind::Unknown, 0);
    add("<s>", TokenKind::Control, 0);
    add("</s>", TokenKind::Control, 0);
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        add(name, TokenKind::Byte, 0);
    }
    for (const char* piece : {"\xE2\x96\x81", "h", "i", "hi", "\xE2\x96\x81hi"}) add(piece, TokenKind::Normal, -1);
    for (const char* user : {"<table>", "\n\n", "  ", "   ", "<t"}) add(user, TokenKind::UserDefined, -1000);
    for (const char* control : {"<start_of_turn>", "<end_of_turn>"}) add(control, TokenKind::Control, -1000);
    v.unk = 0;
    v.bos = 1;
    v.eos = 2;
    return v;
}

Ids bytesOf(std::string_view text) {
    Ids ids;
    for (const char c : text) ids.push_back(static_cast<uint8_t>(c) + 3);
    return ids;
}

Ids cat(std::initializer_list<Ids> parts) {
    Ids all;
    for (const Ids& p : parts) all.insert(all.end(), p.begin(), p.end());
    return all;
}

TEST(TokenizerWhole, SpmMatchesUserDefinedTokensLongestFirst) {
    const auto tok = Tokenizer::create(gemmaLikeVocab(false));
    // "<table>" is taken before "<t"; "   " before "  "; what is left merges as usual.
    EXPECT_EQ(tok->encode("hi<table>hi   hi  hi\n\nhi", false),
              (Ids{262, 264, 262, 267, 262, 266, 262, 265, 262}));
    // A longer token wins even where a shorter one starts earlier: "<t" then "<table>".
    EXPECT_EQ(tok->encode("<t<table>", false), (Ids{268, 264}));
    // Four spaces: "   " first, then the last one merges with what follows.
    EXPECT_EQ(tok->encode("    hi", false), (Ids{267, 263}));
    // User-defined tokens decode verbatim and the text round-trips.
    const std::string text = "hi<table>\n\n  hi";
    EXPECT_EQ(tok->decode(tok->encode(text, true)), text);
    EXPECT_EQ(tok->piece(266), "  ");
}

TEST(TokenizerWhole, SpmControlTokenTextStaysTextUnlessParsed) {
    const auto tok = Tokenizer::create(gemmaLikeVocab(false));
    const std::string turn = "<start_of_turn>hi<end_of_turn>";
    // As text: no piece spells '<' or '_', so byte fallback; "hi" between them merges.
    EXPECT_EQ(tok->encode(turn, false), cat({bytesOf("<start_of_turn>"), Ids{262}, bytesOf("<end_of_turn>")}));
    // A user-defined token inside a control token's text is still matched when it is text.
    EXPECT_EQ(tok->encode("<start_of_<turn>", false), cat({bytesOf("<start_of_"), Ids{268}, bytesOf("urn>")}));
    EXPECT_EQ(tok->encode(turn, false, kParse), (Ids{269, 262, 270}));
    EXPECT_EQ(tok->encode("<s>hi</s><unk>", false, kParse), (Ids{1, 262, 2, 0}));
    EXPECT_EQ(tok->encode(turn, true, kParse), (Ids{1, 269, 262, 270}));
}

TEST(TokenizerWhole, SpmPrefixesEveryStretchThatFollowsAWholeToken) {
    // With the dummy prefix, llama.cpp starts every stretch of text after a whole token
    // with it, and a text starting with a whole token gets none before it.
    const auto tok = Tokenizer::create(gemmaLikeVocab(true));
    EXPECT_EQ(tok->encode("hi<table>hi", false), (Ids{263, 264, 263}));
    EXPECT_EQ(tok->encode("<table>hi", false), (Ids{264, 263}));
    EXPECT_EQ(tok->encode("hi<table>", false), (Ids{263, 264}));
    EXPECT_EQ(tok->encode("<start_of_turn>hi", false, kParse), (Ids{269, 263}));
}

TEST(TokenizerWhole, CappedEncodeStopsAtTheCapAcrossWholeTokens) {
    const auto tok = Tokenizer::create(gemmaLikeVocab(false));
    std::string text;
    for (int i = 0; i < 5000; ++i) text += "hi<table>";
    const Ids all = tok->encode(text, false);
    ASSERT_EQ(all.size(), 10000u);
    const CappedTokens capped = tok->encode(text, false, 7);
    EXPECT_TRUE(capped.overCap);
    EXPECT_EQ(capped.ids, Ids(all.begin(), all.begin() + 8));
    // The partition goes in chunks; a token holding every byte pair stops all cutting.
    Vocab uncut = gemmaLikeVocab(false);
    std::string everyPair;
    for (int a = 0; a < 256; ++a)
        for (int b = 0; b < 256; ++b) everyPair += {static_cast<char>(a), static_cast<char>(b)};
    uncut.tokens.push_back(everyPair);
    uncut.kinds.push_back(TokenKind::UserDefined);
    uncut.scores.push_back(-1000);
    std::string mixed;
    for (int i = 0; i < 3000; ++i) mixed += i % 7 ? "hi    hi\n\n<t" : "<table>h  ";
    EXPECT_EQ(tok->encode(mixed, false), Tokenizer::create(uncut)->encode(mixed, false));
    EXPECT_GE(tok->encode(mixed, false).size(), tok->minTokens(mixed.size()));
}

// The real LLaMA SentencePiece vocabulary with tokens appended (ids 32000..): user-defined
// <table> "\n\n" "  " "   " <td> <t, control <start_of_turn> <end_of_turn>, with and without
// the dummy prefix. The expected ids are llama.cpp's (c392e509, llama_tokenize on the same
// vocabulary written as a vocab-only GGUF; parse_special off, then on).
struct LlamaCppCase {
    const char* text;
    Ids gemmaLike, gemmaLikeParsed, llamaLike, llamaLikeParsed;
};

const LlamaCppCase kLlamaCppCases[] = {
    {"Hello world", {10994, 3186}, {10994, 3186}, {15043, 3186}, {15043, 3186}},
    {"<table><td>x</td></table>",
     {32000, 32006, 29916, 829, 1594, 2565, 2371, 29958}, {32000, 32006, 29916, 829, 1594, 2565, 2371, 29958},
     {32000, 32006, 921, 829, 1594, 2565, 2371, 29958}, {32000, 32006, 921, 829, 1594, 2565, 2371, 29958}},
    {"a  b   c    d", {29874, 32002, 29890, 32003, 29883, 32003, 270}, {29874, 32002, 29890, 32003, 29883, 32003, 270},
     {263, 32002, 289, 32003, 274, 32003, 29871, 270}, {263, 32002, 289, 32003, 274, 32003, 29871, 270}},
    {"line\n\nnext\n\n\nend", {1220, 32001, 4622, 32001, 13, 355}, {1220, 32001, 4622, 32001, 13, 355},
     {1196, 32001, 2446, 32001, 29871, 13, 355}, {1196, 32001, 2446, 32001, 29871, 13, 355}},
    {"<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n",
     {29966, 2962, 29918, 974, 29918, 685, 29958, 1792, 13, 18567, 29966, 355, 29918, 974,
      29918, 685, 29958, 13, 29966, 2962, 29918, 974, 29918, 685, 29958, 4299, 13},
     {32004, 1792, 13, 18567, 32005, 13, 32004, 4299, 13},
     {529, 2962, 29918, 974, 29918, 685, 29958, 1792, 13, 18567, 29966, 355, 29918, 974,
      29918, 685, 29958, 13, 29966, 2962, 29918, 974, 29918, 685, 29958, 4299, 13},
     {32004, 1404, 13, 18567, 32005, 29871, 13, 32004, 1904, 13}},
    {"<t<table <tx", {32007, 32007, 519, 29871, 32007, 29916}, {32007, 32007, 519, 29871, 32007, 29916},
     {32007, 32007, 2221, 29871, 32007, 921}, {32007, 32007, 2221, 29871, 32007, 921}},
    {"  lead", {32002, 280, 328}, {32002, 280, 328}, {32002, 3275}, {32002, 3275}},
    {" <td> spaced <td>", {29871, 32006, 26325, 287, 29871, 32006}, {29871, 32006, 26325, 287, 29871, 32006},
     {259, 32006, 29871, 26325, 287, 29871, 32006}, {259, 32006, 29871, 26325, 287, 29871, 32006}},
    {"<unk> and <s> and </s>", {29966, 2960, 29958, 322, 529, 29879, 29958, 322, 1533, 29879, 29958},
     {0, 322, 29871, 1, 322, 29871, 2}, {529, 2960, 29958, 322, 529, 29879, 29958, 322, 1533, 29879, 29958},
     {0, 29871, 322, 29871, 1, 29871, 322, 29871, 2}},
    {"\n\nx", {32001, 29916}, {32001, 29916}, {32001, 921}, {32001, 921}},
    {"h\xC3\xA9llo  w\xC3\xB6rld\n\n\xE6\x97\xA5\xE6\x9C\xAC",
     {29882, 3610, 417, 32002, 29893, 1340, 430, 32001, 30325, 30346},
     {29882, 3610, 417, 32002, 29893, 1340, 430, 32001, 30325, 30346},
     {298, 3610, 417, 32002, 281, 1340, 430, 32001, 29871, 30325, 30346},
     {298, 3610, 417, 32002, 281, 1340, 430, 32001, 29871, 30325, 30346}},
};

Vocab withAddedTokens(Vocab v, bool addSpacePrefix) {
    const std::pair<const char*, TokenKind> added[] = {
        {"<table>", TokenKind::UserDefined},         {"\n\n", TokenKind::UserDefined},
        {"  ", TokenKind::UserDefined},              {"   ", TokenKind::UserDefined},
        {"<start_of_turn>", TokenKind::Control},     {"<end_of_turn>", TokenKind::Control},
        {"<td>", TokenKind::UserDefined},            {"<t", TokenKind::UserDefined}};
    for (const auto& [text, kind] : added) {
        v.tokens.push_back(text);
        v.kinds.push_back(kind);
        v.scores.push_back(-1000);
    }
    v.addSpacePrefix = addSpacePrefix;
    return v;
}

TEST(TokenizerWhole, LlamaSpmWithAddedTokensMatchesLlamaCpp) {
    MB_REQUIRE_DATA(gguf, "vocab/ggml-vocab-llama-spm.gguf");
    const Vocab base = Vocab::fromGguf(GgufFile::open(gguf.string()));
    const auto gemmaLike = Tokenizer::create(withAddedTokens(base, false));
    const auto llamaLike = Tokenizer::create(withAddedTokens(base, true));
    for (const LlamaCppCase& c : kLlamaCppCases) {
        SCOPED_TRACE(c.text);
        EXPECT_EQ(gemmaLike->encode(c.text, false), c.gemmaLike);
        EXPECT_EQ(gemmaLike->encode(c.text, false, kParse), c.gemmaLikeParsed);
        EXPECT_EQ(llamaLike->encode(c.text, false), c.llamaLike);
        EXPECT_EQ(llamaLike->encode(c.text, false, kParse), c.llamaLikeParsed);
    }
}

// The real Qwen 3 and Llama 3 vocabularies with special-token parsing asked for; the expected
// ids are llama.cpp's (c392e509, parse_special on; off gives the vectors' behaviour).
TEST(TokenizerWhole, BpeParsesControlTokensOnlyWhenAsked) {
    MB_REQUIRE_DATA(qwen3, "vocab/ggml-vocab-qwen3.gguf");
    MB_REQUIRE_DATA(llama3, "vocab/ggml-vocab-llama3.gguf");
    const std::string chatml = "<|im_start|>user\nHi<|im_end|>\n<think>x</think>";
    const auto qwen = test::loadTokenizer(qwen3);
    EXPECT_EQ(qwen->encode(chatml, false),
              (Ids{27, 91, 318, 4906, 91, 29, 872, 198, 13048, 27, 91, 318, 6213, 91, 397, 151667, 87, 151668}));
    EXPECT_EQ(qwen->encode(chatml, false, kParse), (Ids{151644, 872, 198, 13048, 151645, 198, 151667, 87, 151668}));
    const std::string header = "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>";
    const auto llama = test::loadTokenizer(llama3);
    EXPECT_EQ(llama->encode(header, false, kParse), (Ids{128000, 128006, 882, 128007, 271, 13347, 128009}));
    EXPECT_EQ(llama->encode(header, false),
              (Ids{27, 91, 7413, 3659, 4424, 91, 1822, 91, 2527, 8932, 851, 91, 29, 882, 27, 91, 408, 8932, 851, 91,
                   1363, 13347, 27, 91, 68, 354, 851, 91, 29}));
    // Parsed control tokens still obey the cap and the byte bound.
    EXPECT_GE(llama->encode(header, false, kParse).size(), llama->minTokens(header.size()));
    EXPECT_EQ(llama->encode(header, true, 3, kParse).ids, (Ids{128000, 128000, 128006, 882}));
}

} // namespace
} // namespace mb::engine
