// Tokenizers against llama.cpp's vectors, the stories260K goldens, and hand-built vocabularies.
#include "engine/gguf.h"
#include "engine/tokenizer.h"
#include "engine/tokenizer_bpe.h"
#include "engine/unicode.h"
#include "engine/vocab.h"
#include "test_data.h"
#include "tokenizer_vectors.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace mb::engine {
namespace {

namespace fs = std::filesystem;
using test::checkVectors;
using test::kVectorCases;
using test::loadTokenizer;
using test::readFile;
using test::readVectors;
using test::VectorCase;

TEST(Tokenizer, LlamaSpmVectors) {
    MB_REQUIRE_DATA(gguf, "vocab/ggml-vocab-llama-spm.gguf");
    const auto cases = readVectors(gguf.string() + ".inp", gguf.string() + ".out");
    ASSERT_EQ(cases.size(), kVectorCases);
    const auto tokenizer = loadTokenizer(gguf);
    EXPECT_EQ(tokenizer->size(), 32000u);
    EXPECT_EQ(checkVectors(*tokenizer, cases), kVectorCases);
}

TEST(Tokenizer, Gpt2Vectors) {
    MB_REQUIRE_DATA(gguf, "vocab/ggml-vocab-gpt-2.gguf");
    const auto cases = readVectors(gguf.string() + ".inp", gguf.string() + ".out");
    ASSERT_EQ(cases.size(), kVectorCases);
    const auto tokenizer = loadTokenizer(gguf);
    EXPECT_EQ(tokenizer->size(), 50257u);
    EXPECT_EQ(checkVectors(*tokenizer, cases), kVectorCases);
}

TEST(Tokenizer, Stories260KVectors) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    MB_REQUIRE_DATA(inp, "vocab/stories260K-tok512.gguf.inp");
    MB_REQUIRE_DATA(out, "vocab/stories260K-tok512.gguf.out");
    const auto cases = readVectors(inp, out);
    ASSERT_EQ(cases.size(), kVectorCases);
    const auto tokenizer = loadTokenizer(model);
    EXPECT_EQ(tokenizer->size(), 512u);
    EXPECT_EQ(checkVectors(*tokenizer, cases), kVectorCases);
}

TEST(Tokenizer, Stories260KGoldenWithBos) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    MB_REQUIRE_DATA(golden, "golden/stories260K.json");
    const auto tokenizer = loadTokenizer(model);
    const auto json = nlohmann::json::parse(readFile(golden));
    const auto& encodings = json.at("tokenizer_tok512_runc_encode_with_bos");
    ASSERT_FALSE(encodings.empty());
    for (const auto& entry : encodings) {
        const auto text = entry.at("text").get<std::string>();
        SCOPED_TRACE("text \"" + text + "\"");
        EXPECT_EQ(tokenizer->encode(text, true), entry.at("bos_ids").get<std::vector<int32_t>>());
    }
    EXPECT_EQ(tokenizer->encode("Once upon a time", true),
              (std::vector<int32_t>{1, 403, 407, 261, 378}));
    EXPECT_EQ(tokenizer->encode(" ", true), (std::vector<int32_t>{1, 410, 410}));
    EXPECT_EQ(tokenizer->encode("", true), (std::vector<int32_t>{1}));
}

TEST(Tokenizer, DecodeRoundTripsVectorInputs) {
    MB_REQUIRE_DATA(inp, "vocab/ggml-vocab-gpt-2.gguf.inp");
    const char* files[] = {"vocab/ggml-vocab-llama-spm.gguf", "vocab/ggml-vocab-gpt-2.gguf",
                           "models/stories260K.gguf"};
    const std::vector<VectorCase> cases = readVectors(inp, inp); // only the texts matter
    ASSERT_EQ(cases.size(), kVectorCases);
    for (const char* file : files) {
        MB_REQUIRE_DATA(path, file);
        const auto tokenizer = loadTokenizer(path);
        for (size_t i = 0; i < cases.size(); ++i) {
            SCOPED_TRACE(std::string(file) + " case " + std::to_string(i) + ": \"" + cases[i].text +
                         "\"");
            // decode() strips the SPM space prefix again, BOS or not.
            EXPECT_EQ(tokenizer->decode(tokenizer->encode(cases[i].text, false)), cases[i].text);
            EXPECT_EQ(tokenizer->decode(tokenizer->encode(cases[i].text, true)), cases[i].text);
        }
    }
}

