// Images in a session's prompt: content hashes, placeholder ids, validation and the layout of parts.
#include "engine/prompt_images.h"

#include "engine/session.h"

#include <cstring>
#include <stdexcept>

namespace mb::engine {

namespace {
// splitmix64's finaliser over the hash and the offset.
uint64_t mix64(uint64_t hash, int64_t i) {
    uint64_t z = hash + 0x9e3779b97f4a7c15ull * (static_cast<uint64_t>(i) + 1);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
} // namespace

uint64_t hashRows(std::span<const float> rows) {
    uint64_t h = 0xcbf29ce484222325ull;
    const auto* bytes = reinterpret_cast<const unsigned char*>(rows.data());
    for (size_t i = 0; i < rows.size_bytes(); ++i) {
        h ^= bytes[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

PromptImage makePromptImage(std::vector<float> rows, int64_t dim) {
    if (dim <= 0 || rows.empty() || static_cast<int64_t>(rows.size()) % dim != 0)
        throw std::invalid_argument("an image's embeddings (" + std::to_string(rows.size()) +
                                    " floats) are not a positive whole number of rows of the model's " +
                                    std::to_string(dim));
    PromptImage image;
    image.count = static_cast<int64_t>(rows.size()) / dim;
    image.hash = hashRows(rows);
    image.rows = std::make_shared<const std::vector<float>>(std::move(rows));
    return image;
}

int32_t imagePlaceholder(uint64_t hash, int64_t i) {
    return -1 - static_cast<int32_t>(mix64(hash, i) & 0x7fffffffull);
}

void fillPlaceholders(std::vector<int32_t>& prompt, std::span<const PromptImage> images) {
    for (const PromptImage& image : images)
        for (int64_t i = 0; i < image.count; ++i)
            prompt[static_cast<size_t>(image.position + i)] = imagePlaceholder(image.hash, i);
}

std::string validateImages(std::span<const PromptImage> images, int64_t promptLen, int64_t dim) {
    int64_t end = 0; // where the previous image ends
    for (size_t k = 0; k < images.size(); ++k) {
        const PromptImage& im = images[k];
        const std::string which = "image " + std::to_string(k) + " ";
        if (im.count < 1) return which + "has no positions";
        if (!im.rows || static_cast<int64_t>(im.rows->size()) != im.count * dim)
            return which + "has " + std::to_string(im.rows ? im.rows->size() : 0) + " floats; " +
                   std::to_string(im.count) + " positions of the model's " + std::to_string(dim) + " need " +
                   std::to_string(im.count * dim);
        if (im.position < 0 || im.position + im.count > promptLen)
            return which + "at positions [" + std::to_string(im.position) + ", " + std::to_string(im.position + im.count) +
                   ") is outside the prompt of " + std::to_string(promptLen) + " positions";
        if (im.position < end)
            return which + "at position " + std::to_string(im.position) +
                   " overlaps the image before it or is out of order (images must be sorted)";
        end = im.position + im.count;
    }
    return {};
}

InferenceRequest fromParts(const std::vector<PromptPart>& parts, int64_t dim) {
    InferenceRequest r;
    for (const PromptPart& part : parts) {
        if (!part.tokens.empty() && !part.embeddings.empty())
            throw std::invalid_argument("a prompt part holds tokens or embeddings, not both");
        if (part.embeddings.empty()) {
            r.prompt.insert(r.prompt.end(), part.tokens.begin(), part.tokens.end());
            continue;
        }
        PromptImage image = makePromptImage(part.embeddings, dim);
        image.position = static_cast<int64_t>(r.prompt.size());
        r.prompt.resize(r.prompt.size() + static_cast<size_t>(image.count));
        r.images.push_back(std::move(image));
    }
    fillPlaceholders(r.prompt, r.images);
    return r;
}

// Widens the cut over split images, erases it, shifts what follows (see the header).
std::pair<int64_t, int64_t> cutPrompt(InferenceRequest& r, int64_t begin, int64_t end) {
    for (const PromptImage& im : r.images) {
        const int64_t imEnd = im.position + im.count;
        if (im.position < begin && begin < imEnd) begin = im.position;
        if (im.position < end && end < imEnd) end = imEnd;
    }
    r.prompt.erase(r.prompt.begin() + begin, r.prompt.begin() + end);
    const auto dropped = std::erase_if(r.images, [&](const PromptImage& im) {
        return im.position >= begin && im.position + im.count <= end;
    });
    for (PromptImage& im : r.images)
        if (im.position >= end) im.position -= end - begin;
    return {end - begin, static_cast<int64_t>(dropped)};
}

// One entry per position, row pointers at image positions.
std::vector<const float*> inputRows(const InferenceRequest& r, int64_t dim) {
    std::vector<const float*> rows;
    if (r.images.empty()) return rows;
    rows.assign(r.prompt.size(), nullptr);
    for (const PromptImage& im : r.images)
        for (int64_t i = 0; i < im.count; ++i) rows[static_cast<size_t>(im.position + i)] = im.rows->data() + i * dim;
    return rows;
}

} // namespace mb::engine
