// GGUF model files: a bounds-checked reader over an mmap and a streaming writer.
//
// Format (little endian): magic "GGUF", version u32, tensor count, metadata count,
// metadata key/value pairs, tensor infos, padding to `general.alignment` (default 32),
// then the tensor data section. Version 1 stores counts and string lengths as u32;
// versions 2 and 3 store them as u64. Every read is checked against the file size, so a
// malformed file produces a GgufError with a one-line message, never a crash.
#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace mb::engine {

// Any problem with a GGUF file. what() is one line naming the problem (and the key or
// tensor concerned when there is one).
class GgufError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Metadata value types as stored in the file.
enum class GgufValueType : uint32_t {
    U8 = 0, I8 = 1, U16 = 2, I16 = 3, U32 = 4, I32 = 5, F32 = 6, Bool = 7,
    String = 8, Array = 9, U64 = 10, I64 = 11, F64 = 12,
};

// One metadata value. Integers keep their stored width in `type`; arrays keep their
// element type (arrays may nest). Accessors throw GgufError on a type mismatch.
struct GgufValue {
    using Array = std::vector<GgufValue>;
    GgufValueType type = GgufValueType::U32;
    GgufValueType elementType = GgufValueType::U8; // for arrays only
    std::variant<uint64_t, int64_t, double, bool, std::string, Array> data = uint64_t{0};

    static GgufValue u8(uint8_t v);
    static GgufValue i8(int8_t v);
    static GgufValue u16(uint16_t v);
    static GgufValue i16(int16_t v);
    static GgufValue u32(uint32_t v);
    static GgufValue i32(int32_t v);
    static GgufValue u64(uint64_t v);
    static GgufValue i64(int64_t v);
    static GgufValue f32(float v);
    static GgufValue f64(double v);
    static GgufValue boolean(bool v);
    static GgufValue string(std::string v);
    // Elements must all have type `elementType`.
    static GgufValue array(GgufValueType elementType, Array items);
    static GgufValue stringArray(const std::vector<std::string>& items);
    static GgufValue f32Array(const std::vector<float>& items);
    static GgufValue i32Array(const std::vector<int32_t>& items);

    bool isInteger() const;
    bool isFloat() const;
    // Integer value of any integer type (bools count as 0/1); throws if negative.
    uint64_t asUInt() const;
    int64_t asInt() const;
    // Float or integer value as double.
    double asFloat() const;
    bool asBool() const;
    const std::string& asString() const;
    const Array& asArray() const;

    bool operator==(const GgufValue& o) const = default;
};

std::string_view ggufValueTypeName(GgufValueType t);

// One tensor as described in the file. `shape[0]` is the innermost (row) length, as in
// ggml: a matrix of `rows` x `cols` has shape {cols, rows}.
struct GgufTensorInfo {
    std::string name;
    kernels::TensorType type = kernels::TensorType::F32;
    std::vector<uint64_t> shape;
    uint64_t offset = 0;        // bytes from the start of the data section
    uint64_t bytes = 0;         // bytes of data
    const uint8_t* data = nullptr; // points into the mapping; valid while the GgufFile lives

    uint64_t elements() const;
    uint64_t rows() const { return shape.empty() ? 1 : elements() / shape[0]; }
    uint64_t rowLength() const { return shape.empty() ? 1 : shape[0]; }
};

// A parsed GGUF file. Immutable after open; safe to read from many threads.
// Move-only; owns the mapping (or the caller's buffer must outlive it for fromMemory).
class GgufFile {
public:
    // Maps `path` read-only and parses it. Throws GgufError (message names the path).
    static GgufFile open(const std::string& path);
    // Parses a buffer that the caller keeps alive (used by tests and the fuzzer).
    static GgufFile fromMemory(std::span<const uint8_t> bytes);

    GgufFile(GgufFile&&) noexcept;
    GgufFile& operator=(GgufFile&&) noexcept;
    ~GgufFile();

    uint32_t version() const { return m_version; }
    uint64_t alignment() const { return m_alignment; }
    uint64_t dataOffset() const { return m_dataOffset; } // file offset of the data section
    uint64_t fileSize() const { return m_size; }
    const std::string& path() const { return m_path; }

    // Metadata in file order.
    const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return m_metadata; }
    // nullptr when absent.
    const GgufValue* find(std::string_view key) const;
    // Throws GgufError "missing metadata key 'K'" when absent.
    const GgufValue& get(std::string_view key) const;

    const std::vector<GgufTensorInfo>& tensors() const { return m_tensors; }
    const GgufTensorInfo* findTensor(std::string_view name) const;

private:
    GgufFile() = default;
    void parse();

    struct Mapping;
    std::unique_ptr<Mapping> m_mapping; // null for fromMemory
    const uint8_t* m_base = nullptr;
    uint64_t m_size = 0;
    std::string m_path;
    uint32_t m_version = 0;
    uint64_t m_alignment = 32;
    uint64_t m_dataOffset = 0;
    std::vector<std::pair<std::string, GgufValue>> m_metadata;
    std::vector<GgufTensorInfo> m_tensors;
};

// Writes a GGUF file (version 3 by default) without holding tensor data in memory:
// tensors are declared first with their shape and a producer, and `finish()` writes
// the header and then asks each producer in turn to stream its bytes.
class GgufWriter {
public:
    // Receives the bytes of one tensor; may be called many times per tensor.
    using Sink = std::function<void(const void* data, size_t bytes)>;
    // Must write exactly rowBytes(type, shape[0]) * rows bytes through the sink.
    using Producer = std::function<void(const Sink& sink)>;

    explicit GgufWriter(std::string path, uint32_t version = 3, uint64_t alignment = 32);

    // Replaces an existing key. "general.alignment" is written from the constructor's value.
    void set(const std::string& key, GgufValue value);
    // Throws GgufError on a duplicate name, an empty shape or a row length that is not a
    // multiple of the type's block size.
    void addTensor(const std::string& name, kernels::TensorType type,
                   std::vector<uint64_t> shape, Producer producer);
    // Convenience: a tensor whose bytes are already in memory (the span must outlive finish()).
    void addTensor(const std::string& name, kernels::TensorType type,
                   std::vector<uint64_t> shape, std::span<const uint8_t> bytes);

    // Writes the file to a temporary name and renames it into place, so a failure
    // leaves no half-written file at `path`. Throws GgufError on I/O errors or when a
    // producer writes the wrong number of bytes.
    void finish();

private:
    struct PendingTensor {
        std::string name;
        kernels::TensorType type;
        std::vector<uint64_t> shape;
        uint64_t bytes;
        Producer producer;
    };
    std::string m_path;
    uint32_t m_version;
    uint64_t m_alignment;
    std::vector<std::pair<std::string, GgufValue>> m_metadata;
    std::vector<PendingTensor> m_tensors;
};

} // namespace mb::engine
