// Chat prompts per template family, built as segments of literal text and special tokens.
#include "server/chat_template.h"

#include <optional>
#include <stdexcept>
#include <unordered_map>

namespace mb::server {

const char* chatFamilyName(ChatFamily f) {
    switch (f) {
    case ChatFamily::Llama3: return "llama3";
    case ChatFamily::ChatMl: return "chatml";
    case ChatFamily::Llama2: return "llama2";
    case ChatFamily::Zephyr: return "zephyr";
    case ChatFamily::Plain: return "plain";
    }
    return "plain";
}

ChatFamily detectChatFamily(const std::string& t) {
    if (t.find("<|start_header_id|>") != std::string::npos) return ChatFamily::Llama3;
    if (t.find("<|im_start|>") != std::string::npos) return ChatFamily::ChatMl;
    if (t.find("<|user|>") != std::string::npos) return ChatFamily::Zephyr;
    if (t.find("[INST]") != std::string::npos) return ChatFamily::Llama2;
    return ChatFamily::Plain;
}

namespace {

// Text and special tokens in order; specials must exist in the vocabulary.
class PromptBuilder {
public:
    explicit PromptBuilder(const engine::Tokenizer& t) : m_t(t) {
        const auto& tokens = t.vocab().tokens;
        for (size_t i = 0; i < tokens.size(); ++i) m_ids.emplace(tokens[i], static_cast<int32_t>(i));
    }
    bool has(const std::string& special) const { return m_ids.count(special) > 0; }
    void special(const std::string& s) { m_out.push_back(m_ids.at(s)); }
    void text(const std::string& s) {
        if (s.empty()) return;
        const auto ids = m_t.encode(s, false);
        m_out.insert(m_out.end(), ids.begin(), ids.end());
    }
    void bos() {
        if (m_t.vocab().addBos && m_t.bos() >= 0) m_out.push_back(m_t.bos());
    }
    void eos() {
        if (m_t.vocab().eos >= 0) m_out.push_back(m_t.vocab().eos);
    }
    std::vector<int32_t> take() { return std::move(m_out); }

private:
    const engine::Tokenizer& m_t;
    std::unordered_map<std::string, int32_t> m_ids;
    std::vector<int32_t> m_out;
};

void checkRoles(const std::vector<ChatMessage>& messages) {
    if (messages.empty()) throw std::invalid_argument("messages is empty");
    for (const auto& m : messages)
        if (m.role != "system" && m.role != "user" && m.role != "assistant")
            throw std::invalid_argument("unknown message role '" + m.role + "' (system, user or assistant)");
}

std::vector<int32_t> plain(PromptBuilder& b, const std::vector<ChatMessage>& messages) {
    b.bos();
    std::string text;
    for (const auto& m : messages) text += m.role + ": " + m.content + "\n";
    b.text(text + "assistant:");
    return b.take();
}

} // namespace

std::vector<int32_t> chatPrompt(const engine::Tokenizer& tokenizer, ChatFamily family,
                                const std::vector<ChatMessage>& messages) {
    checkRoles(messages);
    PromptBuilder b(tokenizer);
    switch (family) {
    case ChatFamily::Llama3:
        if (!b.has("<|start_header_id|>") || !b.has("<|end_header_id|>") || !b.has("<|eot_id|>")) break;
        b.bos();
        for (const auto& m : messages) {
            b.special("<|start_header_id|>");
            b.text(m.role);
            b.special("<|end_header_id|>");
            b.text("\n\n" + m.content);
            b.special("<|eot_id|>");
        }
        b.special("<|start_header_id|>");
        b.text("assistant");
        b.special("<|end_header_id|>");
        b.text("\n\n");
        return b.take();
    case ChatFamily::ChatMl:
        if (!b.has("<|im_start|>") || !b.has("<|im_end|>")) break;
        for (const auto& m : messages) {
            b.special("<|im_start|>");
            b.text(m.role + "\n" + m.content);
            b.special("<|im_end|>");
            b.text("\n");
        }
        b.special("<|im_start|>");
        b.text("assistant\n");
        return b.take();
    case ChatFamily::Zephyr: // TinyLlama-chat: the markers are ordinary text, turns end in EOS
        b.bos();
        for (const auto& m : messages) {
            b.text("<|" + m.role + "|>\n" + m.content);
            b.eos();
            b.text("\n");
        }
        b.text("<|assistant|>\n");
        return b.take();
    case ChatFamily::Llama2: { // [INST] ... [/INST] answer </s><s>[INST] ...
        std::string system;
        bool open = false;
        for (const auto& m : messages) {
            if (m.role == "system") {
                system += "<<SYS>>\n" + m.content + "\n<</SYS>>\n\n";
            } else if (m.role == "user") {
                b.bos();
                b.text("[INST] " + system + m.content + " [/INST]");
                system.clear();
                open = true;
            } else {
                b.text(" " + m.content + " ");
                b.eos();
                open = false;
            }
        }
        if (!open) throw std::invalid_argument("the last message must come from the user");
        return b.take();
    }
    case ChatFamily::Plain: break;
    }
    return plain(b, messages);
}

} // namespace mb::server
