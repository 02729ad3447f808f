// The CLIP encoder on CUDA: each kernel against a CPU or double reference, and CudaClip's embeddings against the CPU
// encoder and llama.cpp's goldens (../shared/data/mm, within its README's tolerance). Label `gpu`.
#include "engine/cuda_clip.h"
#include "engine/image_encoder.h"
#include "gpu_test_util.h"
#include "kernels/clip_math.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/cuda/cuda_ops.h"
#include "test_data.h"

#include <cmath>
#include <fstream>
#include <stdexcept>

using namespace mb::engine;
using namespace mb::kernels;
using mb::test::nmse;
using mb::test::randomFloats;
using mb::test::toDevice;
using mb::test::toHost;

namespace {

const Device kGpu{Device::Kind::Cuda, 0};

std::vector<float> readF32(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::vector<float> v(std::filesystem::file_size(p) / 4);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * 4));
    return v;
}

// golden pre.f32 is HWC (S, S, 3); the encoders take CHW.
std::vector<float> chwOf(const std::vector<float>& hwc, int s) {
    std::vector<float> chw(hwc.size());
    for (int y = 0; y < s; ++y)
        for (int x = 0; x < s; ++x)
            for (int c = 0; c < 3; ++c) chw[(static_cast<size_t>(c) * s + y) * s + x] = hwc[(static_cast<size_t>(y) * s + x) * 3 + c];
    return chw;
}

struct Diff {
    double max = 0, mean = 0;
};
Diff diff(const std::vector<float>& a, const std::vector<float>& b) {
    Diff d;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        const double e = std::fabs(static_cast<double>(a[i]) - b[i]);
        d.max = std::max(d.max, e);
        d.mean += e;
    }
    d.mean /= static_cast<double>(std::max<size_t>(1, a.size()));
    return d;
}

struct EmbdCase {
    const char* model;  // under mm/models
    const char* suffix; // golden/STEM{suffix}.embd.f32
};
const char* const kStems[] = {"grad64", "checker100x50", "gray48x80", "tiny7x9", "blobs80x60"};

class CudaClipFile : public ::testing::TestWithParam<EmbdCase> {};

} // namespace

// F32 products in another order, expf and a softmax normalised before P·V: close to the CPU
// (1e-4 max abs, where the goldens' tolerance is 5e-3), and within the README's bounds of llama.cpp.
TEST_P(CudaClipFile, EmbeddingsMatchTheCpuEncoderAndTheGoldens) {
    MB_REQUIRE_GPU();
    const EmbdCase& c = GetParam();
    MB_REQUIRE_DATA(mmproj, std::string("mm/models/") + c.model);
    const ClipModel clip = ClipModel::load(mmproj.string());
    ThreadPool pool(2);
    const auto gpu = makeImageEncoder(clip, pool, kGpu);
    ASSERT_EQ(gpu->device(), kGpu);
    for (const char* stem : kStems) {
        MB_REQUIRE_DATA(pre, std::string("mm/golden/") + stem + ".pre.f32");
        MB_REQUIRE_DATA(embd, std::string("mm/golden/") + stem + c.suffix + ".embd.f32");
        const std::vector<float> chw = chwOf(readF32(pre), clip.imageSize());
        const std::vector<float> got = gpu->encode(chw.data());
        ASSERT_EQ(got.size(), static_cast<size_t>(clip.imageTokens() * clip.embeddingWidth())) << stem;
        const Diff vsCpu = diff(got, clip.encode(chw.data(), pool));
        const Diff vsGolden = diff(got, readF32(embd));
        std::cout << "[ cuda embd ] " << c.model << " " << stem << ": vs CPU max " << vsCpu.max << ", vs golden max "
                  << vsGolden.max << " mean " << vsGolden.mean << "\n";
        EXPECT_LE(vsCpu.max, 1e-4) << stem;
        EXPECT_LE(vsGolden.max, 5e-3) << stem;
        EXPECT_LE(vsGolden.mean, 1e-3) << stem;
        EXPECT_EQ(gpu->encode(chw.data()), got) << stem << ": a second encode differs";
    }
}

