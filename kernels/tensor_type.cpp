// The table of tensor-type facts: one row per type, every other reader asks it.
#include "kernels/tensor_type.h"

#include "kernels/cpu/quant.h"

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace mb::kernels {

namespace {

// The typed Q8_0 and Q4_0 rows (kernels/cpu/quant.h) as the table's untyped functions.
void dequantizeQ8_0(const void* s, float* d, int64_t n) { dequantizeRowQ8_0(static_cast<const BlockQ8_0*>(s), d, n); }
void dequantizeQ4_0(const void* s, float* d, int64_t n) { dequantizeRowQ4_0(static_cast<const BlockQ4_0*>(s), d, n); }
void quantizeQ8_0(const float* s, void* d, int64_t n) { quantizeRowQ8_0(s, static_cast<BlockQ8_0*>(d), n); }
void quantizeQ4_0(const float* s, void* d, int64_t n) { quantizeRowQ4_0(s, static_cast<BlockQ4_0*>(d), n); }

// Rows in id order. File types are llama.cpp's LLAMA_FTYPE_MOSTLY_* of the plain mix (the
// _S/_M/_L mixes of the k-quants have their own ids, see quantize_model.cpp).
constexpr std::array<TensorTypeTraits, 16> kTable{{
    {TensorType::F32, "f32", 1, 4, false, 0, dequantizeRowF32, quantizeRowF32},
    {TensorType::F16, "f16", 1, 2, false, 1, dequantizeRowF16, quantizeRowF16},
    {TensorType::Q4_0, "q4_0", 32, sizeof(BlockQ4_0), true, 2, dequantizeQ4_0, quantizeQ4_0},
    {TensorType::Q4_1, "q4_1", 32, sizeof(BlockQ4_1), true, 3, dequantizeRowQ4_1, quantizeRowQ4_1},
    {TensorType::Q5_0, "q5_0", 32, sizeof(BlockQ5_0), true, 8, dequantizeRowQ5_0, quantizeRowQ5_0},
    {TensorType::Q5_1, "q5_1", 32, sizeof(BlockQ5_1), true, 9, dequantizeRowQ5_1, quantizeRowQ5_1},
    {TensorType::Q8_0, "q8_0", 32, sizeof(BlockQ8_0), true, 7, dequantizeQ8_0, quantizeQ8_0},
    {TensorType::Q2_K, "q2_k", 256, sizeof(BlockQ2_K), true, 10, dequantizeRowQ2_K, quantizeRowQ2_K},
    {TensorType::Q3_K, "q3_k", 256, sizeof(BlockQ3_K), true, 12, dequantizeRowQ3_K, quantizeRowQ3_K},
    {TensorType::Q4_K, "q4_k", 256, sizeof(BlockQ4_K), true, 15, dequantizeRowQ4_K, quantizeRowQ4_K},
    {TensorType::Q5_K, "q5_k", 256, sizeof(BlockQ5_K), true, 17, dequantizeRowQ5_K, quantizeRowQ5_K},
    {TensorType::Q6_K, "q6_k", 256, sizeof(BlockQ6_K), true, 18, dequantizeRowQ6_K, quantizeRowQ6_K},
    {TensorType::Q8_K, "q8_k", 256, sizeof(BlockQ8_K), true, -1, dequantizeRowQ8_K, quantizeRowQ8_K},
    {TensorType::IQ4_NL, "iq4_nl", 32, sizeof(BlockIq4Nl), true, 25, dequantizeRowIq4Nl, quantizeRowIq4Nl},
    {TensorType::IQ4_XS, "iq4_xs", 256, sizeof(BlockIq4Xs), true, 30, dequantizeRowIq4Xs, quantizeRowIq4Xs},
    {TensorType::BF16, "bf16", 1, 2, false, 32, dequantizeRowBF16, quantizeRowBF16},
}};

// Every row's type must be its own enumerator, listed once, in id order.
constexpr bool tableIsOrdered() {
    for (size_t i = 1; i < kTable.size(); ++i)
        if (static_cast<uint32_t>(kTable[i - 1].type) >= static_cast<uint32_t>(kTable[i].type)) return false;
    return true;
}
static_assert(tableIsOrdered(), "kTable must list types once each, in id order");

// kTable's row of each id below kIds (-1: none), so traits() is one load on every w.row(r).
constexpr uint32_t kIds = 64;
constexpr std::array<int8_t, kIds> kRowOfId = [] {
    std::array<int8_t, kIds> rows{};
    rows.fill(-1);
    for (size_t i = 0; i < kTable.size(); ++i) rows[static_cast<uint32_t>(kTable[i].type)] = static_cast<int8_t>(i);
    return rows;
}();

const TensorTypeTraits* find(uint32_t id) { return id < kIds && kRowOfId[id] >= 0 ? &kTable[kRowOfId[id]] : nullptr; }

} // namespace

TensorTypeRange tensorTypeTable() { return {kTable.data(), kTable.size()}; }

const TensorTypeTraits& traits(TensorType t) {
    // Every enumerator has a row (checked by the tests over the enum's values).
    return *find(static_cast<uint32_t>(t));
}

std::optional<TensorType> tensorTypeFromId(uint32_t id) {
    if (const TensorTypeTraits* row = find(id)) return row->type;
    return std::nullopt;
}

std::string_view tensorTypeName(TensorType t) { return traits(t).name; }

std::string_view unsupportedTypeName(uint32_t id) {
    // ggml's other ids (4 and 5 were removed formats; 31-33 were the ARM repacks).
    static constexpr std::pair<uint32_t, std::string_view> kOthers[] = {
        {4, "q4_2 (removed)"}, {5, "q4_3 (removed)"}, {9, "q8_1"},     {16, "iq2_xxs"}, {17, "iq2_xs"},
        {18, "iq3_xxs"},       {19, "iq1_s"},         {21, "iq3_s"},    {22, "iq2_s"},   {24, "i8"},
        {25, "i16"},           {26, "i32"},           {27, "i64"},      {28, "f64"},     {29, "iq1_m"},
        {31, "q4_0_4_4"},      {32, "q4_0_4_8"},      {33, "q4_0_8_8"}, {34, "tq1_0"},   {35, "tq2_0"}};
    for (const auto& [other, name] : kOthers)
        if (other == id) return name;
    return {};
}

std::optional<TensorType> tensorTypeFromName(std::string_view name) {
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& row : kTable)
        if (row.name == lower) return row.type;
    return std::nullopt;
}

} // namespace mb::kernels
