// Malformed GGUF inputs, built byte by byte: each must fail with a GgufError naming the problem.
#include "engine/gguf.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace mb::engine {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kHuge = uint64_t{1} << 60;
constexpr uint32_t kF32 = 0;
constexpr uint32_t kQ8_0 = 8;
constexpr uint32_t kTypeU8 = 0;
constexpr uint32_t kTypeI32 = 5;
constexpr uint32_t kTypeU32 = 4;
constexpr uint32_t kTypeString = 8;
constexpr uint32_t kTypeArray = 9;

// Writes raw GGUF bytes without any validation, so tests can break every field.
class GgufBytes {
public:
    explicit GgufBytes(uint32_t version = 3) : m_version(version) {}

    template <typename T> GgufBytes& put(T v) {
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        m_bytes.insert(m_bytes.end(), p, p + sizeof(T));
        return *this;
    }
    GgufBytes& u32(uint32_t v) { return put(v); }
    GgufBytes& u64(uint64_t v) { return put(v); }
    // Counts and lengths: u32 in version 1, u64 after.
    GgufBytes& count(uint64_t n) { return m_version == 1 ? put(static_cast<uint32_t>(n)) : put(n); }
    GgufBytes& str(std::string_view s) {
        count(s.size());
        m_bytes.insert(m_bytes.end(), s.begin(), s.end());
        return *this;
    }
    GgufBytes& header(uint64_t tensors, uint64_t kvs) {
        m_bytes.insert(m_bytes.end(), {'G', 'G', 'U', 'F'});
        u32(m_version);
        return count(tensors).count(kvs);
    }
    GgufBytes& kvU32(std::string_view key, uint32_t v) { return str(key).u32(kTypeU32).u32(v); }
    GgufBytes& kvString(std::string_view key, std::string_view v) {
        return str(key).u32(kTypeString).str(v);
    }
    GgufBytes& tensor(std::string_view name, std::vector<uint64_t> dims, uint32_t type,
                      uint64_t offset) {
        str(name).u32(static_cast<uint32_t>(dims.size()));
        for (uint64_t d : dims) m_version == 1 ? put(static_cast<uint32_t>(d)) : put(d);
        return u32(type).u64(offset);
    }
    GgufBytes& padTo(size_t alignment) {
        while (m_bytes.size() % alignment) m_bytes.push_back(0);
        return *this;
    }
    GgufBytes& zeros(size_t n) {
        m_bytes.insert(m_bytes.end(), n, 0);
        return *this;
    }
    const std::vector<uint8_t>& bytes() const { return m_bytes; }

private:
    uint32_t m_version;
    std::vector<uint8_t> m_bytes;
};

// A small valid file: four kinds of metadata and two tensors whose data ends the file.
std::vector<uint8_t> validFile(uint32_t version = 3) {
    GgufBytes b(version);
    b.header(2, 4).kvString("general.architecture", "llama").kvU32("general.alignment", 32);
    b.str("list").u32(kTypeArray).u32(kTypeI32).count(3).u32(1).u32(2).u32(3);
    b.str("words").u32(kTypeArray).u32(kTypeString).count(2).str("ab").str("");
    b.tensor("a", {4, 2}, kF32, 0).tensor("b", {32}, kQ8_0, 32).padTo(32).zeros(32 + 34);
    return b.bytes();
}

// Expects parsing to fail with a GgufError whose one-line message contains `needle`.
void expectError(const std::vector<uint8_t>& bytes, const std::string& needle) {
    // A copy of exactly the right size lets ASan catch any read past the end.
    std::vector<uint8_t> exact(bytes.begin(), bytes.end());
    try {
        GgufFile::fromMemory(exact);
        ADD_FAILURE() << "parsed without error; expected \"" << needle << "\"";
    } catch (const GgufError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(needle), std::string::npos) << "message: " << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << "message spans lines: " << what;
    }
}

std::string tempPath(const std::string& name) {
    return (fs::temp_directory_path() /
            ("modebench_gguf_corrupt_" + std::to_string(::getpid()) + "_" + name))
        .string();
}

TEST(GgufCorrupt, ValidBaselineParses) {
    for (uint32_t version : {1u, 2u, 3u}) {
        std::vector<uint8_t> bytes = validFile(version);
        GgufFile f = GgufFile::fromMemory(bytes);
        EXPECT_EQ(f.version(), version);
        ASSERT_EQ(f.tensors().size(), 2u);
        EXPECT_EQ(f.tensors()[1].bytes, 34u);
        EXPECT_EQ(f.get("words").asArray()[0].asString(), "ab");
        EXPECT_EQ(f.dataOffset() + 32 + 34, bytes.size());
    }
}

TEST(GgufCorrupt, BadMagic) {
    std::vector<uint8_t> bytes = validFile();
    bytes[0] = 'X';
    expectError(bytes, "bad magic");
    expectError({'G', 'G', 'M', 'L', 3, 0, 0, 0}, "bad magic");
    expectError({'x'}, "bad magic");
}