INSTANTIATE_TEST_SUITE_P(ClipFiles, CudaClipFile,
                         ::testing::Values(EmbdCase{"tiny-mmproj-f32.gguf", ""}, EmbdCase{"tiny-mmproj-f16.gguf", ".f16"},
                                           EmbdCase{"tiny-mmproj-gelu-f32.gguf", ".gelu"}));

TEST(CudaClip, ShapesAndWidthErrorsAreTheModels) {
    MB_REQUIRE_GPU();
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");
    const ClipModel clip = ClipModel::load(mmproj.string());
    CudaClip gpu(clip, 0);
    EXPECT_EQ(&gpu.model(), &clip);
    EXPECT_EQ(gpu.model().imageTokens(), 16);
    EXPECT_EQ(gpu.model().embeddingWidth(), 256);
    EXPECT_GT(gpu.deviceWeightBytes(), 0u);
    try {
        gpu.model().checkEmbeddingWidth(4096);
        ADD_FAILURE() << "no error for a 4096-wide model";
    } catch (const ClipError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "mmproj " + mmproj.string() + " projects to 256 features but the model's embedding width is 4096");
    }
    EXPECT_THROW(CudaClip(clip, 99), std::invalid_argument);
}

TEST(CudaClipKernels, LayerNormMatchesTheCpuFormulaInPlaceOrNot) {
    MB_REQUIRE_GPU();
    const int64_t n = 5, width = 131;
    std::vector<float> x = randomFloats(n * width, 1), w = randomFloats(width, 2), b = randomFloats(width, 3);
    for (float& v : x) v = v * 3.0f + 0.5f; // a mean away from 0
    std::vector<float> want(x.size());
    for (int64_t t = 0; t < n; ++t) {
        double mean = 0, var = 0;
        for (int64_t i = 0; i < width; ++i) mean += x[t * width + i];
        mean /= width;
        for (int64_t i = 0; i < width; ++i) var += (x[t * width + i] - mean) * (x[t * width + i] - mean);
        const double inv = 1.0 / std::sqrt(var / width + 1e-5f);
        for (int64_t i = 0; i < width; ++i)
            want[t * width + i] = clip::layerNormValue(x[t * width + i], mean, inv, w[i], b[i]);
    }
    for (bool inPlace : {false, true}) {
        auto dx = toDevice(x);
        const auto dw = toDevice(w), db = toDevice(b);
        cuda::DeviceBuffer dy(x.size() * sizeof(float));
        float* y = inPlace ? dx.as<float>() : dy.as<float>();
        cuda::layerNorm(dx.as<float>(), dw.as<float>(), db.as<float>(), y, n, width, 1e-5f, nullptr);
        const auto got = toHost<float>(inPlace ? dx : dy, x.size());
        EXPECT_LT(nmse(got, want), 1e-13) << "in place " << inPlace;
    }
}

TEST(CudaClipKernels, ActivationsAreTheHostFunctions) {
    MB_REQUIRE_GPU();
    std::vector<float> x = randomFloats(1000, 4);
    for (float& v : x) v *= 12.0f;
    for (clip::Activation act : {clip::Activation::QuickGelu, clip::Activation::GeluTanh, clip::Activation::Silu}) {
        auto dx = toDevice(x);
        cuda::applyActivation(dx.as<float>(), static_cast<int64_t>(x.size()), act, nullptr);
        std::vector<float> want(x.size());
        for (size_t i = 0; i < x.size(); ++i) want[i] = clip::activate(act, x[i]);
        // Device tanh/exp in double may differ from glibc's by an ulp of a double: far below float.
        EXPECT_LT(nmse(toHost<float>(dx, x.size()), want), 1e-13) << static_cast<int>(act);
    }
}

