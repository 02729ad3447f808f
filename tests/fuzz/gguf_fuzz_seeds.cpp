// Writes small valid GGUF files (every value type, every tensor type, versions 1-3) as fuzz seeds.
#include "engine/gguf.h"

#include <cstdio>
#include <string>
#include <vector>

namespace {

using mb::engine::GgufValue;
using mb::engine::GgufValueType;
using mb::engine::GgufWriter;
using mb::kernels::TensorType;

void writeSeed(const std::string& path, uint32_t version, uint64_t alignment, bool tensors) {
    GgufWriter w(path, version, alignment);
    w.set("general.architecture", GgufValue::string("llama"));
    w.set("a.u8", GgufValue::u8(1));
    w.set("a.i8", GgufValue::i8(-1));
    w.set("a.u16", GgufValue::u16(2));
    w.set("a.i16", GgufValue::i16(-2));
    w.set("a.u32", GgufValue::u32(3));
    w.set("a.i32", GgufValue::i32(-3));
    w.set("a.u64", GgufValue::u64(4));
    w.set("a.i64", GgufValue::i64(-4));
    w.set("a.f32", GgufValue::f32(0.5f));
    w.set("a.f64", GgufValue::f64(0.25));
    w.set("a.bool", GgufValue::boolean(true));
    w.set("a.strings", GgufValue::stringArray({"<s>", "ab"}));
    w.set("a.nested", GgufValue::array(GgufValueType::Array,
                                       {GgufValue::i32Array({1, 2}), GgufValue::f32Array({})}));
    if (tensors) {
        static const std::vector<uint8_t> kZeros(4 * 34);
        const auto bytes = [](size_t n) { return std::span<const uint8_t>(kZeros.data(), n); };
        w.addTensor("f32", TensorType::F32, {3}, bytes(12));
        w.addTensor("f16", TensorType::F16, {2, 2}, bytes(8));
        w.addTensor("bf16", TensorType::BF16, {1, 1, 3}, bytes(6));
        w.addTensor("q8_0", TensorType::Q8_0, {32, 2}, bytes(68));
        w.addTensor("q4_0", TensorType::Q4_0, {64, 1, 1, 1}, bytes(36));
    }
    w.finish();
}

} // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
        return 2;
    }
    const std::string dir = argv[1];
    try {
        for (uint32_t version : {1u, 2u, 3u})
            writeSeed(dir + "/seed_v" + std::to_string(version) + ".gguf", version, 32, true);
        writeSeed(dir + "/seed_align8.gguf", 3, 8, true);
        writeSeed(dir + "/seed_no_tensors.gguf", 3, 32, false);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
