// Prompts with images: llava-1.5's layout of text and image parts, as llama.cpp's llava-cli lays them out.
#pragma once

#include "engine/generator.h"
#include "engine/tokenizer.h"

#include <string>
#include <vector>

namespace mb::engine {

// llava-cli's system prompt when the prompt has no <image> marker.
inline constexpr const char* kLlavaSystemPrompt =
    "A chat between a curious human and an artificial intelligence assistant. The assistant gives helpful, "
    "detailed, and polite answers to the human's questions.\nUSER:";
inline constexpr const char* kImageMarker = "<image>";

// The parts of `prompt` with `images` (each imageTokens × the model's width, from
// ClipModel::encodeImage) in place:
//  - with <image> markers (as many as images): the text around them, the first piece with
//    BOS, the others without, each image at its marker;
//  - without: kLlavaSystemPrompt (with BOS), every image in order, then prompt + "\nASSISTANT:".
// Throws std::invalid_argument when the markers and the images differ in number.
std::vector<PromptPart> imagePrompt(const Tokenizer& tokenizer, const std::string& prompt,
                                    const std::vector<std::vector<float>>& images);

} // namespace mb::engine
