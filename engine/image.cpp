// PNG/JPEG decoding through Debian's libstb (stb_image), forcing three channels as clip.cpp does.
#include "engine/image.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>

#ifdef MODEBENCH_HAVE_STB
// Debian's libstb builds the implementation into the library: no STB_IMAGE_IMPLEMENTATION here.
#include <stb_image.h>
#endif

namespace mb::engine {
namespace {

[[noreturn]] void fail(const std::string& name, const std::string& why) {
    throw ImageError("ImageError: " + name + ": " + why);
}

enum class Format { Png, Jpeg, Other };

// Only the two formats the product promises; stb would also take BMP, GIF, PSD, ... .
Format sniff(std::span<const uint8_t> b) {
    static const uint8_t kPng[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (b.size() >= 8 && std::memcmp(b.data(), kPng, 8) == 0) return Format::Png;
    if (b.size() >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff) return Format::Jpeg;
    return Format::Other;
}

} // namespace

bool haveImageDecoder() {
#ifdef MODEBENCH_HAVE_STB
    return true;
#else
    return false;
#endif
}

RgbImage decodeImage(std::span<const uint8_t> bytes, const std::string& name) {
#ifndef MODEBENCH_HAVE_STB
    (void)bytes;
    fail(name, "this build has no image decoder (libstb-dev)");
#else
    const Format format = sniff(bytes);
    if (format == Format::Other) fail(name, "not a PNG or JPEG image");
    const char* kind = format == Format::Png ? "PNG" : "JPEG";
    if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()))
        fail(name, "file too large (" + std::to_string(bytes.size()) + " bytes)");
    const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
    const int len = static_cast<int>(bytes.size());

    // Header first: refuse absurd sizes before any pixel memory is allocated.
    int w = 0, h = 0, comp = 0;
    if (!stbi_info_from_memory(data, len, &w, &h, &comp))
        fail(name, std::string("corrupt or unsupported ") + kind + " image (stb: " + stbi_failure_reason() + ")");
    if (w <= 0 || h <= 0 || w > kMaxImageSide || h > kMaxImageSide ||
        static_cast<int64_t>(w) * h > kMaxImagePixels)
        fail(name, std::string(kind) + " image of " + std::to_string(w) + "x" + std::to_string(h) +
                       " px is too large (at most " + std::to_string(kMaxImageSide) + " px a side and " +
                       std::to_string(kMaxImagePixels / (1024 * 1024)) + " Mpixel)");

    int dw = 0, dh = 0, dc = 0;
    stbi_uc* px = stbi_load_from_memory(data, len, &dw, &dh, &dc, 3);
    if (!px) fail(name, std::string("corrupt ") + kind + " image (stb: " + stbi_failure_reason() + ")");
    RgbImage img;
    img.width = dw;
    img.height = dh;
    img.rgb.assign(px, px + static_cast<size_t>(dw) * dh * 3);
    stbi_image_free(px);
    return img;
#endif
}

RgbImage loadImage(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(path, "cannot open file");
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) fail(path, "read error");
    return decodeImage(bytes, path);
}

} // namespace mb::engine
