// Chat prompts per template family, built as pieces of literal text and special tokens.
#include "engine/chat_template.h"

#include "engine/gguf.h"

#include <cstdint>
#include <stdexcept>
#include <unordered_map>

namespace mb::engine {

const char* chatFamilyName(ChatFamily f) {
    switch (f) {
    case ChatFamily::Llama3: return "llama3";
    case ChatFamily::ChatMl: return "chatml";
    case ChatFamily::Gemma: return "gemma";
    case ChatFamily::Phi3: return "phi3";
    case ChatFamily::Mistral: return "mistral";
    case ChatFamily::Llama2: return "llama2";
    case ChatFamily::Zephyr: return "zephyr";
    case ChatFamily::Plain: return "plain";
    }
    return "plain";
}

ChatFamily detectChatFamily(const std::string& t) {
    auto has = [&](const char* s) { return t.find(s) != std::string::npos; };
    if (has("<|start_header_id|>")) return ChatFamily::Llama3;
    if (has("<|im_start|>")) return ChatFamily::ChatMl;
    if (has("<start_of_turn>")) return ChatFamily::Gemma;
    if (has("<|user|>") && has("<|end|>")) return ChatFamily::Phi3;
    if (has("<|user|>")) return ChatFamily::Zephyr;
    if (has("[INST]") && has("<<SYS>>")) return ChatFamily::Llama2;
    if (has("[INST]")) return ChatFamily::Mistral;
    return ChatFamily::Plain;
}

ChatTemplateChoice chooseChatTemplate(const std::string& templateText) {
    ChatTemplateChoice c{detectChatFamily(templateText), {}};
    if (c.family == ChatFamily::Plain && !templateText.empty())
        c.note = "tokenizer.chat_template is not one of llama3, chatml, gemma, phi3, mistral, llama2 or zephyr (it "
                 "begins \"" + templateText.substr(0, 48) + (templateText.size() > 48 ? "..." : "") +
                 "\"); the plain form (\"role: content\" lines) is used";
    return c;
}

ChatTemplateChoice chatTemplateOf(const GgufFile& file) {
    const GgufValue* t = file.find("tokenizer.chat_template");
    if (!t || t->type != GgufValueType::String)
        return {ChatFamily::Plain, "the model has no tokenizer.chat_template; the plain form (\"role: content\" "
                                   "lines) is used"};
    return chooseChatTemplate(t->asString());
}

namespace {

using Kind = ChatPiece::Kind;

class Pieces {
public:
    Pieces& text(std::string s) {
        if (!s.empty()) m_out.push_back({Kind::Text, std::move(s)});
        return *this;
    }
    Pieces& special(std::string s) {
        m_out.push_back({Kind::Special, std::move(s)});
        return *this;
    }
    Pieces& bos() {
        m_out.push_back({Kind::Bos, {}});
        return *this;
    }
    Pieces& eos() {
        m_out.push_back({Kind::Eos, {}});
        return *this;
    }
    std::vector<ChatPiece> take() { return std::move(m_out); }

private:
    std::vector<ChatPiece> m_out;
};

void checkRoles(const std::vector<ChatMessage>& messages) {
    if (messages.empty()) throw std::invalid_argument("messages is empty");
    for (const auto& m : messages)
        if (m.role != "system" && m.role != "user" && m.role != "assistant")
            throw std::invalid_argument("unknown message role '" + m.role + "' (system, user or assistant)");
}

std::vector<ChatPiece> plain(const std::vector<ChatMessage>& messages) {
    std::string text;
    for (const auto& m : messages) text += m.role + ": " + m.content + "\n";
    return Pieces().bos().text(text + "assistant:").take();
}

// <|role|> markers around each turn: Llama 3 (header ids), ChatML, Phi-3 and Zephyr.
std::vector<ChatPiece> markedTurns(ChatFamily f, const std::vector<ChatMessage>& messages) {
    Pieces p;
    if (f != ChatFamily::ChatMl) p.bos();
    auto open = [&](const std::string& role) {
        switch (f) {
        case ChatFamily::Llama3: p.special("<|start_header_id|>").text(role).special("<|end_header_id|>").text("\n\n"); break;
        case ChatFamily::ChatMl: p.special("<|im_start|>").text(role + "\n"); break;
        case ChatFamily::Phi3: p.special("<|" + role + "|>").text("\n"); break;
        default: p.text("<|" + role + "|>\n"); break; // Zephyr: the markers are ordinary text
        }
    };
    for (const auto& m : messages) {
        open(m.role);
        p.text(m.content);
        switch (f) {
        case ChatFamily::Llama3: p.special("<|eot_id|>"); break;
        case ChatFamily::ChatMl: p.special("<|im_end|>").text("\n"); break;
        case ChatFamily::Phi3: p.special("<|end|>").text("\n"); break;
        default: p.eos().text("\n"); break;
        }
    }
    open("assistant");
    return p.take();
}

// Gemma: <start_of_turn>user|model ... <end_of_turn>; no system turn.
std::vector<ChatPiece> gemma(const std::vector<ChatMessage>& messages) {
    Pieces p;
    p.bos();
    std::string system;
    for (const auto& m : messages) {
        if (m.role == "system") {
            system += m.content + "\n\n";
            continue;
        }
        const bool user = m.role == "user";
        p.special("<start_of_turn>").text((user ? "user\n" : "model\n") + (user ? system : "") + m.content);
        if (user) system.clear();
        p.special("<end_of_turn>").text("\n");
    }
    p.special("<start_of_turn>").text("model\n");
    return p.take();
}

// Llama 2 ([INST] with <<SYS>>) and Mistral ([INST], system before the next user message).
std::vector<ChatPiece> inst(ChatFamily f, const std::vector<ChatMessage>& messages) {
    Pieces p;
    std::string system;
    bool open = false, first = true;
    for (const auto& m : messages) {
        if (m.role == "system") {
            system += f == ChatFamily::Llama2 ? "<<SYS>>\n" + m.content + "\n<</SYS>>\n\n" : m.content + "\n\n";
        } else if (m.role == "user") {
            if (f == ChatFamily::Llama2 || first) p.bos(); // Llama 2: each exchange; Mistral: once
            first = false;
            p.text("[INST] " + system + m.content + " [/INST]");
            system.clear();
            open = true;
        } else {
            p.text(" " + m.content + (f == ChatFamily::Llama2 ? " " : "")).eos();
            open = false;
        }
    }
    if (!open) throw std::invalid_argument("the last message must come from the user");
    return p.take();
}

} // namespace

std::vector<ChatPiece> chatPieces(ChatFamily family, const std::vector<ChatMessage>& messages) {
    checkRoles(messages);
    switch (family) {
    case ChatFamily::Llama3:
    case ChatFamily::ChatMl:
    case ChatFamily::Phi3:
    case ChatFamily::Zephyr: return markedTurns(family, messages);
    case ChatFamily::Gemma: return gemma(messages);
    case ChatFamily::Mistral:
    case ChatFamily::Llama2: return inst(family, messages);
    case ChatFamily::Plain: break;
    }
    return plain(messages);
}

std::string renderChat(const std::vector<ChatPiece>& pieces, const std::string& bos, const std::string& eos) {
    std::string out;
    for (const ChatPiece& p : pieces) out += p.kind == Kind::Bos ? bos : p.kind == Kind::Eos ? eos : p.text;
    return out;
}

std::vector<int32_t> chatPrompt(const Tokenizer& tokenizer, ChatFamily family, const std::vector<ChatMessage>& messages) {
    return chatPrompt(tokenizer, family, messages, SIZE_MAX).ids;
}

CappedTokens chatPrompt(const Tokenizer& tokenizer, ChatFamily family, const std::vector<ChatMessage>& messages,
                        size_t maxTokens) {
    ChatSegments s = chatPromptSegments(tokenizer, family, messages, {}, 0, maxTokens);
    CappedTokens capped{std::move(s.text.front()), s.overCap};
    if (capped.overCap) capped.ids.resize(maxTokens + 1);
    return capped;
}

namespace {

// The pieces of `messages` with each special marker resolved to its id, or the plain form
// when the vocabulary lacks one of them.
std::vector<ChatPiece> resolvedPieces(const Tokenizer& tokenizer, ChatFamily family,
                                      const std::vector<ChatMessage>& messages,
                                      std::unordered_map<std::string, int32_t>& specials) {
    std::vector<ChatPiece> pieces = chatPieces(family, messages);
    const auto& tokens = tokenizer.vocab().tokens;
    for (const ChatPiece& p : pieces)
        if (p.kind == Kind::Special && !specials.count(p.text)) {
            int32_t id = -1;
            for (size_t i = 0; i < tokens.size() && id < 0; ++i)
                if (tokens[i] == p.text) id = static_cast<int32_t>(i);
            if (id < 0) { // the vocabulary lacks the family's markers
                specials.clear();
                return plain(messages);
            }
            specials.emplace(p.text, id);
        }
    return pieces;
}

} // namespace

ChatSegments chatPromptSegments(const Tokenizer& tokenizer, ChatFamily family, const std::vector<ChatMessage>& messages,
                                const std::string& imageMarker, int64_t imageTokens, size_t maxTokens) {
    std::unordered_map<std::string, int32_t> specials;
    const std::vector<ChatPiece> pieces = resolvedPieces(tokenizer, family, messages, specials);
    ChatSegments out;
    out.text.emplace_back();
    size_t positions = 0;
    const auto push = [&](int32_t id) {
        out.text.back().push_back(id);
        ++positions;
    };
    const auto encode = [&](const std::string& text) {
        if (text.empty() || positions > maxTokens) return;
        const auto ids = tokenizer.encode(text, false, maxTokens - positions).ids;
        out.text.back().insert(out.text.back().end(), ids.begin(), ids.end());
        positions += ids.size();
    };
    for (const ChatPiece& p : pieces) {
        if (positions > maxTokens) break;
        switch (p.kind) {
        case Kind::Bos:
            if (tokenizer.vocab().addBos && tokenizer.bos() >= 0) push(tokenizer.bos());
            break;
        case Kind::Eos:
            if (tokenizer.vocab().eos >= 0) push(tokenizer.vocab().eos);
            break;
        case Kind::Special: push(specials.at(p.text)); break;
        case Kind::Text: {
            size_t from = 0;
            for (size_t at; !imageMarker.empty() && (at = p.text.find(imageMarker, from)) != std::string::npos;) {
                encode(p.text.substr(from, at - from));
                from = at + imageMarker.size();
                out.text.emplace_back();
                positions += static_cast<size_t>(imageTokens);
                if (positions > maxTokens) break;
            }
            if (positions <= maxTokens) encode(p.text.substr(from));
            break;
        }
        }
    }
    out.positions = static_cast<int64_t>(positions);
    out.overCap = positions > maxTokens;
    return out;
}

} // namespace mb::engine
