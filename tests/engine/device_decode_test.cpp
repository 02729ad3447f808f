// The CUDA kernels' block decoders (kernels/cuda/block_decode.h), run on the host: bit for bit traits(type).toFloat
// on every tensor of llama.cpp's kquant/ files and on hand-made blocks with extreme scales.
//
// Not a `gpu` test: the header compiles as plain C++, so these are the very functions the
// device runs (with __fmul_rn for the products there), checked in every CI build.
#include "engine/gguf.h"
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant.h"
#include "kernels/cuda/block_decode.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace mb::kernels;

namespace {

// Same bits, or both NaN (a NaN's payload is not a property of the format).
bool sameFloat(float a, float b) {
    if (std::isnan(a) && std::isnan(b)) return true;
    return std::memcmp(&a, &b, sizeof a) == 0;
}

// Checks `rows` rows of `type` (cols elements each) at `data`: every element through
// rowElement and, for block types, every 32-element group through rowGroup, against the
// table's toFloat. Returns the number of mismatching values (the first few are reported).
size_t countMismatches(TensorType type, const uint8_t* data, int64_t rows, int64_t cols, const std::string& what) {
    size_t bad = 0;
    const size_t bytes = rowBytes(type, cols);
    std::vector<float> want(static_cast<size_t>(cols));
    const bool known = decode::withDecoder(type, [&](auto d) {
        using D = decltype(d);
        float group[32];
        for (int64_t r = 0; r < rows; ++r) {
            const uint8_t* row = data + static_cast<size_t>(r) * bytes;
            traits(type).toFloat(row, want.data(), cols);
            for (int64_t i = 0; i < cols; ++i) {
                const float got = decode::rowElement<D>(row, i);
                if (!sameFloat(got, want[static_cast<size_t>(i)]) && bad++ < 5)
                    ADD_FAILURE() << what << " row " << r << " element " << i << ": " << got << " vs "
                                  << want[static_cast<size_t>(i)];
            }
            if constexpr (D::kElems > 1) {
                for (int64_t g = 0; g < cols / 32; ++g) {
                    decode::rowGroup<D>(row, g, group);
                    for (int i = 0; i < 32; ++i)
                        if (!sameFloat(group[i], want[static_cast<size_t>(g * 32 + i)]) && bad++ < 5)
                            ADD_FAILURE() << what << " row " << r << " group " << g << " element " << i << ": "
                                          << group[i] << " vs " << want[static_cast<size_t>(g * 32 + i)];
                }
            }
        }
    });
    EXPECT_TRUE(known) << what << ": no device decoder for " << tensorTypeName(type);
    return bad;
}

// Byte offsets of the F16 scale fields of each block type (d, and m or dmin where present).
std::vector<size_t> halfFields(TensorType t) {
    switch (t) {
    case TensorType::Q4_1: return {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
    case TensorType::Q5_1: return {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
    case TensorType::Q2_K: return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
    case TensorType::Q3_K: return {offsetof(BlockQ3_K, d)};
    case TensorType::Q4_K: return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
    case TensorType::Q5_K: return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
    case TensorType::Q6_K: return {offsetof(BlockQ6_K, d)};
    case TensorType::Q8_0: case TensorType::Q4_0: case TensorType::Q5_0: case TensorType::IQ4_NL:
    case TensorType::IQ4_XS: return {0};
    case TensorType::F32: case TensorType::F16: case TensorType::BF16: case TensorType::Q8_K: return {};
    }
    return {};
}

uint64_t next(uint64_t& s) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
}

} // namespace

TEST(DeviceDecode, EveryTableTypeButQ8_KHasADecoderOfTheTablesGeometry) {
    int decoders = 0;
    for (const TensorTypeTraits& row : tensorTypeTable()) {
        const bool activationsOnly = row.type == TensorType::Q8_K;
        EXPECT_EQ(decode::deviceDecodes(row.type), !activationsOnly) << row.name;
        decoders += decode::deviceDecodes(row.type);
    }
    EXPECT_EQ(decoders, static_cast<int>(tensorTypeTable().size()) - 1);
}

TEST(DeviceDecode, Iq4LevelsArePackedFromTheTable) {
    for (int q = 0; q < 16; ++q) EXPECT_EQ(decode::iq4Level(q), static_cast<float>(kIq4NlValues[q])) << q;
}

// Every tensor of every kquant/ file (llama.cpp's own blocks: Q2_K ... Q6_K, Q4_0, Q8_0, F32).
TEST(DeviceDecode, EveryTensorOfEveryKquantFileDecodesToTheCpuBits) {
    MB_REQUIRE_DATA(dir, "kquant");
    std::map<std::string, int> tensorsPerType;
    int files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() != ".gguf") continue;
        ++files;
        const mb::engine::GgufFile file = mb::engine::GgufFile::open(entry.path().string());
        for (const mb::engine::GgufTensorInfo& t : file.tensors()) {
            const auto cols = static_cast<int64_t>(t.rowLength()), rows = static_cast<int64_t>(t.rows());
            const std::string what = entry.path().filename().string() + " " + t.name;
            EXPECT_EQ(countMismatches(t.type, t.data, rows, cols, what), 0u) << what;
            ++tensorsPerType[std::string(tensorTypeName(t.type))];
        }
    }
    EXPECT_EQ(files, 8);
    for (const char* type : {"f32", "q8_0", "q4_0", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k"})
        EXPECT_GT(tensorsPerType[type], 0) << "no " << type << " tensor was checked";
}

// Random bytes (every sub-scale, min and quant bit pattern), all-zero and all-one blocks, with the
// F16 scales set to extremes: zeros, subnormals, the largest finite, infinities, NaN (a second
// F16 field, the min, gets the opposite sign). F16 and BF16: all 65536 bit patterns.
TEST(DeviceDecode, HandMadeBlocksWithExtremeScalesDecodeToTheCpuBits) {
    const uint16_t scales[] = {0x0000, 0x8000, 0x0001, 0x03FF, 0x0400, 0x3C00, 0xBC00,
                               0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0x1234, 0x9ABC};
    for (const TensorTypeTraits& tt : tensorTypeTable()) {
        if (!decode::deviceDecodes(tt.type) || tt.type == TensorType::F32) continue;
        std::vector<uint8_t> data;
        int64_t cols = 65536;
        if (tt.blockSize == 1) {
            for (uint32_t bits = 0; bits < 65536; ++bits) data.insert(data.end(), {uint8_t(bits), uint8_t(bits >> 8)});
        } else {
            cols = tt.blockSize;
            const std::vector<size_t> fields = halfFields(tt.type);
            ASSERT_FALSE(fields.empty()) << tt.name;
            uint64_t s = 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(tt.type);
            for (int pattern = 0; pattern < 3; ++pattern) // random, all 0x00, all 0xFF
                for (uint16_t scale : scales) {
                    const size_t at = data.size();
                    for (size_t i = 0; i < tt.blockBytes; ++i)
                        data.push_back(pattern == 0 ? static_cast<uint8_t>(next(s)) : pattern == 1 ? 0x00 : 0xFF);
                    for (size_t f = 0; f < fields.size(); ++f) {
                        const uint16_t v = f == 0 ? scale : static_cast<uint16_t>(scale ^ 0x8000);
                        data[at + fields[f]] = static_cast<uint8_t>(v);
                        data[at + fields[f] + 1] = static_cast<uint8_t>(v >> 8);
                    }
                }
        }
        const auto rows = static_cast<int64_t>(data.size() / rowBytes(tt.type, cols));
        EXPECT_EQ(countMismatches(tt.type, data.data(), rows, cols, std::string(tt.name)), 0u) << tt.name;
    }
}

// Blocks as the engine quantises them (the types no kquant/ file holds: Q4_1, Q5_0, Q5_1,
// IQ4_NL, IQ4_XS, BF16, F16), from values spanning 1e-6 to 1e4 in magnitude.
TEST(DeviceDecode, QuantisedRowsOfEveryTypeDecodeToTheCpuBits) {
    const int64_t rows = 7, cols = 512;
    std::vector<float> src(static_cast<size_t>(rows * cols));
    uint64_t s = 12345;
    for (size_t i = 0; i < src.size(); ++i) {
        const double u = static_cast<double>(next(s) >> 11) / 9007199254740992.0; // [0, 1)
        const double magnitude = std::pow(10.0, -6.0 + 10.0 * static_cast<double>(i / cols) / (rows - 1));
        src[i] = static_cast<float>((2.0 * u - 1.0) * magnitude);
    }
    for (const TensorTypeTraits& tt : tensorTypeTable()) {
        if (!decode::deviceDecodes(tt.type)) continue;
        std::vector<uint8_t> data(static_cast<size_t>(rows) * rowBytes(tt.type, cols));
        for (int64_t r = 0; r < rows; ++r)
            quantizeRow(tt.type, src.data() + r * cols, data.data() + static_cast<size_t>(r) * rowBytes(tt.type, cols), cols);
        EXPECT_EQ(countMismatches(tt.type, data.data(), rows, cols, std::string(tt.name)), 0u) << tt.name;
    }
}
