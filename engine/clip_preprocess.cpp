// CLIP preprocessing (pad, clip.cpp's bilinear resize, normalise), bit for bit as clip.cpp.
//
// Every float operation is written in clip.cpp's order; this file is compiled with
// -ffp-contract=off (engine/CMakeLists.txt) so no FMA contraction changes a rounding.
#include "engine/clip_preprocess.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace mb::engine {

RgbImage padToSquare(const RgbImage& img) {
    if (img.width == img.height) return img;
    const int n = std::max(img.width, img.height);
    RgbImage out;
    out.width = n;
    out.height = n;
    out.rgb.resize(static_cast<size_t>(n) * n * 3);
    for (size_t i = 0; i < out.rgb.size(); ++i) out.rgb[i] = kClipPadRgb[i % 3];
    for (int y = 0; y < img.height; ++y) {
        const uint8_t* src = img.rgb.data() + static_cast<size_t>(y) * img.width * 3;
        std::copy(src, src + static_cast<size_t>(img.width) * 3, out.rgb.data() + static_cast<size_t>(y) * n * 3);
    }
    return out;
}

RgbImage clipResizeSquare(const RgbImage& square, int side) {
    if (square.width != square.height) throw std::invalid_argument("clipResizeSquare: image is not square");
    if (side <= 0) throw std::invalid_argument("clipResizeSquare: side must be positive");
    const int n = square.width;
    // clip.cpp: scale = max(nx, ny) / (float)image_size; nx3 = int(nx / scale + 0.5f).
    const float scale = static_cast<float>(n) / static_cast<float>(side);
    const int n3 = std::min(side, static_cast<int>(static_cast<float>(n) / scale + 0.5f));
    RgbImage out;
    out.width = side;
    out.height = side;
    out.rgb.assign(static_cast<size_t>(side) * side * 3, 0);
    const uint8_t* buf = square.rgb.data();
    for (int y = 0; y < n3; ++y) {
        const float sy = (static_cast<float>(y) + 0.5f) * scale - 0.5f;
        const int y0 = std::max(0, static_cast<int>(std::floor(sy)));
        const int y1 = std::min(y0 + 1, n - 1);
        const float dy = sy - static_cast<float>(y0); // negative when sy < 0: extrapolates (clip.cpp)
        for (int x = 0; x < n3; ++x) {
            const float sx = (static_cast<float>(x) + 0.5f) * scale - 0.5f;
            const int x0 = std::max(0, static_cast<int>(std::floor(sx)));
            const int x1 = std::min(x0 + 1, n - 1);
            const float dx = sx - static_cast<float>(x0);
            for (int c = 0; c < 3; ++c) {
                const float v00 = buf[3 * (y0 * n + x0) + c];
                const float v01 = buf[3 * (y0 * n + x1) + c];
                const float v10 = buf[3 * (y1 * n + x0) + c];
                const float v11 = buf[3 * (y1 * n + x1) + c];
                const float v0 = v00 * (1.0f - dx) + v01 * dx;
                const float v1 = v10 * (1.0f - dx) + v11 * dx;
                const float v = v0 * (1.0f - dy) + v1 * dy;
                const float r = std::min(std::max(std::round(v), 0.0f), 255.0f);
                out.rgb[3 * (static_cast<size_t>(y) * side + x) + c] = static_cast<uint8_t>(r);
            }
        }
    }
    return out;
}

std::vector<float> clipPreprocess(const RgbImage& img, const ClipPreprocessParams& params) {
    if (img.width <= 0 || img.height <= 0) throw std::invalid_argument("clipPreprocess: empty image");
    const int s = params.imageSize;
    const RgbImage resized = clipResizeSquare(padToSquare(img), s);
    const size_t plane = static_cast<size_t>(s) * s;
    std::vector<float> chw(3 * plane);
    for (int y = 0; y < s; ++y)
        for (int x = 0; x < s; ++x)
            for (int c = 0; c < 3; ++c) {
                const float u = resized.rgb[3 * (static_cast<size_t>(y) * s + x) + c];
                chw[c * plane + static_cast<size_t>(y) * s + x] = ((u / 255.0f) - params.mean[c]) / params.std[c];
            }
    return chw;
}

} // namespace mb::engine