TEST(GgufCorrupt, UnsupportedVersion) {
    for (uint32_t version : {0u, 4u, 0xFFFFFFFFu}) {
        std::vector<uint8_t> bytes = validFile();
        std::memcpy(bytes.data() + 4, &version, 4);
        expectError(bytes, "unsupported GGUF version " + std::to_string(version));
    }
    std::vector<uint8_t> bigEndian = validFile();
    const uint8_t be3[4] = {0, 0, 0, 3};
    std::memcpy(bigEndian.data() + 4, be3, 4);
    expectError(bigEndian, "big-endian");
}

// Every proper prefix of a valid file must fail cleanly, for both count widths.
TEST(GgufCorrupt, TruncatedHeaderAtEveryOffset) {
    for (uint32_t version : {1u, 3u}) {
        const std::vector<uint8_t> full = validFile(version);
        for (size_t n = 1; n < full.size(); ++n) {
            std::vector<uint8_t> prefix(full.begin(), full.begin() + static_cast<ptrdiff_t>(n));
            EXPECT_THROW(GgufFile::fromMemory(prefix), GgufError) << "prefix " << n;
        }
    }
    GgufBytes b;
    b.header(0, 1).str("general.name").u32(kTypeString).u64(10).zeros(3);
    expectError(b.bytes(), "truncated header");
    std::vector<uint8_t> ten = validFile();
    ten.resize(10);
    expectError(ten, "truncated header: need 8 bytes at offset 8, file has 10");
}

TEST(GgufCorrupt, TruncatedData) {
    std::vector<uint8_t> bytes = validFile();
    bytes.resize(bytes.size() - 1);
    expectError(bytes, "tensor 'b' data [");
    expectError(bytes, "lies outside the file (size " + std::to_string(bytes.size()) + ")");
}

TEST(GgufCorrupt, AbsurdTensorCount) {
    GgufBytes b;
    b.header(kHuge, 0).zeros(64);
    expectError(b.bytes(), "tensor count 1152921504606846976");
}

TEST(GgufCorrupt, AbsurdMetadataCount) {
    GgufBytes b;
    b.header(0, kHuge).zeros(64);
    expectError(b.bytes(), "metadata count 1152921504606846976");
}

TEST(GgufCorrupt, AbsurdArrayLength) {
    for (uint32_t elem : {kTypeU8, kTypeString, kTypeArray}) {
        GgufBytes b;
        b.header(0, 1).str("list").u32(kTypeArray).u32(elem).u64(kHuge).zeros(64);
        expectError(b.bytes(), "metadata key 'list': array length 1152921504606846976");
    }
}

TEST(GgufCorrupt, AbsurdStringLength) {
    GgufBytes key;
    key.header(0, 1).u64(kHuge).zeros(64);
    expectError(key.bytes(), "string length 1152921504606846976");
    GgufBytes value;
    value.header(0, 1).str("general.name").u32(kTypeString).u64(kHuge).zeros(64);
    expectError(value.bytes(), "string length 1152921504606846976");
    GgufBytes name;
    name.header(1, 0).u64(kHuge).zeros(64);
    expectError(name.bytes(), "string length 1152921504606846976");
}

TEST(GgufCorrupt, DuplicateMetadataKey) {
    GgufBytes b;
    b.header(0, 2).kvString("general.name", "a").kvString("general.name", "b");
    expectError(b.bytes(), "duplicate metadata key 'general.name'");
}

TEST(GgufCorrupt, DuplicateTensorName) {
    GgufBytes b;
    b.header(2, 0).tensor("w", {8}, kF32, 0).tensor("w", {8}, kF32, 32).padTo(32).zeros(64);
    expectError(b.bytes(), "duplicate tensor name 'w'");
}

TEST(GgufCorrupt, AlignmentZeroOrNotPowerOfTwo) {
    for (uint32_t align : {0u, 3u, 48u}) {
        GgufBytes b;
        b.header(0, 1).kvU32("general.alignment", align);
        expectError(b.bytes(), "bad alignment: general.alignment is " + std::to_string(align));
    }
    GgufBytes negative;
    negative.header(0, 1).str("general.alignment").u32(kTypeI32).u32(0xFFFFFFE0u);
    expectError(negative.bytes(), "general.alignment is -32");
    GgufBytes text;
    text.header(0, 1).kvString("general.alignment", "32");
    expectError(text.bytes(), "general.alignment has type string");
}

TEST(GgufCorrupt, TensorOffsetNotAligned) {
    GgufBytes b;
    b.header(1, 1).kvU32("general.alignment", 64).tensor("w", {4}, kF32, 16).padTo(64).zeros(32);
    expectError(b.bytes(), "tensor 'w' offset 16 is not a multiple of the alignment 64");
}

TEST(GgufCorrupt, TensorDataOutsideFile) {
    GgufBytes far;
    far.header(1, 0).tensor("w", {4}, kF32, 1 << 20).padTo(32).zeros(16);
    expectError(far.bytes(), "tensor 'w' data [");
    expectError(far.bytes(), "lies outside the file");
    // Offsets that overflow when added to the data offset or the tensor size.
    GgufBytes wrap;
    wrap.header(1, 0).tensor("w", {4}, kF32, uint64_t{0} - 32).padTo(32).zeros(16);
    expectError(wrap.bytes(), "tensor 'w' data at data offset");
    GgufBytes wrapEnd;
    wrapEnd.header(1, 0).tensor("w", {uint64_t{1} << 60}, kF32,
                                (uint64_t{1} << 63) + (uint64_t{1} << 62));
    wrapEnd.padTo(32).zeros(16);
    expectError(wrapEnd.bytes(), " + 4611686018427387904) lies outside the file");
}

