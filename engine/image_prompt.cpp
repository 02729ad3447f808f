// Laying out a prompt's text and images as llava-cli does (../shared/data/mm/README.md §5).
#include "engine/image_prompt.h"

#include <stdexcept>

namespace mb::engine {

namespace {

void addText(std::vector<PromptPart>& parts, const Tokenizer& tok, const std::string& text, bool bos) {
    std::vector<int32_t> ids = tok.encode(text, bos && tok.vocab().addBos);
    if (!ids.empty()) parts.push_back({std::move(ids), {}});
}

} // namespace

std::vector<PromptPart> imagePrompt(const Tokenizer& tok, const std::string& prompt,
                                    const std::vector<std::vector<float>>& images) {
    std::vector<PromptPart> parts;
    std::vector<std::string> pieces;
    for (size_t from = 0;;) {
        const size_t at = prompt.find(kImageMarker, from);
        pieces.push_back(prompt.substr(from, at == std::string::npos ? std::string::npos : at - from));
        if (at == std::string::npos) break;
        from = at + std::char_traits<char>::length(kImageMarker);
    }
    const size_t markers = pieces.size() - 1;
    if (markers == 0) {
        addText(parts, tok, kLlavaSystemPrompt, true);
        for (const auto& image : images) parts.push_back({{}, image});
        addText(parts, tok, prompt + "\nASSISTANT:", false);
        return parts;
    }
    if (markers != images.size())
        throw std::invalid_argument("the prompt has " + std::to_string(markers) + " <image> markers but " +
                                    std::to_string(images.size()) + " images were given");
    for (size_t i = 0; i < pieces.size(); ++i) {
        addText(parts, tok, pieces[i], i == 0);
        if (i < images.size()) parts.push_back({{}, images[i]});
    }
    return parts;
}

} // namespace mb::engine
