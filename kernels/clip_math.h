// Elementwise math of the CLIP vision encoder, one definition for the CPU pass (engine/clip_forward.cpp) and the CUDA kernels.
//
// Exact activations in double precision (not ggml's F16 lookup tables; docs/ARCHITECTURE.md,
// "Image input"), and one layer-norm element. Plain C++ without nvcc, __host__ __device__ with it,
// so tests/engine/clip_math_test.cpp checks on the host what the device computes.
#pragma once

#include "kernels/host_device.h"

#include <cmath>

namespace mb::kernels::clip {

// The encoder FFN's activation, as the mmproj states it (clip.use_gelu, clip.use_silu).
enum class Activation { QuickGelu, GeluTanh, Silu };

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed in double.
MB_HD float geluTanh(float x) {
    const double v = x;
    return static_cast<float>(0.5 * v * (1.0 + ::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
}

// x * sigmoid(1.702 x), computed in double.
MB_HD float quickGelu(float x) { return static_cast<float>(x / (1.0 + ::exp(-1.702 * static_cast<double>(x)))); }

// x * sigmoid(x), computed in double.
MB_HD float silu(float x) { return static_cast<float>(x / (1.0 + ::exp(-static_cast<double>(x)))); }

MB_HD float activate(Activation a, float x) {
    switch (a) {
    case Activation::GeluTanh: return geluTanh(x);
    case Activation::Silu: return silu(x);
    case Activation::QuickGelu: return quickGelu(x);
    }
    return x;
}

// One element of a layer norm over a row with statistics `mean` and inv = 1 / sqrt(var + eps)
// (double): ((x - mean) * inv) rounded to float, then * w + b in float, unfused.
MB_HD float layerNormValue(float x, double mean, double inv, float w, float b) {
    return mulRn(static_cast<float>((x - mean) * inv), w) + b;
}

} // namespace mb::kernels::clip
