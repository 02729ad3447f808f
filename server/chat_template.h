// Chat messages to prompt token ids: the GGUF's chat-template family when recognised, a plain fallback.
#pragma once

#include "engine/tokenizer.h"

#include <string>
#include <vector>

namespace mb::server {

struct ChatMessage {
    std::string role; // "system", "user", "assistant"
    std::string content;
};

enum class ChatFamily { Llama3, ChatMl, Llama2, Zephyr, Plain };
const char* chatFamilyName(ChatFamily f); // "llama3", "chatml", "llama2", "zephyr", "plain"

// Recognises the family from the text of `tokenizer.chat_template` (a Jinja template we
// do not execute: the markers it uses name the family). Empty or unknown: Plain.
ChatFamily detectChatFamily(const std::string& templateText);

// Builds the prompt of `messages` followed by the opening of the assistant's turn. Special
// markers (<|start_header_id|>, <|im_start|>, ...) become their vocabulary ids; text is
// encoded without BOS; BOS comes first when the vocabulary adds it. A family whose
// markers the vocabulary lacks falls back to Plain ("role: content" lines, then
// "assistant:"). Throws std::invalid_argument for an empty list or an unknown role.
std::vector<int32_t> chatPrompt(const engine::Tokenizer& tokenizer, ChatFamily family,
                                const std::vector<ChatMessage>& messages);

} // namespace mb::server
