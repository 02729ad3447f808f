// The image-encoder backend interface on the CPU, and the CLIP math the CPU pass and the CUDA kernels share
// (kernels/clip_math.h), checked on the host against long-double formulas.
#include "engine/image_encoder.h"
#include "kernels/clip_math.h"
#include "kernels/cpu/thread_pool.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace mb::engine {
namespace {

namespace cm = kernels::clip;

// Values from -30 to 30 (where every activation saturates), denser near 0, and the extremes.
std::vector<float> probes() {
    std::vector<float> v = {0.0f, -0.0f, 1e-30f, -1e-30f, 1e30f, -1e30f, 88.0f, -88.0f, 1000.0f, -1000.0f};
    for (int i = -3000; i <= 3000; ++i) v.push_back(static_cast<float>(i) / 100.0f);
    return v;
}

// |got - want| within 1 float ulp of want (the double result rounded once to float), plus 1e-14
// absolute: where 1 + tanh(...) cancels (x near -6), double keeps fewer digits of a value ~1e-10.
void expectClose(float got, long double want, float x, const char* what) {
    const auto w = static_cast<float>(want);
    const float ulp = std::nextafter(std::fabs(w), INFINITY) - std::fabs(w);
    EXPECT_LE(std::fabs(static_cast<long double>(got) - want), ulp + 1e-14L)
        << what << "(" << x << ") = " << got << ", want " << w;
}

TEST(ClipMath, ActivationsMatchTheirDefinitions) {
    for (float x : probes()) {
        const long double v = x;
        expectClose(cm::geluTanh(x), 0.5L * v * (1.0L + std::tanh(0.7978845608028654L * (v + 0.044715L * v * v * v))), x,
                    "geluTanh");
        expectClose(cm::quickGelu(x), v / (1.0L + std::exp(-1.702L * v)), x, "quickGelu");
        expectClose(cm::silu(x), v / (1.0L + std::exp(-v)), x, "silu");
        EXPECT_EQ(cm::activate(cm::Activation::GeluTanh, x), cm::geluTanh(x));
        EXPECT_EQ(cm::activate(cm::Activation::QuickGelu, x), cm::quickGelu(x));
        EXPECT_EQ(cm::activate(cm::Activation::Silu, x), cm::silu(x));
    }
    // Saturation: no NaN or infinity where the exponential overflows.
    EXPECT_EQ(cm::quickGelu(-1e30f), -0.0f);
    EXPECT_EQ(cm::silu(1e30f), 1e30f);
    EXPECT_EQ(cm::geluTanh(20.0f), 20.0f);
    EXPECT_EQ(cm::geluTanh(-20.0f), -0.0f);
}

TEST(ClipMath, LayerNormValueRoundsTheNormalisedValueThenScales) {
    // (x - mean) * inv in double, to float, then * w + b in float.
    const float x = 1.3f, w = 0.7f, b = -0.2f;
    const double mean = 0.1, inv = 3.0;
    const auto z = static_cast<float>((x - mean) * inv);
    EXPECT_EQ(cm::layerNormValue(x, mean, inv, w, b), z * w + b);
    EXPECT_EQ(cm::layerNormValue(0.1f, 0.1f, 5.0, 2.0f, 0.5f), 0.5f);
}

std::vector<float> readF32(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::vector<float> v(std::filesystem::file_size(p) / 4);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
    return v;
}

TEST(ImageEncoder, CpuDeviceGivesClipModelsOwnPassBitForBit) {
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-gelu-f32.gguf");
    MB_REQUIRE_DATA(pre, "mm/golden/checker100x50.pre.f32");
    const ClipModel clip = ClipModel::load(mmproj.string());
    kernels::ThreadPool pool(2);
    const auto encoder = makeImageEncoder(clip, pool, Device{});
    EXPECT_EQ(encoder->device(), Device{});
    EXPECT_EQ(&encoder->model(), &clip);
    const std::vector<float> hwc = readF32(pre);
    std::vector<float> chw(hwc.size());
    const int s = clip.imageSize();
    for (int y = 0; y < s; ++y)
        for (int x = 0; x < s; ++x)
            for (int c = 0; c < 3; ++c) chw[(static_cast<size_t>(c) * s + y) * s + x] = hwc[(static_cast<size_t>(y) * s + x) * 3 + c];
    const std::vector<float> got = encoder->encode(chw.data()), want = clip.encode(chw.data(), pool);
    ASSERT_EQ(got.size(), static_cast<size_t>(clip.imageTokens() * clip.embeddingWidth()));
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
}

TEST(ImageEncoder, MissingCudaDeviceIsRefusedByTheFactory) {
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");
    const ClipModel clip = ClipModel::load(mmproj.string());
    kernels::ThreadPool pool(1);
    // Not resolved first: the factory itself refuses a device that is not there (or a build without CUDA).
    EXPECT_THROW(makeImageEncoder(clip, pool, Device{Device::Kind::Cuda, 999}), std::invalid_argument);
}

} // namespace
} // namespace mb::engine
