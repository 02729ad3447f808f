// Images in a session's prompt: embedding rows at positions, keyed by content, with placeholder token ids.
#pragma once

#include "engine/generator.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace mb::engine {

struct InferenceRequest; // session.h

// An image's input embedding rows at prompt positions [position, position + count).
struct PromptImage {
    int64_t position = 0;
    int64_t count = 0;
    std::shared_ptr<const std::vector<float>> rows; // (count, model dim), row-major
    uint64_t hash = 0;                              // the image's content hash (FNV-1a/64 of the rows' bytes)
};

// FNV-1a/64 of the rows' bytes: two images with the same rows get the same prefix-cache keys.
uint64_t hashRows(std::span<const float> rows);

// An image at position 0 (the caller places it); throws std::invalid_argument unless the rows are
// a positive whole number of rows of `dim` floats.
PromptImage makePromptImage(std::vector<float> rows, int64_t dim);

// The placeholder token id at offset i of an image with content hash `hash`:
//   id_i = -1 - int32(mix64(hash, i) & 0x7fffffff)
// Negative, so never a vocabulary id (the forward pass takes the row instead; the sampler's
// repetition penalty skips negative ids), and different per offset. The prefix cache keys
// blocks by a hash chain of token ids and verifies the tokens themselves, so a block of
// placeholders is keyed by the image's content: a repeated image hits, another image's block
// of 16 placeholders collides with probability about 2^-496.
int32_t imagePlaceholder(uint64_t hash, int64_t i);

// Writes the placeholders of `images` into `prompt` (positions must be inside it).
void fillPlaceholders(std::vector<int32_t>& prompt, std::span<const PromptImage> images);

// Why `images` cannot go with a prompt of `promptLen` positions for a model of width `dim`
// (unsorted, overlapping, outside the prompt, wrong row count); empty when they can.
std::string validateImages(std::span<const PromptImage> images, int64_t promptLen, int64_t dim);

// A request for a prompt of text and image parts (generator.h), laid out in order; placeholders
// at the image positions. Throws std::invalid_argument for a part that is not whole rows.
InferenceRequest fromParts(const std::vector<PromptPart>& parts, int64_t dim);

// Erases prompt positions [begin, end) of `r`, first widened to the whole of any image the cut
// would split (an image is dropped or kept whole, never cut in half), and shifts the images
// after the cut. Returns {positions dropped, images dropped}.
std::pair<int64_t, int64_t> cutPrompt(InferenceRequest& r, int64_t begin, int64_t end);

// Per prompt position: the image row fed in place of the token (into r.images' rows), or
// nullptr; empty when the request has no image.
std::vector<const float*> inputRows(const InferenceRequest& r, int64_t dim);

} // namespace mb::engine
