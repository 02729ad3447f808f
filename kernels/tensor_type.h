// Tensor element types as GGUF/ggml number them, with their block geometry and byte sizes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mb::kernels {

// Values are ggml's type ids, as stored in GGUF tensor infos. Only the types the
// engine can compute with are listed; any other id is "unknown" to the reader.
enum class TensorType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q8_0 = 8,
    BF16 = 30,
};

// Elements per quantisation block (1 for plain float types).
constexpr int64_t kQ8_0BlockSize = 32;
constexpr int64_t kQ4_0BlockSize = 32;

// Q8_0 block: 32 signed 8-bit values and one F16 scale; value = d * qs[i]. 34 bytes.
struct BlockQ8_0 {
    uint16_t d; // F16 bits
    int8_t qs[kQ8_0BlockSize];
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q4_0 block: 32 4-bit values and one F16 scale; value = d * (q - 8). Element j of the
// block is the low nibble of qs[j] for j < 16 and the high nibble of qs[j - 16] after.
struct BlockQ4_0 {
    uint16_t d; // F16 bits
    uint8_t qs[kQ4_0BlockSize / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// Converts a raw ggml id; nullopt for ids this build does not handle.
std::optional<TensorType> tensorTypeFromId(uint32_t id);

// "f32", "f16", "bf16", "q8_0", "q4_0".
std::string_view tensorTypeName(TensorType t);
// Parses the lower-case names above (also accepts upper case); nullopt if unknown.
std::optional<TensorType> tensorTypeFromName(std::string_view name);

// Elements per block: 1 for F32/F16/BF16, 32 for Q8_0/Q4_0.
int64_t blockSize(TensorType t);
// Bytes per block: 4, 2, 2, 34, 18.
size_t blockBytes(TensorType t);
// Bytes of one row of `n` elements; precondition n % blockSize(t) == 0.
size_t rowBytes(TensorType t, int64_t n);

} // namespace mb::kernels
