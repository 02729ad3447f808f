// GGUF writer -> reader round trips, value accessors and the real files in ../shared/data.
#include "engine/gguf.h"
#include "engine/quote.h"
#include "test_data.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <random>
#include <stdexcept>
#include <unistd.h>

namespace mb::engine {
namespace {

namespace fs = std::filesystem;
using kernels::TensorType;

// A fresh directory under the system temp dir, removed with its contents at scope exit.
class TempDir {
public:
    TempDir() {
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = std::string("modebench_gguf_") + std::to_string(::getpid()) + "_" +
                           info->test_suite_name() + "_" + info->name();
        for (char& ch : name)
            if (ch == '/') ch = '_';
        m_path = fs::temp_directory_path() / name;
        fs::remove_all(m_path);
        fs::create_directories(m_path);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(m_path, ec);
    }
    fs::path file(const std::string& name) const { return m_path / name; }
    size_t entries() const {
        return static_cast<size_t>(std::distance(fs::directory_iterator(m_path), {}));
    }

private:
    fs::path m_path;
};

std::vector<uint8_t> randomBytes(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> out(n);
    for (uint8_t& b : out) b = static_cast<uint8_t>(rng());
    return out;
}

uint64_t tensorBytes(TensorType t, const std::vector<uint64_t>& shape) {
    uint64_t rows = 1;
    for (size_t i = 1; i < shape.size(); ++i) rows *= shape[i];
    return kernels::rowBytes(t, static_cast<int64_t>(shape[0])) * rows;
}

// Every metadata type, including nested arrays and awkward values.
std::vector<std::pair<std::string, GgufValue>> allTypesMetadata() {
    using V = GgufValue;
    return {
        {"t.u8", V::u8(255)},
        {"t.i8", V::i8(-128)},
        {"t.u16", V::u16(65535)},
        {"t.i16", V::i16(-32768)},
        {"t.u32", V::u32(0xFFFFFFFFu)},
        {"t.i32", V::i32(std::numeric_limits<int32_t>::min())},
        {"t.u64", V::u64(std::numeric_limits<uint64_t>::max())},
        {"t.i64", V::i64(std::numeric_limits<int64_t>::min())},
        {"t.f32", V::f32(-1.5e-39f)}, // a denormal
        {"t.f32.inf", V::f32(std::numeric_limits<float>::infinity())},
        {"t.f64", V::f64(3.141592653589793)},
        {"t.bool.true", V::boolean(true)},
        {"t.bool.false", V::boolean(false)},
        {"t.string", V::string("h\xC3\xA9llo \xE4\xB8\x96\xE7\x95\x8C")},
        {"t.string.nul", V::string(std::string("a\0b", 3))},
        {"t.string.empty", V::string("")},
        {"t.strings", V::stringArray({"<unk>", "", "\xE2\x96\x81the"})},
        {"t.f32s", V::f32Array({0.0f, -2.25f, 1e30f})},
        {"t.i32s", V::i32Array({-1, 0, 7})},
        {"t.u8s", V::array(GgufValueType::U8, {V::u8(1), V::u8(2)})},
        {"t.bools", V::array(GgufValueType::Bool, {V::boolean(true), V::boolean(false)})},
        {"t.f64s", V::array(GgufValueType::F64, {V::f64(-0.5)})},
        {"t.empty", V::array(GgufValueType::I64, {})},
        {"t.nested", V::array(GgufValueType::Array, {V::i32Array({1, 2}), V::stringArray({"x"}),
                                                     V::array(GgufValueType::U16, {})})},
        {"t.nested3",
         V::array(GgufValueType::Array, {V::array(GgufValueType::Array, {V::f32Array({4.0f})})})},
    };
}

struct TensorSpec {
    std::string name;
    TensorType type;
    std::vector<uint64_t> shape;
};

// All five tensor types, several ranks, sizes that are not multiples of the alignment.
std::vector<TensorSpec> allTypesTensors() {
    return {
        {"f32.vec", TensorType::F32, {7}},
        {"f16.mat", TensorType::F16, {5, 3}},
        {"bf16.cube", TensorType::BF16, {3, 2, 2}},
        {"q8_0.mat", TensorType::Q8_0, {64, 3}},
        {"q4_0.4d", TensorType::Q4_0, {32, 2, 1, 3}},
    };
}

struct RoundTripCase {
    uint32_t version;
    uint64_t alignment;
};

class GgufRoundTrip : public ::testing::TestWithParam<RoundTripCase> {};

TEST_P(GgufRoundTrip, MetadataAndTensorsSurviveByteForByte) {
    const RoundTripCase param = GetParam();
    TempDir dir;
    const std::string path = dir.file("model.gguf").string();
    const auto metadata = allTypesMetadata();
    const auto specs = allTypesTensors();

    std::vector<std::vector<uint8_t>> data;
    for (size_t i = 0; i < specs.size(); ++i)
        data.push_back(randomBytes(tensorBytes(specs[i].type, specs[i].shape), 100 + i));

    GgufWriter writer(path, param.version, param.alignment);
    for (const auto& [k, v] : metadata) writer.set(k, v);
    for (size_t i = 0; i < specs.size(); ++i) {
        if (i % 2 == 0) {
            writer.addTensor(specs[i].name, specs[i].type, specs[i].shape, data[i]);
        } else {
            // Stream in uneven chunks to exercise the sink.
            const std::vector<uint8_t>& bytes = data[i];
            writer.addTensor(specs[i].name, specs[i].type, specs[i].shape,
                             [&bytes](const GgufWriter::Sink& sink) {
                                 for (size_t at = 0; at < bytes.size(); at += 5)
                                     sink(bytes.data() + at,
                                          std::min<size_t>(5, bytes.size() - at));
                             });
        }
    }
    writer.finish();
    EXPECT_FALSE(fs::exists(path + ".tmp"));

    GgufFile f = GgufFile::open(path);
    EXPECT_EQ(f.version(), param.version);
    EXPECT_EQ(f.alignment(), param.alignment);
    EXPECT_EQ(f.path(), path);
    EXPECT_EQ(f.dataOffset() % param.alignment, 0u);

    // Metadata in insertion order; general.alignment appears only when not the default.
    size_t first = 0;
    if (param.alignment != 32) {
        ASSERT_GE(f.metadata().size(), 1u);
        EXPECT_EQ(f.metadata()[0].first, "general.alignment");
        EXPECT_EQ(f.metadata()[0].second, GgufValue::u32(static_cast<uint32_t>(param.alignment)));
        first = 1;
    }
    ASSERT_EQ(f.metadata().size(), metadata.size() + first);
    for (size_t i = 0; i < metadata.size(); ++i) {
        EXPECT_EQ(f.metadata()[first + i].first, metadata[i].first);
        EXPECT_EQ(f.metadata()[first + i].second, metadata[i].second) << metadata[i].first;
    }

    ASSERT_EQ(f.tensors().size(), specs.size());
    uint64_t expectedOffset = 0;
    for (size_t i = 0; i < specs.size(); ++i) {
        const GgufTensorInfo& t = f.tensors()[i];
        EXPECT_EQ(t.name, specs[i].name);
        EXPECT_EQ(t.type, specs[i].type);
        EXPECT_EQ(t.shape, specs[i].shape);
        EXPECT_EQ(t.offset, expectedOffset) << t.name;
        EXPECT_EQ(t.offset % param.alignment, 0u);
        ASSERT_EQ(t.bytes, data[i].size());
        EXPECT_EQ(std::memcmp(t.data, data[i].data(), data[i].size()), 0) << t.name;
        EXPECT_EQ(f.findTensor(specs[i].name), &t);
        expectedOffset += (t.bytes + param.alignment - 1) / param.alignment * param.alignment;
    }
    // Every tensor, the last included, is padded to the alignment as ggml expects.
    EXPECT_EQ(f.fileSize(), f.dataOffset() + expectedOffset);
}

INSTANTIATE_TEST_SUITE_P(GgufVersions, GgufRoundTrip,
                         ::testing::Values(RoundTripCase{1, 32}, RoundTripCase{2, 32},
                                           RoundTripCase{3, 32}, RoundTripCase{2, 64},
                                           RoundTripCase{3, 1}, RoundTripCase{3, 4096}),
                         [](const auto& info) {
                             return "v" + std::to_string(info.param.version) + "_align" +
                                    std::to_string(info.param.alignment);
                         });

TEST(GgufValue, FactoriesKeepTypesAndAccessorsConvert) {
    EXPECT_EQ(GgufValue::u8(7).type, GgufValueType::U8);
    EXPECT_EQ(GgufValue::u8(7).asUInt(), 7u);
    EXPECT_EQ(GgufValue::i16(-3).asInt(), -3);
    EXPECT_EQ(GgufValue::i64(std::numeric_limits<int64_t>::min()).asInt(),
              std::numeric_limits<int64_t>::min());
    EXPECT_EQ(GgufValue::boolean(true).asUInt(), 1u);
    EXPECT_TRUE(GgufValue::u32(2).asBool());
    EXPECT_DOUBLE_EQ(GgufValue::i32(-4).asFloat(), -4.0);
    EXPECT_FLOAT_EQ(static_cast<float>(GgufValue::f32(0.25f).asFloat()), 0.25f);
    EXPECT_TRUE(GgufValue::u64(1).isInteger());
    EXPECT_FALSE(GgufValue::f64(1).isInteger());
    EXPECT_TRUE(GgufValue::f64(1).isFloat());
    EXPECT_FALSE(GgufValue::boolean(true).isInteger());
    EXPECT_EQ(GgufValue::string("x").asString(), "x");
    EXPECT_EQ(GgufValue::i32Array({1, 2}).asArray().size(), 2u);
    EXPECT_EQ(GgufValue::i32Array({1, 2}).elementType, GgufValueType::I32);
    EXPECT_EQ(ggufValueTypeName(GgufValueType::Array), "array");
    EXPECT_EQ(ggufValueTypeName(GgufValueType::F64), "f64");
}

TEST(GgufValue, AccessorsThrowOnMismatch) {
    EXPECT_THROW(GgufValue::i8(-1).asUInt(), GgufError);
    EXPECT_THROW((void)GgufValue::u64(std::numeric_limits<uint64_t>::max()).asInt(), GgufError);
    EXPECT_THROW((void)GgufValue::string("1").asUInt(), GgufError);
    EXPECT_THROW((void)GgufValue::u32(1).asString(), GgufError);
    EXPECT_THROW((void)GgufValue::f32(1).asArray(), GgufError);
    EXPECT_THROW((void)GgufValue::string("x").asFloat(), GgufError);
    EXPECT_THROW((void)GgufValue::f32(1).asBool(), GgufError);
    EXPECT_THROW(GgufValue::array(GgufValueType::I32, {GgufValue::u8(1)}), GgufError);
}

TEST(GgufWriter, ProducerWritingTooFewBytesThrowsAndLeavesNoFile) {
    TempDir dir;
    const std::string path = dir.file("short.gguf").string();
    GgufWriter writer(path);
    writer.set("general.name", GgufValue::string("short"));
    std::vector<uint8_t> ok = randomBytes(16, 1);
    writer.addTensor("ok", TensorType::F32, {4}, ok);
    writer.addTensor("short.weight", TensorType::F32, {8}, [](const GgufWriter::Sink& sink) {
        float v[7] = {};
        sink(v, sizeof(v));
    });
    try {
        writer.finish();
        FAIL() << "finish() accepted a short producer";
    } catch (const GgufError& e) {
        EXPECT_NE(std::string(e.what()).find("'short.weight'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("wrote 28 bytes, expected 32"), std::string::npos)
            << e.what();
    }
    EXPECT_FALSE(fs::exists(path));
    EXPECT_EQ(dir.entries(), 0u) << "the temp file was left behind";
}

TEST(GgufWriter, ProducerWritingTooManyBytesThrowsAndLeavesNoFile) {
    TempDir dir;
    const std::string path = dir.file("long.gguf").string();
    GgufWriter writer(path);
    writer.addTensor("long.weight", TensorType::F16, {4}, [](const GgufWriter::Sink& sink) {
        uint8_t v[6] = {};
        sink(v, sizeof(v));
        sink(v, sizeof(v));
    });
    try {
        writer.finish();
        FAIL() << "finish() accepted a long producer";
    } catch (const GgufError& e) {
        EXPECT_NE(std::string(e.what()).find("'long.weight'"), std::string::npos) << e.what();
    }
    EXPECT_EQ(dir.entries(), 0u);
}

TEST(GgufWriter, ProducerExceptionPropagatesAndKeepsOldFile) {
    TempDir dir;
    const std::string path = dir.file("keep.gguf").string();
    {
        GgufWriter first(path);
        first.set("general.name", GgufValue::string("first"));
        first.finish();
    }
    GgufWriter writer(path);
    writer.addTensor("t", TensorType::F32, {1},
                     [](const GgufWriter::Sink&) { throw std::runtime_error("disk on fire"); });
    EXPECT_THROW(writer.finish(), std::runtime_error);
    EXPECT_EQ(dir.entries(), 1u);
    EXPECT_EQ(GgufFile::open(path).get("general.name").asString(), "first");
}

TEST(GgufWriter, RejectsBadTensorDeclarations) {
    TempDir dir;
    GgufWriter writer(dir.file("x.gguf").string());
    std::vector<uint8_t> four(4);
    writer.addTensor("a", TensorType::F32, {1}, four);
    EXPECT_THROW(writer.addTensor("a", TensorType::F32, {1}, four), GgufError);
    EXPECT_THROW(writer.addTensor("empty", TensorType::F32, {}, four), GgufError);
    EXPECT_THROW(writer.addTensor("zero", TensorType::F32, {1, 0}, four), GgufError);
    EXPECT_THROW(writer.addTensor("five", TensorType::F32, {1, 1, 1, 1, 1}, four), GgufError);
    EXPECT_THROW(writer.addTensor("q", TensorType::Q8_0, {33}, [](const auto&) {}), GgufError);
    EXPECT_THROW(writer.addTensor("size", TensorType::F32, {2}, four), GgufError);
    EXPECT_THROW(GgufWriter(dir.file("y.gguf").string(), 4), GgufError);
    EXPECT_THROW(GgufWriter(dir.file("y.gguf").string(), 3, 48), GgufError);
    EXPECT_THROW(GgufWriter(dir.file("y.gguf").string(), 3, 0), GgufError);
}

TEST(GgufWriter, SetReplacesInPlaceAndGuardsAlignment) {
    TempDir dir;
    const std::string path = dir.file("set.gguf").string();
    GgufWriter writer(path, 3, 64);
    writer.set("a", GgufValue::u32(1));
    writer.set("b", GgufValue::u32(2));
    writer.set("a", GgufValue::string("replaced"));
    EXPECT_THROW(writer.set("general.alignment", GgufValue::u32(32)), GgufError);
    writer.set("general.alignment", GgufValue::u64(64)); // agrees: stored as u32 in place
    writer.finish();
    GgufFile f = GgufFile::open(path);
    ASSERT_EQ(f.metadata().size(), 3u);
    EXPECT_EQ(f.metadata()[0].first, "a");
    EXPECT_EQ(f.metadata()[0].second.asString(), "replaced");
    EXPECT_EQ(f.metadata()[2].first, "general.alignment");
    EXPECT_EQ(f.metadata()[2].second, GgufValue::u32(64));
    EXPECT_EQ(f.alignment(), 64u);
    EXPECT_EQ(f.get("b").asUInt(), 2u);
    EXPECT_EQ(f.find("missing"), nullptr);
    EXPECT_THROW(f.get("missing"), GgufError);
    EXPECT_EQ(f.findTensor("missing"), nullptr);
}

TEST(GgufWriter, ValueThatDoesNotFitItsTypeFailsBeforeWriting) {
    TempDir dir;
    const std::string path = dir.file("bad.gguf").string();
    GgufWriter writer(path);
    GgufValue v = GgufValue::u8(1);
    v.data = uint64_t{300};
    writer.set("too.big", v);
    EXPECT_THROW(writer.finish(), GgufError);
    EXPECT_EQ(dir.entries(), 0u);
}

TEST(GgufRealFiles, Stories260KParses) {
    MB_REQUIRE_DATA(path, "models/stories260K.gguf");
    GgufFile f = GgufFile::open(path.string());
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.alignment(), 32u);
    EXPECT_EQ(f.tensors().size(), 48u);
    EXPECT_EQ(f.metadata().size(), 19u);
    EXPECT_EQ(f.get("general.architecture").asString(), "llama");
    EXPECT_EQ(f.get("tokenizer.ggml.tokens").asArray().size(), 512u);
    EXPECT_EQ(f.get("tokenizer.ggml.tokens").elementType, GgufValueType::String);
    const GgufTensorInfo* emb = f.findTensor("token_embd.weight");
    ASSERT_NE(emb, nullptr);
    EXPECT_EQ(emb->shape.size(), 2u);
    EXPECT_EQ(emb->rows(), 512u);
    EXPECT_EQ(emb->rowLength(), f.get("llama.embedding_length").asUInt());
    for (const GgufTensorInfo& t : f.tensors()) {
        EXPECT_NE(t.data, nullptr);
        EXPECT_LE(f.dataOffset() + t.offset + t.bytes, f.fileSize()) << t.name;
    }
    // Moving the file keeps the mapping, so tensor pointers stay valid.
    const uint8_t* first = emb->data;
    const uint8_t firstByte = *first;
    GgufFile moved = std::move(f);
    EXPECT_EQ(moved.findTensor("token_embd.weight")->data, first);
    EXPECT_EQ(*moved.findTensor("token_embd.weight")->data, firstByte);
}

TEST(GgufRealFiles, VocabFilesParse) {
    MB_REQUIRE_DATA(gpt2, "vocab/ggml-vocab-gpt-2.gguf");
    GgufFile g = GgufFile::open(gpt2.string());
    EXPECT_EQ(g.tensors().size(), 0u);
    EXPECT_EQ(g.get("tokenizer.ggml.model").asString(), "gpt2");
    EXPECT_EQ(g.get("tokenizer.ggml.merges").asArray().size(), 50000u);
    MB_REQUIRE_DATA(spm, "vocab/ggml-vocab-llama-spm.gguf");
    GgufFile s = GgufFile::open(spm.string());
    EXPECT_EQ(s.tensors().size(), 0u);
    EXPECT_EQ(s.get("tokenizer.ggml.model").asString(), "llama");
    EXPECT_EQ(s.get("tokenizer.ggml.tokens").asArray().size(),
              s.get("tokenizer.ggml.scores").asArray().size());
}

// Rewriting a real model through the writer reproduces every value and tensor byte.
TEST(GgufRealFiles, CopyThroughWriterIsIdentical) {
    MB_REQUIRE_DATA(path, "models/stories260K-f16.gguf");
    GgufFile src = GgufFile::open(path.string());
    TempDir dir;
    const std::string out = dir.file("copy.gguf").string();
    GgufWriter writer(out, src.version(), src.alignment());
    for (const auto& [k, v] : src.metadata()) writer.set(k, v);
    for (const GgufTensorInfo& t : src.tensors())
        writer.addTensor(t.name, t.type, t.shape, std::span<const uint8_t>(t.data, t.bytes));
    writer.finish();

    GgufFile copy = GgufFile::open(out);
    EXPECT_EQ(copy.metadata(), src.metadata());
    ASSERT_EQ(copy.tensors().size(), src.tensors().size());
    for (size_t i = 0; i < src.tensors().size(); ++i) {
        const GgufTensorInfo& a = src.tensors()[i];
        const GgufTensorInfo& b = copy.tensors()[i];
        EXPECT_EQ(a.name, b.name);
        EXPECT_EQ(a.type, b.type);
        EXPECT_EQ(a.shape, b.shape);
        ASSERT_EQ(a.bytes, b.bytes);
        EXPECT_EQ(std::memcmp(a.data, b.data, a.bytes), 0) << a.name;
    }
}

} // namespace
} // namespace mb::engine

TEST(QuoteName, ControlBytesAreEscapedAndLongNamesCut) {
    using namespace std::string_literals;
    EXPECT_EQ(mb::engine::quoteName("blk.0.attn_q.weight"), "'blk.0.attn_q.weight'");
    EXPECT_EQ(mb::engine::quoteName("gpt2\0x"s), "'gpt2\\x00x'"); // a NUL no longer ends the message
    EXPECT_EQ(mb::engine::quoteName("a\nb\x7f"), "'a\\x0ab\\x7f'");
    EXPECT_EQ(mb::engine::quoteName("\xe2\x96\x81word"), "'\xe2\x96\x81word'"); // UTF-8 as it is
    EXPECT_EQ(mb::engine::quoteName(std::string(300, 'n'), 4), "'nnnn...'");
}