TEST(Tokenizer, ControlTokensDecodeToNothing) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto tokenizer = loadTokenizer(model);
    EXPECT_TRUE(tokenizer->isControl(tokenizer->bos()));
    EXPECT_TRUE(tokenizer->isControl(tokenizer->eos()));
    EXPECT_FALSE(tokenizer->isControl(403));
    EXPECT_EQ(tokenizer->piece(tokenizer->eos()), "");
    EXPECT_EQ(tokenizer->piece(-1), "");
    EXPECT_EQ(tokenizer->piece(512), "");
    EXPECT_EQ(tokenizer->piece(403), " Once");
    const std::vector<int32_t> ids = {1, 403, 407, 2};
    EXPECT_EQ(tokenizer->decode(ids), "Once upon");
    EXPECT_EQ(tokenizer->decode(ids, false), " Once upon");
}

// Pushes ids one at a time; checks every piece is whole, valid UTF-8 and returns them.
std::vector<std::string> streamPieces(const Tokenizer& tokenizer, std::span<const int32_t> ids,
                                      bool afterPrompt) {
    StreamDecoder stream(tokenizer, afterPrompt);
    std::vector<std::string> pieces;
    for (int32_t id : ids) {
        pieces.push_back(stream.push(id));
        EXPECT_EQ(sanitizeUtf8(pieces.back()), pieces.back()) << "token " << id;
    }
    pieces.push_back(stream.flush());
    return pieces;
}

std::string joined(const std::vector<std::string>& pieces) {
    std::string text;
    for (const auto& p : pieces) text += p;
    return text;
}

TEST(StreamDecoder, HoldsBackSplitCharacterSpm) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto tokenizer = loadTokenizer(model);
    // No CJK in the 512-token vocabulary: each character is three byte tokens.
    const std::vector<int32_t> ids = tokenizer->encode("日本", true);
    ASSERT_EQ(ids, (std::vector<int32_t>{1, 410, 233, 154, 168, 233, 159, 175}));
    const auto pieces = streamPieces(*tokenizer, ids, false);
    EXPECT_EQ(pieces, (std::vector<std::string>{"", "", "", "", "日", "", "", "本", ""}));
    // Continuing a prompt, the space of the first piece is kept.
    EXPECT_EQ(joined(streamPieces(*tokenizer, ids, true)), " 日本");
}

TEST(StreamDecoder, HoldsBackSplitCharacterBpe) {
    MB_REQUIRE_DATA(gguf, "vocab/ggml-vocab-gpt-2.gguf");
    const auto tokenizer = loadTokenizer(gguf);
    const std::string text = "日本 is 🦙";
    const std::vector<int32_t> ids = tokenizer->encode(text, false);
    // Some token must end inside a character, or the test proves nothing.
    size_t splits = 0;
    for (int32_t id : ids) splits += incompleteUtf8Tail(tokenizer->piece(id)) > 0;
    EXPECT_GT(splits, 0u);
    const auto pieces = streamPieces(*tokenizer, ids, true);
    EXPECT_EQ(joined(pieces), text);
    EXPECT_EQ(pieces.back(), "");
}

TEST(StreamDecoder, FlushTurnsInvalidLeftoversIntoReplacementChar) {
    MB_REQUIRE_DATA(model, "models/stories260K.gguf");
    const auto tokenizer = loadTokenizer(model);
    const int32_t kByteOffset = 3; // <0x00> is id 3 in this vocabulary
    StreamDecoder stream(*tokenizer);
    EXPECT_EQ(stream.push(0xE6 + kByteOffset), ""); // first two bytes of 日 (E6 97 A5)
    EXPECT_EQ(stream.push(0x97 + kByteOffset), "");
    EXPECT_EQ(stream.flush(), "\xEF\xBF\xBD");
    EXPECT_EQ(stream.flush(), "");
    // A byte that cannot start or continue anything goes out at once as U+FFFD.
    EXPECT_EQ(stream.push(0xFF + kByteOffset), "\xEF\xBF\xBD");
    // A held-back start followed by a non-continuation: replaced, then the next text.
    EXPECT_EQ(stream.push(0xE6 + kByteOffset), "");
    EXPECT_EQ(stream.push(412), "\xEF\xBF\xBD"
                                "a");
}