TEST(GgufCorrupt, RowLengthNotBlockMultiple) {
    GgufBytes b;
    b.header(1, 0).tensor("q", {33}, kQ8_0, 0).padTo(32).zeros(68);
    expectError(b.bytes(), "tensor 'q' row length 33 is not a multiple of the block size 32");
}

TEST(GgufCorrupt, UnknownTensorType) {
    for (uint32_t type : {16u, 99u, 0xFFFFFFFFu}) {
        GgufBytes b;
        b.header(1, 0).tensor("blk.0.attn_q.weight", {32}, type, 0).padTo(32).zeros(128);
        expectError(b.bytes(),
                    "tensor 'blk.0.attn_q.weight' has unsupported type id " + std::to_string(type));
    }
    GgufBytes iq2;
    iq2.header(1, 0).tensor("w", {256}, 16, 0).padTo(32).zeros(128);
    expectError(iq2.bytes(), "unsupported type id 16 (ggml's iq2_xxs)");
}

TEST(GgufCorrupt, TooManyDimsOrZeroDims) {
    GgufBytes five;
    five.header(1, 0).tensor("w", {1, 1, 1, 1, 1}, kF32, 0).padTo(32).zeros(4);
    expectError(five.bytes(), "tensor 'w' has 5 dimensions");
    GgufBytes none;
    none.header(1, 0).tensor("w", {}, kF32, 0).padTo(32).zeros(4);
    expectError(none.bytes(), "tensor 'w' has 0 dimensions");
}

TEST(GgufCorrupt, ZeroDimension) {
    GgufBytes b;
    b.header(1, 0).tensor("w", {4, 0}, kF32, 0).padTo(32);
    expectError(b.bytes(), "tensor 'w' has a zero dimension in shape [4, 0]");
}

TEST(GgufCorrupt, ElementCountOverflow) {
    GgufBytes elements;
    elements.header(1, 0).tensor("w", {1u << 31, 1u << 31, 1u << 31}, kF32, 0).padTo(32);
    expectError(elements.bytes(), "tensor 'w' element count overflows");
    GgufBytes bytes;
    bytes.header(1, 0).tensor("w", {uint64_t{1} << 62, 2}, kF32, 0).padTo(32);
    expectError(bytes.bytes(), "tensor 'w' byte size overflows");
}

TEST(GgufCorrupt, NestedArrayDepthBomb) {
    GgufBytes b;
    b.header(0, 1).str("bomb").u32(kTypeArray);
    for (int i = 0; i < 100000; ++i) b.u32(kTypeArray).u64(1);
    b.u32(kTypeU8).u64(0);
    expectError(b.bytes(), "metadata key 'bomb': array nesting deeper than");
}

TEST(GgufCorrupt, UnknownMetadataValueType) {
    for (uint32_t type : {13u, 0xFFFFFFFFu}) {
        GgufBytes b;
        b.header(0, 1).str("k").u32(type).zeros(16);
        expectError(b.bytes(), "metadata key 'k' has unknown value type " + std::to_string(type));
    }
    GgufBytes element;
    element.header(0, 1).str("k").u32(kTypeArray).u32(13).u64(1).zeros(16);
    expectError(element.bytes(), "metadata key 'k': unknown array element value type 13");
}

TEST(GgufCorrupt, MissingFile) {
    const std::string path = tempPath("does_not_exist.gguf");
    try {
        GgufFile::open(path);
        FAIL() << "opened a missing file";
    } catch (const GgufError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(path + ": cannot open", 0), 0u) << e.what();
    }
}

TEST(GgufCorrupt, EmptyFile) {
    expectError({}, "empty file");
    const std::string path = tempPath("empty.gguf");
    std::ofstream(path).close();
    try {
        GgufFile::open(path);
        ADD_FAILURE() << "opened an empty file";
    } catch (const GgufError& e) {
        EXPECT_EQ(std::string(e.what()), path + ": empty file: not a GGUF file");
    }
    fs::remove(path);
}

TEST(GgufCorrupt, OpenPrefixesMessagesWithPath) {
    const std::string path = tempPath("truncated.gguf");
    std::vector<uint8_t> bytes = validFile();
    bytes.resize(bytes.size() - 10);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    try {
        GgufFile::open(path);
        ADD_FAILURE() << "opened a truncated file";
    } catch (const GgufError& e) {
        EXPECT_EQ(std::string(e.what()).rfind(path + ": tensor 'b' data [", 0), 0u) << e.what();
    }
    fs::remove(path);
    EXPECT_THROW(GgufFile::open(fs::temp_directory_path().string()), GgufError);
}

} // namespace
} // namespace mb::engine
