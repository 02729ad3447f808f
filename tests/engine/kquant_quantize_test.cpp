// `quantize` to llama.cpp's file types on kquant/tiny-llama-F32.gguf: the same per-tensor type
// choices as llama-quantize made for the shared files, and errors close to llama.cpp's own.
#include "engine/gguf.h"
#include "engine/llama_model.h"
#include "engine/profile.h"
#include "engine/quantize_model.h"
#include "kernels/cpu/quant.h"
#include "test_data.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

using namespace mb::engine;

namespace {

std::vector<float> dequantised(const GgufTensorInfo& t) {
    const auto cols = static_cast<int64_t>(t.rowLength());
    std::vector<float> out(static_cast<size_t>(t.elements()));
    const size_t rb = mb::kernels::rowBytes(t.type, cols);
    for (uint64_t r = 0; r < t.rows(); ++r)
        mb::kernels::dequantizeRow(t.type, t.data + r * rb, out.data() + r * static_cast<uint64_t>(cols), cols);
    return out;
}

double sqError(const std::vector<float>& a, const std::vector<float>& b) {
    double e = 0;
    for (size_t i = 0; i < a.size(); ++i) e += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    return e;
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

class QuantizeMix : public ::testing::TestWithParam<const char*> {};

} // namespace

TEST_P(QuantizeMix, ChoosesLlamaCppsTypesWithComparableError) {
    const std::string mix = GetParam();
    MB_REQUIRE_DATA(f32, "kquant/tiny-llama-F32.gguf");
    MB_REQUIRE_DATA(theirs, "kquant/tiny-llama-" + mix + ".gguf");
    const auto meta = nlohmann::json::parse(std::ifstream(mb::test::dataDir() / ("kquant/tiny-llama-" + mix + ".json")));
    const auto target = quantizeTargetFromName(mix);
    ASSERT_TRUE(target) << mix;
    const auto out = std::filesystem::temp_directory_path() / ("mb-quantize-" + lower(mix) + ".gguf");
    quantizeModel(f32.string(), out.string(), *target);
    const GgufFile ours = GgufFile::open(out.string());
    const GgufFile ref = GgufFile::open(f32.string());
    const GgufFile llama = GgufFile::open(theirs.string());
    EXPECT_EQ(ours.find("general.file_type")->asInt(), meta["general.file_type"].get<int64_t>());
    double oursErr = 0, theirsErr = 0;
    for (const auto& t : ours.tensors()) {
        EXPECT_EQ(std::string(mb::kernels::tensorTypeName(t.type)), lower(meta["tensor_types"][t.name].get<std::string>()))
            << mix << " " << t.name;
        const auto x = dequantised(*ref.findTensor(t.name));
        oursErr += sqError(dequantised(t), x);
        theirsErr += sqError(dequantised(*llama.findTensor(t.name)), x);
    }
    // Our quantiser is not llama.cpp's search; the whole model's squared error stays within 1.15x (measured 0.85-1.06x).
    std::cout << mix << ": squared error ours / llama.cpp's = " << oursErr / theirsErr << "\n";
    EXPECT_LE(oursErr, 1.15 * theirsErr) << mix;
    std::filesystem::remove(out);
}

INSTANTIATE_TEST_SUITE_P(KQuant, QuantizeMix,
                         ::testing::Values("Q8_0", "Q6_K", "Q5_K_M", "Q4_K_M", "Q4_0", "Q3_K_M", "Q2_K"),
                         [](const auto& info) { return std::string(info.param); });

// A profile precision of a mix's name requantises at load to the same types `quantize` writes.
TEST(QuantizeMix, LoadPrecisionFollowsTheMix) {
    MB_REQUIRE_DATA(f32, "kquant/tiny-llama-F32.gguf");
    const auto m = LlamaModel::load(f32.string(), {precisionFromName("q4_k_m")});
    using mb::kernels::TensorType;
    EXPECT_EQ(m->output().type, TensorType::Q6_K);
    EXPECT_EQ(m->layers()[0].wq.type, TensorType::Q4_K);
    EXPECT_EQ(m->layers()[1].wv.type, TensorType::Q4_K);
    EXPECT_EQ(m->layers()[2].wv.type, TensorType::Q6_K); // use_more_bits: layers 2 and 3 of 4
    EXPECT_EQ(m->layers()[3].down.type, TensorType::Q6_K);
    EXPECT_EQ(m->layers()[0].down.type, TensorType::Q4_K);
}
