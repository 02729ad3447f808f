// Chat messages to a prompt: the GGUF's chat-template family when recognised, a plain form otherwise.
#pragma once

#include "engine/tokenizer.h"

#include <string>
#include <vector>

namespace mb::engine {

struct ChatMessage {
    std::string role; // "system", "user", "assistant"
    std::string content;
};

// The families of `tokenizer.chat_template` the engine renders (the template is Jinja we do
// not execute; its markers name the family).
enum class ChatFamily { Llama3, ChatMl, Gemma, Phi3, Mistral, Llama2, Zephyr, Plain };
// "llama3", "chatml", "gemma", "phi3", "mistral", "llama2", "zephyr", "plain".
const char* chatFamilyName(ChatFamily f);

// The family a template's text names; Plain when empty or unrecognised.
ChatFamily detectChatFamily(const std::string& templateText);

// A family chosen for a model, with a note for the user when the template is not one we know
// ("tokenizer.chat_template not recognised ...; the plain form is used"); empty otherwise.
struct ChatTemplateChoice {
    ChatFamily family = ChatFamily::Plain;
    std::string note;
};
ChatTemplateChoice chooseChatTemplate(const std::string& templateText);
class GgufFile;
// The choice for a model file's tokenizer.chat_template (absent: Plain, with a note saying so).
ChatTemplateChoice chatTemplateOf(const GgufFile& file);

// One piece of a rendered chat: literal text, a special marker (one vocabulary token), or
// the vocabulary's BOS / EOS.
struct ChatPiece {
    enum class Kind { Text, Special, Bos, Eos } kind;
    std::string text; // Text and Special
};

// `messages` in `family`'s layout, followed by the opening of the assistant's turn. Gemma and
// Mistral have no system turn: a system message is put before the next user message with a
// blank line. Throws std::invalid_argument for an empty list, an unknown role, or (Llama 2,
// Mistral) a conversation that does not end with the user.
std::vector<ChatPiece> chatPieces(ChatFamily family, const std::vector<ChatMessage>& messages);

// The pieces as text, with `bos` and `eos` standing for those tokens (tests, the Playground).
std::string renderChat(const std::vector<ChatPiece>& pieces, const std::string& bos, const std::string& eos);

// The prompt token ids: special markers become their vocabulary ids; text is encoded without
// BOS and without parsing special-token text inside it; BOS is kept only when the vocabulary
// adds one. A family whose markers the vocabulary lacks falls back to Plain ("role: content"
// lines, then "assistant:"). Throws std::invalid_argument as chatPieces does.
std::vector<int32_t> chatPrompt(const Tokenizer& tokenizer, ChatFamily family, const std::vector<ChatMessage>& messages);
// The same ids, but encoding stops once there are more than maxTokens (as the capped
// Tokenizer::encode): ids then holds the first maxTokens + 1 and overCap is set.
CappedTokens chatPrompt(const Tokenizer& tokenizer, ChatFamily family, const std::vector<ChatMessage>& messages,
                        size_t maxTokens);

// A chat prompt with images: the token ids of the text between them. Image k sits between
// text[k] and text[k + 1], so there are images + 1 segments (some may be empty).
struct ChatSegments {
    std::vector<std::vector<int32_t>> text;
    int64_t positions = 0; // text ids plus imageTokens per image (counted up to where encoding stopped)
    bool overCap = false;  // more than maxTokens positions: encoding stopped early
};
// chatPrompt's ids, cut wherever `imageMarker` (non-empty) occurs in a message's content: the
// marker stands for an image of `imageTokens` positions, and the text on each side is encoded
// separately (as llava tokenizes the text around an image). The positions count toward
// maxTokens; past it encoding stops and overCap is set. Throws as chatPieces does.
ChatSegments chatPromptSegments(const Tokenizer& tokenizer, ChatFamily family, const std::vector<ChatMessage>& messages,
                                const std::string& imageMarker, int64_t imageTokens, size_t maxTokens);

} // namespace mb::engine