// A tiny SentencePiece vocabulary: bytes 0x00-0xFF at ids 3..258, then pieces.
Vocab tinySpmVocab(const std::vector<std::pair<std::string, float>>& pieces) {
    Vocab vocab;
    vocab.model = TokenizerModel::Spm;
    vocab.tokens = {"<unk>", "<s>", "</s>"};
    vocab.kinds = {TokenKind::Unknown, TokenKind::Control, TokenKind::Control};
    vocab.scores = {0, 0, 0};
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        vocab.tokens.push_back(name);
        vocab.kinds.push_back(TokenKind::Byte);
        vocab.scores.push_back(0);
    }
    for (const auto& [text, score] : pieces) {
        vocab.tokens.push_back(text);
        vocab.kinds.push_back(TokenKind::Normal);
        vocab.scores.push_back(score);
    }
    vocab.unk = 0;
    vocab.bos = 1;
    vocab.eos = 2;
    return vocab;
}

TEST(Tokenizer, SpmMergesHighestScoreFirstLeftmostOnTies) {
    // ids: a=259 b=260 ab=261 bb=262 abb=263 ▁=264
    const auto tokenizer = Tokenizer::create(tinySpmVocab(
        {{"a", -1}, {"b", -1}, {"ab", -5}, {"bb", -2}, {"abb", -3}, {"\xE2\x96\x81", -1}}));
    // "bb" outscores "ab", then "a"+"bb" forms "abb".
    EXPECT_EQ(tokenizer->encode("abb", false), (std::vector<int32_t>{264, 263}));
    // Equal scores: "bb" at the left wins, leaving the last b alone.
    EXPECT_EQ(tokenizer->encode("bbb", false), (std::vector<int32_t>{264, 262, 260}));
    // Characters without a piece fall back to bytes ('c' = 0x63).
    EXPECT_EQ(tokenizer->encode("ac", false), (std::vector<int32_t>{264, 259, 0x63 + 3}));
}

TEST(Tokenizer, SpmWithoutBytesUsesUnknownAndSpacePrefixFlag) {
    Vocab vocab;
    vocab.tokens = {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "h", "i", "hi"};
    vocab.kinds = {TokenKind::Unknown, TokenKind::Control, TokenKind::Control, TokenKind::Normal,
                   TokenKind::Normal,  TokenKind::Normal,  TokenKind::Normal};
    vocab.scores = {0, 0, 0, -1, -1, -1, -0.5f};
    vocab.unk = 0;
    vocab.bos = 1;
    vocab.addSpacePrefix = false;
    const auto tokenizer = Tokenizer::create(vocab);
    EXPECT_EQ(tokenizer->encode("hi\xC3\xA9h", true), (std::vector<int32_t>{1, 6, 0, 4}));
    EXPECT_EQ(tokenizer->encode("hi", false), (std::vector<int32_t>{6}));
    // Without <unk> or byte tokens some characters would have no spelling at all.
    vocab.unk = -1;
    EXPECT_THROW(Tokenizer::create(vocab), GgufError);
}

// Byte-level BPE over the 256 stand-in characters plus merges.
Vocab tinyBpeVocab(std::vector<std::string> merges) {
    Vocab vocab;
    vocab.model = TokenizerModel::Bpe;
    vocab.addBos = false;
    vocab.addSpacePrefix = false;
    // The GPT-2 alphabet: printable Latin-1 maps to itself, the rest to U+0100 and up.
    char32_t shifted = 256;
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        std::string text;
        appendUtf8(text, printable ? char32_t(b) : shifted++);
        vocab.tokens.push_back(text);
    }
    for (const auto& m : merges) {
        const size_t space = m.find(' ');
        vocab.tokens.push_back(m.substr(0, space) + m.substr(space + 1));
    }
    vocab.merges = std::move(merges);
    vocab.tokens.push_back("<|endoftext|>");
    vocab.kinds.assign(vocab.tokens.size(), TokenKind::Normal);
    vocab.kinds.back() = TokenKind::Control;
    vocab.bos = vocab.eos = static_cast<int32_t>(vocab.tokens.size() - 1);
    return vocab;
}

TEST(Tokenizer, BpeAppliesMergesByRank) {
    // ids 256.. follow the merges: "a a"=256, "aa a"=257, "Ġ aa"=258
    const auto tokenizer = Tokenizer::create(tinyBpeVocab({"a a", "aa a", "\xC4\xA0 aa"}));
    EXPECT_EQ(tokenizer->encode("aaa", false), (std::vector<int32_t>{257}));
    // Rank 0 applies leftmost first: (aa)(aa), never a(aa)a.
    EXPECT_EQ(tokenizer->encode("aaaa", false), (std::vector<int32_t>{256, 256}));
    // " aa" is one pre-token; space is byte 0x20, stand-in U+0120 'Ġ'.
    EXPECT_EQ(tokenizer->encode(" aa", false), (std::vector<int32_t>{258}));
    EXPECT_EQ(tokenizer->decode(tokenizer->encode(" aa\n\xFF", true)), " aa\n\xFF");
    EXPECT_EQ(tokenizer->piece(259), "");
}

