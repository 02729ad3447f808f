// Image decoding, CLIP preprocessing and the llava mmproj encoder against llama.cpp c392e509's goldens
// (../shared/data/mm, see its README: exact pixels and inputs; embeddings within 5e-3 max / 1e-3 mean).
#include "engine/clip_model.h"
#include "engine/clip_preprocess.h"
#include "engine/gguf.h"
#include "engine/image.h"
#include "kernels/cpu/thread_pool.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <unistd.h>

namespace mb::engine {
namespace {

namespace fs = std::filesystem;

struct TestImage {
    const char* file;  // under mm/images
    const char* stem;  // golden/STEM.*
    int width, height;
};
const TestImage kImages[] = {
    {"grad64.png", "grad64", 64, 64},       {"checker100x50.png", "checker100x50", 100, 50},
    {"gray48x80.png", "gray48x80", 48, 80}, {"tiny7x9.png", "tiny7x9", 7, 9},
    {"blobs80x60.jpg", "blobs80x60", 80, 60},
};

std::vector<uint8_t> readBytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}
std::vector<float> readF32(const fs::path& p) {
    const std::vector<uint8_t> b = readBytes(p);
    std::vector<float> out(b.size() / 4);
    std::memcpy(out.data(), b.data(), out.size() * 4);
    return out;
}
// golden pre.f32 is HWC [S][S][3]; the engine's input is CHW.
std::vector<float> hwcToChw(const std::vector<float>& hwc, int s) {
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
    for (size_t i = 0; i < a.size(); ++i) {
        const double e = std::abs(static_cast<double>(a[i]) - b[i]);
        d.max = std::max(d.max, e);
        d.mean += e;
    }
    d.mean /= static_cast<double>(a.size());
    return d;
}

#define MB_REQUIRE_DECODER()                                                                       \
    if (!haveImageDecoder()) GTEST_SKIP() << "this build has no image decoder (libstb-dev)"

template <class Fn>
std::string errorOf(Fn&& fn) {
    try {
        fn();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(ImageDecode, PngsMatchStbGoldenExactly) {
    MB_REQUIRE_DECODER();
    for (const TestImage& t : kImages) {
        if (std::string(t.file).ends_with(".jpg")) continue;
        MB_REQUIRE_DATA(path, std::string("mm/images/") + t.file);
        MB_REQUIRE_DATA(golden, std::string("mm/golden/") + t.stem + ".rgb.u8");
        const RgbImage img = loadImage(path.string());
        EXPECT_EQ(img.width, t.width) << t.file;
        EXPECT_EQ(img.height, t.height) << t.file;
        EXPECT_EQ(img.rgb, readBytes(golden)) << t.file;
    }
}

TEST(ImageDecode, JpegWithinSixLevelsOfGolden) {
    MB_REQUIRE_DECODER();
    MB_REQUIRE_DATA(path, "mm/images/blobs80x60.jpg");
    MB_REQUIRE_DATA(golden, "mm/golden/blobs80x60.rgb.u8");
    const RgbImage img = loadImage(path.string());
    const std::vector<uint8_t> ref = readBytes(golden);
    ASSERT_EQ(img.width, 80);
    ASSERT_EQ(img.height, 60);
    ASSERT_EQ(img.rgb.size(), ref.size());
    int mx = 0;
    double mean = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        const int e = std::abs(int(img.rgb[i]) - int(ref[i]));
        mx = std::max(mx, e);
        mean += e;
    }
    mean /= static_cast<double>(ref.size());
    std::cout << "[ jpeg ] blobs80x60.jpg vs golden rgb.u8: max " << mx << " levels, mean " << mean << "\n";
    RecordProperty("jpeg_max_levels", mx);
    RecordProperty("jpeg_mean_levels", std::to_string(mean));
    EXPECT_LE(mx, 6);
    EXPECT_LE(mean, 1.5);
}

TEST(ImageDecode, CorruptTruncatedAndNonImagesGiveClearErrors) {
    MB_REQUIRE_DECODER();
    MB_REQUIRE_DATA(path, "mm/images/checker100x50.png");
    const std::vector<uint8_t> png = readBytes(path);

    const std::string text = "hello, not an image";
    const std::vector<uint8_t> notImage(text.begin(), text.end());
    EXPECT_EQ(errorOf([&] { decodeImage(notImage, "notes.txt"); }), "ImageError: notes.txt: not a PNG or JPEG image");
    EXPECT_EQ(errorOf([&] { decodeImage({}, "empty.png"); }), "ImageError: empty.png: not a PNG or JPEG image");

    std::vector<uint8_t> truncated(png.begin(), png.begin() + static_cast<std::ptrdiff_t>(png.size() / 2));
    const std::string t = errorOf([&] { decodeImage(truncated, "half.png"); });
    EXPECT_TRUE(t.starts_with("ImageError: half.png: corrupt PNG image (stb: ")) << t;

    std::vector<uint8_t> garbage(png.begin(), png.begin() + 8); // the signature, then noise
    for (int i = 0; i < 200; ++i) garbage.push_back(static_cast<uint8_t>(i * 37 + 11));
    const std::string g = errorOf([&] { decodeImage(garbage, "noise.png"); });
    EXPECT_TRUE(g.starts_with("ImageError: noise.png: corrupt")) << g;

    const std::vector<uint8_t> jpegHead = {0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F'};
    const std::string j = errorOf([&] { decodeImage(jpegHead, "bad.jpg"); });
    EXPECT_TRUE(j.starts_with("ImageError: bad.jpg: corrupt")) << j;

    EXPECT_EQ(errorOf([] { loadImage("/nonexistent/x.png"); }), "ImageError: /nonexistent/x.png: cannot open file");
    std::cout << "[ errors ] " << t << "\n[ errors ] " << g << "\n[ errors ] " << j << "\n";
}

// A PNG signature and an IHDR chunk only (stb checks no CRC): enough for stbi_info.
std::vector<uint8_t> pngHeader(uint32_t w, uint32_t h) {
    std::vector<uint8_t> b = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    for (uint32_t v : {w, h})
        for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<uint8_t>(v >> s));
    for (uint8_t v : {8, 2, 0, 0, 0, 0, 0, 0, 0}) b.push_back(v); // depth 8, RGB; crc
    return b;
}

TEST(ImageDecode, AbsurdSizesAreRefusedBeforeDecoding) {
    MB_REQUIRE_DECODER();
    EXPECT_EQ(errorOf([] { decodeImage(pngHeader(20000, 10), "wide.png"); }),
              "ImageError: wide.png: PNG image of 20000x10 px is too large (at most 16384 px a side and 64 Mpixel)");
    EXPECT_EQ(errorOf([] { decodeImage(pngHeader(9000, 9000), "big.png"); }),
              "ImageError: big.png: PNG image of 9000x9000 px is too large (at most 16384 px a side and 64 Mpixel)");
}

TEST(ClipPreprocess, MatchesLlamaCppExactlyForAllImages) {
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");
    const ClipModel model = ClipModel::load(mmproj.string());
    for (const TestImage& t : kImages) {
        MB_REQUIRE_DATA(rgb, std::string("mm/golden/") + t.stem + ".rgb.u8");
        MB_REQUIRE_DATA(pre, std::string("mm/golden/") + t.stem + ".pre.f32");
        // From the golden pixels, so the check does not depend on the decoder.
        const RgbImage img{t.width, t.height, readBytes(rgb)};
        const std::vector<float> got = clipPreprocess(img, model.preprocessParams());
        const std::vector<float> want = hwcToChw(readF32(pre), 64);
        ASSERT_EQ(got.size(), want.size()) << t.stem;
        size_t mismatches = 0;
        for (size_t i = 0; i < got.size(); ++i) mismatches += std::memcmp(&got[i], &want[i], 4) != 0;
        EXPECT_EQ(mismatches, 0u) << t.stem << ": values differing bitwise from golden pre.f32";
    }
}

TEST(ClipPreprocess, PadsTopLeftWithLlavaGrey) {
    const RgbImage wide{4, 2, std::vector<uint8_t>(24, 9)};
    const RgbImage sq = padToSquare(wide);
    ASSERT_EQ(sq.width, 4);
    ASSERT_EQ(sq.height, 4);
    EXPECT_EQ(sq.at(3, 1, 0), 9);
    EXPECT_EQ(sq.at(0, 2, 0), 122);
    EXPECT_EQ(sq.at(3, 3, 1), 116);
    EXPECT_EQ(sq.at(3, 3, 2), 104);
}

TEST(ClipModel, LoadsTinyMmproj) {
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");
    const ClipModel m = ClipModel::load(mmproj.string());
    EXPECT_EQ(m.imageSize(), 64);
    EXPECT_EQ(m.patchSize(), 16);
    EXPECT_EQ(m.imageTokens(), 16);
    EXPECT_EQ(m.embeddingWidth(), 256);
    EXPECT_EQ(m.hparams().hidden, 128);
    EXPECT_EQ(m.hparams().heads, 4);
    EXPECT_EQ(m.hparams().blockCount, 3);
    // llama.cpp c392e509 runs block_count - 1 blocks; v.blk.2 is loaded, never run.
    EXPECT_EQ(m.hparams().blocksRun, 2);
    EXPECT_FALSE(m.hparams().useGelu);
}

struct EmbdCase {
    const char* model;  // under mm/models
    const char* suffix; // golden/STEM{suffix}.embd.f32
};

class ClipEmbeddings : public ::testing::TestWithParam<EmbdCase> {};

TEST_P(ClipEmbeddings, MatchLlamaCppWithinTolerance) {
    const EmbdCase& c = GetParam();
    MB_REQUIRE_DATA(mmproj, std::string("mm/models/") + c.model);
    const ClipModel model = ClipModel::load(mmproj.string());
    kernels::ThreadPool pool(2);
    Diff worst;
    for (const TestImage& t : kImages) {
        MB_REQUIRE_DATA(pre, std::string("mm/golden/") + t.stem + ".pre.f32");
        MB_REQUIRE_DATA(embd, std::string("mm/golden/") + t.stem + c.suffix + ".embd.f32");
        const std::vector<float> chw = hwcToChw(readF32(pre), model.imageSize());
        const std::vector<float> got = model.encode(chw.data(), pool);
        const std::vector<float> want = readF32(embd);
        ASSERT_EQ(got.size(), want.size()) << t.stem;
        const Diff d = diff(got, want);
        std::cout << "[ embd ] " << c.model << " " << t.stem << ": max abs " << d.max << ", mean abs " << d.mean << "\n";
        EXPECT_LE(d.max, 5e-3) << t.stem;
        EXPECT_LE(d.mean, 1e-3) << t.stem;
        worst.max = std::max(worst.max, d.max);
        worst.mean = std::max(worst.mean, d.mean);
    }
    RecordProperty("max_abs", std::to_string(worst.max));
    RecordProperty("mean_abs", std::to_string(worst.mean));
}

INSTANTIATE_TEST_SUITE_P(ClipFiles, ClipEmbeddings,
                         ::testing::Values(EmbdCase{"tiny-mmproj-f32.gguf", ""}, EmbdCase{"tiny-mmproj-f16.gguf", ".f16"},
                                           EmbdCase{"tiny-mmproj-gelu-f32.gguf", ".gelu"}));

TEST(ClipModel, ImageFileToEmbeddingsEndToEnd) {
    MB_REQUIRE_DECODER();
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");
    MB_REQUIRE_DATA(image, "mm/images/tiny7x9.png");
    MB_REQUIRE_DATA(embd, "mm/golden/tiny7x9.embd.f32");
    const ClipModel model = ClipModel::load(mmproj.string());
    kernels::ThreadPool pool(1);
    const Diff d = diff(model.encodeImage(loadImage(image.string()), pool), readF32(embd));
    EXPECT_LE(d.max, 5e-3);
    EXPECT_LE(d.mean, 1e-3);
}

// A copy of `src` with its metadata and tensors passed through `edit` (nullopt drops a tensor).
struct TempFile {
    fs::path path;
    ~TempFile() { std::error_code ec; fs::remove(path, ec); }
};
using TensorEdit = std::function<bool(const GgufTensorInfo&)>; // false: leave the tensor out
void writeCopy(const fs::path& src, const fs::path& dst, const std::function<void(GgufWriter&)>& addMeta,
               const TensorEdit& keep, const std::function<void(GgufWriter&)>& addTensors = {}) {
    const GgufFile f = GgufFile::open(src.string());
    GgufWriter w(dst.string());
    for (const auto& [k, v] : f.metadata())
        if (k != "general.alignment") w.set(k, v);
    addMeta(w);
    for (const GgufTensorInfo& t : f.tensors())
        if (keep(t)) w.addTensor(t.name, t.type, t.shape, std::span<const uint8_t>(t.data, t.bytes));
    if (addTensors) addTensors(w);
    w.finish();
}
TempFile tempPath(const std::string& tag) {
    return {fs::temp_directory_path() / ("modebench_clip_" + std::to_string(::getpid()) + "_" + tag + ".gguf")};
}

TEST(ClipModel, BadMmprojFilesGiveClearErrors) {
    MB_REQUIRE_DATA(src, "mm/models/tiny-mmproj-f32.gguf");
    const auto noMeta = [](GgufWriter&) {};
    const auto all = [](const GgufTensorInfo&) { return true; };

    const TempFile missing = tempPath("missing");
    writeCopy(src, missing.path, noMeta, [](const GgufTensorInfo& t) { return t.name != "v.blk.2.attn_k.weight"; });
    EXPECT_EQ(errorOf([&] { ClipModel::load(missing.path.string()); }),
              "mmproj " + missing.path.string() + ": missing tensor 'v.blk.2.attn_k.weight'");

    const TempFile norm = tempPath("mlpnorm");
    static const std::vector<float> ones(256, 1.0f);
    writeCopy(src, norm.path, noMeta, all, [](GgufWriter& w) {
        w.addTensor("mm.3.weight", kernels::TensorType::F32, {256},
                    std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(ones.data()), ones.size() * 4));
    });
    EXPECT_EQ(errorOf([&] { ClipModel::load(norm.path.string()); }),
              "mmproj " + norm.path.string() + ": projector type 'mlp_norm' is not supported (only llava's mlp)");

    const TempFile ldp = tempPath("ldp");
    writeCopy(src, ldp.path, [](GgufWriter& w) { w.set("clip.projector_type", GgufValue::string("ldp")); }, all);
    EXPECT_EQ(errorOf([&] { ClipModel::load(ldp.path.string()); }),
              "mmproj " + ldp.path.string() + ": projector type 'ldp' is not supported (only llava's mlp)");

    const TempFile arch = tempPath("arch");
    writeCopy(src, arch.path, [](GgufWriter& w) { w.set("general.architecture", GgufValue::string("llama")); }, all);
    EXPECT_EQ(errorOf([&] { ClipModel::load(arch.path.string()); }),
              "mmproj " + arch.path.string() + ": general.architecture is 'llama', expected 'clip' (an mmproj file)");

    const TempFile text = tempPath("text");
    writeCopy(src, text.path, [](GgufWriter& w) { w.set("clip.has_text_encoder", GgufValue::boolean(true)); }, all);
    EXPECT_EQ(errorOf([&] { ClipModel::load(text.path.string()); }),
              "mmproj " + text.path.string() + ": has a text encoder; only vision-only mmproj files are supported");

    const std::string trunc = errorOf([&] { ClipModel::load("/nonexistent/mmproj.gguf"); });
    EXPECT_TRUE(trunc.starts_with("mmproj: ")) << trunc;
}

TEST(ClipModel, ShapeAndTypeErrorsNameTheTensor) {
    MB_REQUIRE_DATA(src, "mm/models/tiny-mmproj-f32.gguf");
    const TempFile bad = tempPath("shape");
    static const std::vector<float> zeros(128 * 64, 0.0f);
    writeCopy(src, bad.path, [](GgufWriter&) {}, [](const GgufTensorInfo& t) { return t.name != "mm.0.weight"; },
              [](GgufWriter& w) {
                  w.addTensor("mm.0.weight", kernels::TensorType::F32, {128, 64},
                              std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(zeros.data()), zeros.size() * 4));
              });
    EXPECT_EQ(errorOf([&] { ClipModel::load(bad.path.string()); }),
              "mmproj " + bad.path.string() + ": tensor 'mm.0.weight' has shape [128,64] (ggml ne), expected [128,256] (ggml ne)");
}

TEST(ClipModel, WidthMismatchWithLanguageModelIsClear) {
    MB_REQUIRE_DATA(mmproj, "mm/models/tiny-mmproj-f32.gguf");
    const ClipModel m = ClipModel::load(mmproj.string());
    EXPECT_NO_THROW(m.checkEmbeddingWidth(256));
    EXPECT_EQ(errorOf([&] { m.checkEmbeddingWidth(4096); }),
              "mmproj " + mmproj.string() + " projects to 256 features but the model's embedding width is 4096");
}

} // namespace
} // namespace mb::engine
