// CLIP image preprocessing exactly as llama.cpp's clip.cpp (c392e509) does it for llava-1.5:
// pad to square, its float bilinear resize, u8 rounding, then per-channel normalisation.
#pragma once

#include "engine/image.h"

#include <array>
#include <vector>

namespace mb::engine {

// What preprocessing needs from an mmproj file (clip.vision.image_size, image_mean, image_std).
struct ClipPreprocessParams {
    int imageSize = 0;            // output side in px (64 in the tiny test file, 336 in llava-1.5)
    std::array<float, 3> mean{};  // per RGB channel, in [0,1] units
    std::array<float, 3> std{};   // per RGB channel
};

// LLaVA's background colour (the CLIP mean ×255, rounded), used to pad non-square images.
inline constexpr std::array<uint8_t, 3> kClipPadRgb = {122, 116, 104};

// Step 1: a square canvas of side max(W, H) filled with kClipPadRgb and the image copied to
// its top-left corner (clip.cpp does not centre, unlike LLaVA's Python expand2square).
// A square image is returned unchanged.
RgbImage padToSquare(const RgbImage& img);

// Step 2: clip.cpp's bilinear resize of a square image to side x side, in float32, rounded
// with std::round and clamped to u8. Keeps clip.cpp's quirk: when upscaling, the source
// coordinate of the first columns/rows is negative, x0 is clamped to 0 but dx stays
// negative, so those pixels are extrapolated.
RgbImage clipResizeSquare(const RgbImage& square, int side);

// The whole pipeline. Returns float32 CHW, 3 x imageSize x imageSize:
// value(c, y, x) = out[c * S * S + y * S + x] = (u8 / 255 - mean[c]) / std[c].
// (llama.cpp's golden pre.f32 is HWC; the encoder's input tensor is CHW like this.)
std::vector<float> clipPreprocess(const RgbImage& img, const ClipPreprocessParams& params);

} // namespace mb::engine
