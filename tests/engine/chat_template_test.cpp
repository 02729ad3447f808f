// Chat templates: each family's layout against hand-written strings, detection from template text,
// and token ids with the real Llama 3 and Qwen 3 vocabularies (markers as single special ids).
#include "engine/chat_template.h"
#include "engine/gguf.h"
#include "engine/vocab.h"
#include "test_data.h"

#include <gtest/gtest.h>

using namespace mb::engine;

namespace {
const std::vector<ChatMessage> kChat = {
    {"system", "Be brief."}, {"user", "Hi!"}, {"assistant", "Hello."}, {"user", "Tell a story."}};

std::string rendered(ChatFamily f, const std::vector<ChatMessage>& m = kChat) {
    return renderChat(chatPieces(f, m), "<BOS>", "<EOS>");
}
} // namespace

TEST(ChatTemplate, EachFamilyRendersAsItsTemplateDoes) {
    EXPECT_EQ(rendered(ChatFamily::Llama3),
              "<BOS><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
              "<|start_header_id|>user<|end_header_id|>\n\nHi!<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\nHello.<|eot_id|>"
              "<|start_header_id|>user<|end_header_id|>\n\nTell a story.<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\n");
    EXPECT_EQ(rendered(ChatFamily::ChatMl),
              "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi!<|im_end|>\n"
              "<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nTell a story.<|im_end|>\n"
              "<|im_start|>assistant\n");
    EXPECT_EQ(rendered(ChatFamily::Gemma),
              "<BOS><start_of_turn>user\nBe brief.\n\nHi!<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n"
              "<start_of_turn>user\nTell a story.<end_of_turn>\n<start_of_turn>model\n");
    EXPECT_EQ(rendered(ChatFamily::Phi3),
              "<BOS><|system|>\nBe brief.<|end|>\n<|user|>\nHi!<|end|>\n<|assistant|>\nHello.<|end|>\n"
              "<|user|>\nTell a story.<|end|>\n<|assistant|>\n");
    EXPECT_EQ(rendered(ChatFamily::Mistral),
              "<BOS>[INST] Be brief.\n\nHi! [/INST] Hello.<EOS>[INST] Tell a story. [/INST]");
    EXPECT_EQ(rendered(ChatFamily::Llama2),
              "<BOS>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi! [/INST] Hello. <EOS><BOS>[INST] Tell a story. [/INST]");
    EXPECT_EQ(rendered(ChatFamily::Zephyr),
              "<BOS><|system|>\nBe brief.<EOS>\n<|user|>\nHi!<EOS>\n<|assistant|>\nHello.<EOS>\n"
              "<|user|>\nTell a story.<EOS>\n<|assistant|>\n");
    EXPECT_EQ(rendered(ChatFamily::Plain),
              "<BOS>system: Be brief.\nuser: Hi!\nassistant: Hello.\nuser: Tell a story.\nassistant:");
}

TEST(ChatTemplate, BadConversationsAreRefused) {
    EXPECT_THROW(chatPieces(ChatFamily::Llama3, {}), std::invalid_argument);
    EXPECT_THROW(chatPieces(ChatFamily::ChatMl, {{"tool", "x"}}), std::invalid_argument);
    EXPECT_THROW(chatPieces(ChatFamily::Mistral, {{"user", "a"}, {"assistant", "b"}}), std::invalid_argument);
    EXPECT_THROW(chatPieces(ChatFamily::Llama2, {{"system", "s"}}), std::invalid_argument);
}

// Fragments of each family's published tokenizer.chat_template.
TEST(ChatTemplate, DetectsTheFamilyFromTheTemplateText) {
    EXPECT_EQ(detectChatFamily("{{ '<|start_header_id|>' + message['role'] + '<|end_header_id|>' }}"), ChatFamily::Llama3);
    EXPECT_EQ(detectChatFamily("{% for m in messages %}{{'<|im_start|>' + m['role'] + '\\n'}}"), ChatFamily::ChatMl);
    EXPECT_EQ(detectChatFamily("{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim + '<end_of_turn>\\n' }}"),
              ChatFamily::Gemma);
    EXPECT_EQ(detectChatFamily("{{'<|user|>' + '\\n' + message['content'] + '<|end|>' + '\\n' + '<|assistant|>'}}"),
              ChatFamily::Phi3);
    EXPECT_EQ(detectChatFamily("{{ '<|user|>\\n' + message['content'] + eos_token }}"), ChatFamily::Zephyr);
    EXPECT_EQ(detectChatFamily("{{ bos_token + '[INST] ' + message['content'] + ' [/INST]' }}"), ChatFamily::Mistral);
    EXPECT_EQ(detectChatFamily("{% set system_message = '<<SYS>>\\n' %}{{ '[INST] ' }}"), ChatFamily::Llama2);
    EXPECT_EQ(detectChatFamily(""), ChatFamily::Plain);
    const ChatTemplateChoice unknown = chooseChatTemplate("{{ 'User: ' + m }}");
    EXPECT_EQ(unknown.family, ChatFamily::Plain);
    EXPECT_NE(unknown.note.find("not one of"), std::string::npos) << unknown.note;
    EXPECT_TRUE(chooseChatTemplate("<|im_start|>").note.empty());
}