// Patch columns, embeddings, both attention products and the softmax against double loops, on
// an odd head count, 17 tokens and a 24 px image of 8 px patches.
TEST(CudaClipKernels, PatchEmbeddingAndAttentionMatchDoubleReferences) {
    MB_REQUIRE_GPU();
    const int s = 24, p = 8, g = s / p, np = g * g, n = np + 1, hidden = 3 * 12, heads = 3, dh = 12;
    const std::vector<float> chw = randomFloats(3 * s * s, 5);
    const auto dchw = toDevice(chw);
    cuda::DeviceBuffer dcols(static_cast<size_t>(np) * 3 * p * p * sizeof(float));
    cuda::patchColumns(dchw.as<float>(), s, p, dcols.as<float>(), nullptr);
    const auto cols = toHost<float>(dcols, static_cast<size_t>(np) * 3 * p * p);
    for (int patch = 0; patch < np; ++patch)
        for (int c = 0; c < 3; ++c)
            for (int kh = 0; kh < p; ++kh)
                for (int kw = 0; kw < p; ++kw)
                    ASSERT_EQ(cols[(static_cast<size_t>(patch) * 3 + c) * p * p + kh * p + kw],
                              chw[(static_cast<size_t>(c) * s + (patch / g) * p + kh) * s + (patch % g) * p + kw]);

    const std::vector<float> q = randomFloats(n * hidden, 6), k = randomFloats(n * hidden, 7), v = randomFloats(n * hidden, 8);
    const auto dq = toDevice(q), dk = toDevice(k), dv = toDevice(v);
    cuda::DeviceBuffer dscores(static_cast<size_t>(heads) * n * n * sizeof(float)), dout(q.size() * sizeof(float));
    cuda::BlasHandle blas(nullptr);
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
    cuda::attentionScores(blas, dq.as<float>(), dk.as<float>(), n, heads, dh, scale, dscores.as<float>());
    cuda::softmaxRows(dscores.as<float>(), heads * n, n, nullptr);
    cuda::attentionValues(blas, dscores.as<float>(), dv.as<float>(), n, heads, dh, dout.as<float>());
    std::vector<double> want(q.size());
    for (int h = 0; h < heads; ++h)
        for (int i = 0; i < n; ++i) {
            std::vector<double> pr(n);
            double mx = -1e300, sum = 0;
            for (int j = 0; j < n; ++j) {
                double d = 0;
                for (int e = 0; e < dh; ++e) d += double(q[i * hidden + h * dh + e]) * k[j * hidden + h * dh + e];
                pr[j] = d * scale;
                mx = std::max(mx, pr[j]);
            }
            for (double& x : pr) sum += (x = std::exp(x - mx));
            for (int e = 0; e < dh; ++e) {
                double o = 0;
                for (int j = 0; j < n; ++j) o += pr[j] / sum * v[j * hidden + h * dh + e];
                want[i * hidden + h * dh + e] = o;
            }
        }
    EXPECT_LT(nmse(toHost<float>(dout, q.size()), want), 1e-11);

    // Embeddings: row 0 the class token, patch rows plus bias, all plus positions.
    const std::vector<float> x0 = randomFloats(n * hidden, 9), cls = randomFloats(hidden, 10),
                             bias = randomFloats(hidden, 11), pos = randomFloats(n * hidden, 12);
    auto dx = toDevice(x0);
    const auto dcls = toDevice(cls), dbias = toDevice(bias), dpos = toDevice(pos);
    cuda::clipEmbeddings(dx.as<float>(), dcls.as<float>(), dbias.as<float>(), dpos.as<float>(), np, hidden, nullptr);
    std::vector<float> wantX(x0.size());
    for (int i = 0; i < n * hidden; ++i)
        wantX[i] = (i < hidden ? cls[i] : x0[i] + bias[i % hidden]) + pos[i];
    EXPECT_EQ(toHost<float>(dx, x0.size()), wantX);
}
