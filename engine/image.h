// Decoded RGB images for vision input: PNG and JPEG through stb_image, as llama.cpp's clip.cpp reads them.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace mb::engine {

// Any problem reading an image. what() is one line: "ImageError: NAME: reason".
class ImageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// 8-bit RGB pixels, row-major HWC: pixel (x, y) channel c is rgb[(y * width + x) * 3 + c].
// Gray is replicated to three channels and alpha is dropped without compositing
// (stb_image with 3 requested channels, exactly what clip.cpp does).
struct RgbImage {
    int width = 0;
    int height = 0;
    std::vector<uint8_t> rgb; // width * height * 3 bytes

    uint8_t at(int x, int y, int c) const { return rgb[(static_cast<size_t>(y) * width + x) * 3 + c]; }
};

// Refused before decoding: a side above kMaxImageSide px or more than kMaxImagePixels pixels.
inline constexpr int kMaxImageSide = 16384;
inline constexpr int64_t kMaxImagePixels = 64LL * 1024 * 1024;

// Decodes a PNG or JPEG held in memory. `name` is only used in messages (a path or "<data>").
// Throws ImageError for anything else, a corrupt or truncated file, an absurd size, or when
// the build has no decoder (libstb-dev absent at configure time).
RgbImage decodeImage(std::span<const uint8_t> bytes, const std::string& name = "<data>");

// Reads `path` and decodes it; ImageError names the path.
RgbImage loadImage(const std::string& path);

// Whether this build can decode images (false when built without libstb-dev).
bool haveImageDecoder();

} // namespace mb::engine