// With the real vocabularies each marker is one special id and the text between is the
// tokenizer's encoding; marker text typed by a user stays text.
TEST(ChatTemplate, RealVocabulariesTakeTheMarkersAsSpecialIds) {
    MB_REQUIRE_DATA(llama3Path, "vocab/ggml-vocab-llama3.gguf");
    MB_REQUIRE_DATA(qwen3Path, "vocab/ggml-vocab-qwen3.gguf");
    const auto llama3 = Tokenizer::create(Vocab::fromGguf(GgufFile::open(llama3Path.string())));
    const auto qwen3 = Tokenizer::create(Vocab::fromGguf(GgufFile::open(qwen3Path.string())));
    auto idOf = [](const Tokenizer& t, const std::string& s) {
        const auto& toks = t.vocab().tokens;
        return static_cast<int32_t>(std::find(toks.begin(), toks.end(), s) - toks.begin());
    };
    const std::vector<ChatMessage> chat = {{"user", "Hi <|eot_id|> <|im_end|>"}};
    const auto a = chatPrompt(*llama3, ChatFamily::Llama3, chat);
    const int32_t eot = idOf(*llama3, "<|eot_id|>"), header = idOf(*llama3, "<|start_header_id|>");
    EXPECT_EQ(std::count(a.begin(), a.end(), eot), 1) << "the user's '<|eot_id|>' text is not the marker";
    EXPECT_EQ(std::count(a.begin(), a.end(), header), 2);
    EXPECT_EQ(a.front(), llama3->bos());
    const auto q = chatPrompt(*qwen3, ChatFamily::ChatMl, chat);
    const int32_t imEnd = idOf(*qwen3, "<|im_end|>"), imStart = idOf(*qwen3, "<|im_start|>");
    EXPECT_EQ(q.front(), imStart);
    EXPECT_EQ(std::count(q.begin(), q.end(), imEnd), 1);
    EXPECT_EQ(std::count(q.begin(), q.end(), imStart), 2);
    // Llama 3's markers are not in Qwen's vocabulary: the plain form.
    EXPECT_EQ(chatPrompt(*qwen3, ChatFamily::Llama3, chat), chatPrompt(*qwen3, ChatFamily::Plain, chat));
}

// Images in chat: the marker cuts the ids where the image goes (the text around it encoded on
// its own), each image counts its positions toward the cap, and no marker means chatPrompt.
TEST(ChatTemplate, SegmentsCutAtImageMarkersAndCountImagePositions) {
    MB_REQUIRE_DATA(llama3Path, "vocab/ggml-vocab-llama3.gguf");
    const auto tok = Tokenizer::create(Vocab::fromGguf(GgufFile::open(llama3Path.string())));
    const std::string m = "\x1f[img]\x1f";
    const std::vector<ChatMessage> chat = {{"user", "Look: " + m + " and " + m}, {"user", "Which?"}};
    const ChatSegments s = chatPromptSegments(*tok, ChatFamily::Llama3, chat, m, 16, SIZE_MAX);
    ASSERT_EQ(s.text.size(), 3u);
    EXPECT_FALSE(s.overCap);
    // Segment by segment, the rendered text cut at the markers, each piece encoded on its own.
    const auto& toks = tok->vocab().tokens;
    auto idOf = [&](const std::string& t) {
        return static_cast<int32_t>(std::find(toks.begin(), toks.end(), t) - toks.begin());
    };
    auto cat = [](std::vector<int32_t> a, const std::vector<int32_t>& b) {
        a.insert(a.end(), b.begin(), b.end());
        return a;
    };
    std::vector<int32_t> head{tok->bos(), idOf("<|start_header_id|>")};
    head = cat(cat(head, tok->encode("user", false)), {idOf("<|end_header_id|>")});
    head = cat(cat(head, tok->encode("\n\n", false)), tok->encode("Look: ", false));
    EXPECT_EQ(s.text[0], head);
    EXPECT_EQ(s.text[1], tok->encode(" and ", false));
    EXPECT_EQ(s.text[2].front(), idOf("<|eot_id|>")); // right after the second image
    EXPECT_EQ(s.positions, static_cast<int64_t>(s.text[0].size() + s.text[1].size() + s.text[2].size()) + 32);
    // Without the marker the one segment is chatPrompt's ids.
    const ChatSegments plain = chatPromptSegments(*tok, ChatFamily::Llama3, kChat, m, 16, SIZE_MAX);
    ASSERT_EQ(plain.text.size(), 1u);
    EXPECT_EQ(plain.text[0], chatPrompt(*tok, ChatFamily::Llama3, kChat));
    // The cap counts image positions: room for the text but not the two images.
    const size_t textOnly = s.text[0].size() + s.text[1].size() + s.text[2].size();
    EXPECT_TRUE(chatPromptSegments(*tok, ChatFamily::Llama3, chat, m, 16, textOnly + 31).overCap);
    EXPECT_FALSE(chatPromptSegments(*tok, ChatFamily::Llama3, chat, m, 16, textOnly + 32).overCap);
}