TEST(Tokenizer, BpeIgnoreMergesEmitsWholeWordTokens) {
    // "aaa" is a token no merge builds: GPT-2 merges to (aa)(a); Llama 3's ignore_merges
    // takes the word whole.
    Vocab vocab = tinyBpeVocab({"a a"});
    vocab.tokens.push_back("aaa");
    vocab.kinds.push_back(TokenKind::Normal);
    const auto aaa = static_cast<int32_t>(vocab.tokens.size() - 1);
    EXPECT_EQ(Tokenizer::create(vocab)->encode("aaa", false), (std::vector<int32_t>{256, 'a'}));
    vocab.pre = "llama-bpe";
    EXPECT_EQ(Tokenizer::create(vocab)->encode("aaa", false), (std::vector<int32_t>{aaa}));
    EXPECT_EQ(Tokenizer::create(vocab)->encode("aaaa", false), (std::vector<int32_t>{256, 256}));
}

TEST(Tokenizer, BpeMatchesUserDefinedTokensLongestFirstButNotControlOnes) {
    Vocab vocab = tinyBpeVocab({"a a"});
    const auto add = [&](const char* text, TokenKind kind) {
        vocab.tokens.push_back(text);
        vocab.kinds.push_back(kind);
        return static_cast<int32_t>(vocab.tokens.size() - 1);
    };
    const int32_t ab = add("ab", TokenKind::UserDefined);
    const int32_t abc = add("abc", TokenKind::UserDefined);
    const int32_t spaced = add("<u v>", TokenKind::UserDefined);
    add("<|c|>", TokenKind::Control);
    const auto tokenizer = Tokenizer::create(vocab);
    const std::string text = "xabcab<u v><|c|>";
    EXPECT_EQ(tokenizer->encode(text, false),
              (std::vector<int32_t>{'x', abc, ab, spaced, '<', '|', 'c', '|', '>'}));
    EXPECT_EQ(tokenizer->decode(tokenizer->encode(text, false)), text);
    EXPECT_EQ(tokenizer->encode("", false), std::vector<int32_t>{});
}

TEST(Tokenizer, BpeRefusesUnknownPretokenizersNamingTheKnownOnes) {
    Vocab vocab = tinyBpeVocab({"a a"});
    vocab.pre = "no-such-split";
    try {
        Tokenizer::create(vocab);
        FAIL() << "expected an error";
    } catch (const GgufError& e) {
        const std::string message = e.what();
        EXPECT_NE(message.find("unsupported BPE pre-tokenizer 'no-such-split'"), std::string::npos)
            << message;
        for (const char* name : {"gpt-2", "llama-bpe", "qwen2", "falcon", "starcoder", "smollm",
                                 "deepseek-llm", "deepseek-coder", "gpt-4o"})
            EXPECT_NE(message.find(name), std::string::npos) << name << " in " << message;
        EXPECT_EQ(message.find('\n'), std::string::npos);
    }
    for (const char* name : {"gpt-2", "llama3", "llama-bpe", "qwen2", "gpt-4o", "default"}) {
        vocab.pre = name;
        EXPECT_NO_THROW(Tokenizer::create(vocab)) << name;
    }
}

std::vector<std::string> gpt2Split(std::string_view text) {
    std::vector<std::string> pieces;
    for (const auto& [offset, length] : splitGpt2(text))
        pieces.emplace_back(text.substr(offset, length));
    return pieces;
}

