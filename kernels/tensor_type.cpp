// Block geometry and names of the tensor element types.
#include "kernels/tensor_type.h"

#include <cctype>
#include <string>

namespace mb::kernels {

std::optional<TensorType> tensorTypeFromId(uint32_t id) {
    switch (id) {
    case 0: return TensorType::F32;
    case 1: return TensorType::F16;
    case 2: return TensorType::Q4_0;
    case 8: return TensorType::Q8_0;
    case 30: return TensorType::BF16;
    default: return std::nullopt;
    }
}

std::string_view tensorTypeName(TensorType t) {
    switch (t) {
    case TensorType::F32: return "f32";
    case TensorType::F16: return "f16";
    case TensorType::Q4_0: return "q4_0";
    case TensorType::Q8_0: return "q8_0";
    case TensorType::BF16: return "bf16";
    }
    return "?";
}

std::optional<TensorType> tensorTypeFromName(std::string_view name) {
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (auto t : {TensorType::F32, TensorType::F16, TensorType::Q4_0, TensorType::Q8_0,
                   TensorType::BF16})
        if (tensorTypeName(t) == lower) return t;
    return std::nullopt;
}

int64_t blockSize(TensorType t) {
    switch (t) {
    case TensorType::Q8_0: return kQ8_0BlockSize;
    case TensorType::Q4_0: return kQ4_0BlockSize;
    default: return 1;
    }
}

size_t blockBytes(TensorType t) {
    switch (t) {
    case TensorType::F32: return 4;
    case TensorType::F16: return 2;
    case TensorType::BF16: return 2;
    case TensorType::Q8_0: return sizeof(BlockQ8_0);
    case TensorType::Q4_0: return sizeof(BlockQ4_0);
    }
    return 0;
}

size_t rowBytes(TensorType t, int64_t n) {
    return static_cast<size_t>(n / blockSize(t)) * blockBytes(t);
}

} // namespace mb::kernels
