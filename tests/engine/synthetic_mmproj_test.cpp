// Synthetic mmproj files: the test data's keys and tensor shapes, determinism, the real ViT-L/336 size.
#include "engine/gguf.h"
#include "engine/synthetic_mmproj.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>

using namespace mb::engine;
namespace fs = std::filesystem;

namespace {
std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}
} // namespace

TEST(SyntheticMmproj, TinyClipHasTheReferenceFilesKeysAndTensors) {
    MB_REQUIRE_DATA(reference, "mm/models/tiny-mmproj-f16.gguf");
    const fs::path out = fs::temp_directory_path() / ("mb_mmproj_" + std::to_string(::getpid()) + ".gguf");
    writeSyntheticMmproj(*findMmprojPreset("tiny-clip"), mb::kernels::TensorType::F16, 7, out.string());
    const GgufFile ours = GgufFile::open(out.string());
    const GgufFile ref = GgufFile::open(reference.string());
    ASSERT_EQ(ours.tensors().size(), ref.tensors().size());
    for (const auto& t : ref.tensors()) {
        const GgufTensorInfo* mine = ours.findTensor(t.name);
        ASSERT_TRUE(mine) << t.name;
        EXPECT_EQ(mine->shape, t.shape) << t.name;
        EXPECT_EQ(mine->type, t.type) << t.name; // the converter's F16 layout
    }
    for (const auto& [key, value] : ref.metadata()) {
        const GgufValue* v = ours.find(key);
        ASSERT_TRUE(v) << key;
        if (key != "general.name" && key != "general.description") {
            EXPECT_EQ(*v, value) << key;
        }
    }
    // Same seed, same bytes; another seed, other weights.
    const fs::path again = out.string() + ".2";
    writeSyntheticMmproj(*findMmprojPreset("tiny-clip"), mb::kernels::TensorType::F16, 7, again.string());
    EXPECT_EQ(slurp(out), slurp(again));
    writeSyntheticMmproj(*findMmprojPreset("tiny-clip"), mb::kernels::TensorType::F16, 8, again.string());
    EXPECT_NE(slurp(out), slurp(again));
    fs::remove(out);
    fs::remove(again);
}

TEST(SyntheticMmproj, ClipVitL336HasLlavaOnePointFivesShapes) {
    const MmprojPreset p = *findMmprojPreset("clip-vit-l-336");
    EXPECT_EQ(p.imageTokens(), 576);
    // ViT-L/14 without its last block and post-LN (23 blocks of 12.6M), plus the 2-layer projector to 4096.
    EXPECT_EQ(mmprojParameterCount(p), 311888896u);
    EXPECT_THROW(writeSyntheticMmproj(p, mb::kernels::TensorType::Q8_0, 0, "/nonexistent/x.gguf"), std::invalid_argument);
}