TEST(Tokenizer, Gpt2PretokenizerFollowsThePattern) {
    using V = std::vector<std::string>;
    EXPECT_EQ(gpt2Split("Hello world"), (V{"Hello", " world"}));
    EXPECT_EQ(gpt2Split("I'm y'all's"), (V{"I", "'m", " y", "'", "all", "'s"}));
    EXPECT_EQ(gpt2Split("we're 'VE"), (V{"we", "'re", " '", "VE"}));
    EXPECT_EQ(gpt2Split("a   b"), (V{"a", "  ", " b"}));
    EXPECT_EQ(gpt2Split("a \n b  "), (V{"a", " \n", " b", "  "}));
    EXPECT_EQ(gpt2Split("\n=x"), (V{"\n", "=", "x"}));
    EXPECT_EQ(gpt2Split("x12 3!!?"), (V{"x", "12", " 3", "!!?"}));
    EXPECT_EQ(gpt2Split("\xC3\xA9t\xC3\xA9 \xE2\x85\xA7"),
              (V{"\xC3\xA9t\xC3\xA9", " \xE2\x85\xA7"}));
    EXPECT_EQ(gpt2Split("a\xFF\xFE b"), (V{"a", "\xFF\xFE", " b"}));
    EXPECT_EQ(gpt2Split(""), V{});
}

TEST(TokenizerUnicode, DecodesStrictUtf8) {
    const auto decode = [](std::string_view s) { return decodeUtf8(s, 0); };
    EXPECT_EQ(decode("\xE6\x97\xA5").codePoint, U'日');
    EXPECT_EQ(decode("\xF0\x9F\xA6\x99").length, 4);
    EXPECT_EQ(decode("\xC0\xAF").status, Utf8Status::Invalid);         // overlong
    EXPECT_EQ(decode("\xED\xA0\x80").status, Utf8Status::Invalid);     // surrogate
    EXPECT_EQ(decode("\xF4\x90\x80\x80").status, Utf8Status::Invalid); // > U+10FFFF
    EXPECT_EQ(decode("\xE6\x97").status, Utf8Status::Incomplete);
    EXPECT_EQ(decode("\xE6\x97").length, 2);
    EXPECT_EQ(decode("\xE6\x41").length, 1);
    EXPECT_EQ(sanitizeUtf8("a\xE6\x97"
                           "b\x80"),
              "a\xEF\xBF\xBD"
              "b\xEF\xBF\xBD");
    EXPECT_EQ(incompleteUtf8Tail("ab\xF0\x9F\xA6"), 3u);
    EXPECT_EQ(incompleteUtf8Tail("ab\xF0\x9F\xA6\x99"), 0u);
    EXPECT_EQ(incompleteUtf8Tail("ab\x80"), 0u);
}

TEST(TokenizerUnicode, ClassifiesCodePoints) {
    EXPECT_EQ(codePointClass(U'a'), CodePointClass::Letter);
    EXPECT_EQ(codePointClass(U'日'), CodePointClass::Letter);
    EXPECT_EQ(codePointClass(U'ö'), CodePointClass::Letter);
    EXPECT_EQ(codePointClass(U'7'), CodePointClass::Number);
    EXPECT_EQ(codePointClass(U'½'), CodePointClass::Number);
    EXPECT_EQ(codePointClass(U'Ⅷ'), CodePointClass::Number);
    EXPECT_EQ(codePointClass(U'\t'), CodePointClass::Whitespace);
    EXPECT_EQ(codePointClass(0x3000), CodePointClass::Whitespace);
    EXPECT_EQ(codePointClass(0x1F), CodePointClass::Other);   // not White_Space
    EXPECT_EQ(codePointClass(0x200D), CodePointClass::Other); // ZWJ
    EXPECT_EQ(codePointClass(0x0301), CodePointClass::Other); // combining acute
    EXPECT_EQ(codePointClass(0x10FFFF), CodePointClass::Other);
}

// Writes a vocabulary-only GGUF with `edit` applied to a small valid key set.
class VocabFile {
public:
    explicit VocabFile(const std::function<void(GgufWriter&)>& edit) {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        m_path = fs::temp_directory_path() /
                 ("modebench_vocab_" + std::to_string(::getpid()) + "_" + info->name() + ".gguf");
        GgufWriter writer(m_path.string());
        writer.set("tokenizer.ggml.model", GgufValue::string("llama"));
        writer.set("tokenizer.ggml.tokens", GgufValue::stringArray({"<unk>", "<s>", "</s>", "a"}));
        writer.set("tokenizer.ggml.scores", GgufValue::f32Array({0, 0, 0, -1}));
        writer.set("tokenizer.ggml.token_type", GgufValue::i32Array({2, 3, 3, 1}));
        writer.set("tokenizer.ggml.bos_token_id", GgufValue::u32(1));
        writer.set("tokenizer.ggml.eos_token_id", GgufValue::u32(2));
        edit(writer);
        writer.finish();
    }
    ~VocabFile() { fs::remove(m_path); }
    Vocab read() const { return Vocab::fromGguf(GgufFile::open(m_path.string())); }

private:
    fs::path m_path;
};

