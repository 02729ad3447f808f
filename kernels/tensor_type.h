// Tensor element types as GGUF/ggml number them: one table of facts (ids, names, block geometry,
// file types, conversions) that every reader of a type asks.
#pragma once

#include "kernels/quant_blocks.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mb::kernels {

// Values are ggml's type ids, as stored in GGUF tensor infos. Only the types with a row in
// tensorTypeTable() are listed; any other id is "unknown" to the reader.
enum class TensorType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ4_NL = 20,
    IQ4_XS = 23,
    BF16 = 30,
};

// One row of the table. `toFloat` dequantises one row of n elements (n a multiple of
// blockSize) exactly as ggml's to_float does, bit for bit; `fromFloat` quantises one row
// (nullptr where the engine cannot write the type). `fileType` is llama.cpp's
// general.file_type for a file whose weights are mostly this type (-1: none).
struct TensorTypeTraits {
    TensorType type;
    std::string_view name; // lower case, as ggml names it: "q4_k", "iq4_nl"
    int64_t blockSize;     // elements per block (1 for plain floats)
    size_t blockBytes;     // bytes per block
    bool quantised;        // blocks with scales (everything but F32, F16, BF16)
    int32_t fileType;
    void (*toFloat)(const void* src, float* dst, int64_t n);
    void (*fromFloat)(const float* src, void* dst, int64_t n);
};

// Every type, in id order (a plain range: this header is also read by nvcc in C++17).
struct TensorTypeRange {
    const TensorTypeTraits* first;
    size_t count;
    const TensorTypeTraits* begin() const { return first; }
    const TensorTypeTraits* end() const { return first + count; }
    size_t size() const { return count; }
};
TensorTypeRange tensorTypeTable();
// The row of `t` (every enumerator has one).
const TensorTypeTraits& traits(TensorType t);

// Converts a raw ggml id; nullopt for ids this build does not handle.
std::optional<TensorType> tensorTypeFromId(uint32_t id);

std::string_view tensorTypeName(TensorType t);
// ggml's name of an id this build has no row for ("iq2_xxs", "q8_1", ...), for messages; empty
// for ids ggml does not define either.
std::string_view unsupportedTypeName(uint32_t id);
// Parses the names of the table (also upper case); nullopt if unknown.
std::optional<TensorType> tensorTypeFromName(std::string_view name);

inline int64_t blockSize(TensorType t) { return traits(t).blockSize; }
inline size_t blockBytes(TensorType t) { return traits(t).blockBytes; }
inline bool isQuantised(TensorType t) { return traits(t).quantised; }
// Bytes of one row of `n` elements; precondition n % blockSize(t) == 0.
inline size_t rowBytes(TensorType t, int64_t n) {
    const TensorTypeTraits& x = traits(t);
    return static_cast<size_t>(n / x.blockSize) * x.blockBytes;
}

} // namespace mb::kernels