std::string vocabError(const std::function<void(GgufWriter&)>& edit) {
    try {
        VocabFile(edit).read();
    } catch (const GgufError& e) {
        return e.what();
    }
    return "no error";
}

TEST(Vocab, ReadsKeysAndDefaults) {
    const Vocab spm = VocabFile([](GgufWriter& w) {
                          w.set("tokenizer.ggml.padding_token_id", GgufValue::u32(0xFFFFFFFF));
                      }).read();
    EXPECT_EQ(spm.model, TokenizerModel::Spm);
    EXPECT_EQ(spm.tokens.size(), 4u);
    EXPECT_EQ(spm.kinds[1], TokenKind::Control);
    EXPECT_FLOAT_EQ(spm.scores[3], -1.0f);
    EXPECT_EQ(spm.bos, 1);
    EXPECT_EQ(spm.eos, 2);
    EXPECT_EQ(spm.unk, -1);
    EXPECT_EQ(spm.pad, -1); // UINT32_MAX means "none"
    EXPECT_TRUE(spm.addBos);
    EXPECT_TRUE(spm.addSpacePrefix);

    const Vocab bpe = VocabFile([](GgufWriter& w) {
                          w.set("tokenizer.ggml.model", GgufValue::string("gpt2"));
                          w.set("tokenizer.ggml.pre", GgufValue::string("gpt-2"));
                          w.set("tokenizer.ggml.merges", GgufValue::stringArray({"a a"}));
                      }).read();
    EXPECT_EQ(bpe.model, TokenizerModel::Bpe);
    EXPECT_EQ(bpe.pre, "gpt-2");
    EXPECT_EQ(bpe.merges, std::vector<std::string>{"a a"});
    EXPECT_FALSE(bpe.addBos);
    EXPECT_FALSE(bpe.addSpacePrefix);

    // Llama 3 files carry no add_bos_token: llama.cpp adds BOS for llama-bpe; the key,
    // where present, still decides.
    const auto llama3 = [](std::optional<bool> addBos) {
        return VocabFile([&](GgufWriter& w) {
                   w.set("tokenizer.ggml.model", GgufValue::string("gpt2"));
                   w.set("tokenizer.ggml.pre", GgufValue::string("llama-bpe"));
                   w.set("tokenizer.ggml.merges", GgufValue::stringArray({"a a"}));
                   if (addBos) w.set("tokenizer.ggml.add_bos_token", GgufValue::boolean(*addBos));
               })
            .read();
    };
    EXPECT_TRUE(llama3(std::nullopt).addBos);
    EXPECT_FALSE(llama3(false).addBos);
}

TEST(Vocab, RejectsBadMetadata) {
    EXPECT_EQ(
        vocabError([](GgufWriter& w) { w.set("tokenizer.ggml.model", GgufValue::string("bert")); }),
        "unsupported tokenizer model 'bert'");
    EXPECT_NE(vocabError([](GgufWriter& w) {
                  w.set("tokenizer.ggml.scores", GgufValue::f32Array({0, 0}));
              }).find("tokenizer.ggml.scores"),
              std::string::npos);
    EXPECT_NE(vocabError([](GgufWriter& w) {
                  w.set("tokenizer.ggml.token_type", GgufValue::i32Array({1, 1, 1, 1, 1}));
              }).find("tokenizer.ggml.token_type"),
              std::string::npos);
    EXPECT_NE(vocabError([](GgufWriter& w) {
                  w.set("tokenizer.ggml.eos_token_id", GgufValue::u32(4));
              }).find("tokenizer.ggml.eos_token_id"),
              std::string::npos);
    EXPECT_NE(vocabError([](GgufWriter& w) {
                  w.set("tokenizer.ggml.tokens", GgufValue::f32Array({0, 0, 0, 0}));
              }).find("tokenizer.ggml.tokens"),
              std::string::npos);
    EXPECT_EQ(vocabError([](GgufWriter&) {}), "no error");
}

TEST(Vocab, MissingModelKeyIsAnError) {
    // A GGUF without tokenizer keys at all (a tensors-only file).
    const fs::path path = fs::temp_directory_path() /
                          ("modebench_vocab_" + std::to_string(::getpid()) + "_empty.gguf");
    GgufWriter(path.string()).finish();
    EXPECT_THROW(Vocab::fromGguf(GgufFile::open(path.string())), GgufError);
    fs::remove(path);
}

} // namespace
} // namespace mb::engine
