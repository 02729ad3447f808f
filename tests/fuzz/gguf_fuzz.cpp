// libFuzzer harness: any input must parse or throw GgufError, and never read out of bounds.
#include "engine/gguf.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

using mb::engine::GgufValue;

// Folds every byte a consumer could look at into the checksum, so ASan sees each read.
uint64_t touch(const GgufValue& v, uint64_t acc) {
    acc = acc * 31 + static_cast<uint32_t>(v.type);
    switch (v.type) {
    case mb::engine::GgufValueType::String:
        for (char c : v.asString()) acc = acc * 131 + static_cast<unsigned char>(c);
        return acc;
    case mb::engine::GgufValueType::Array:
        for (const GgufValue& item : v.asArray()) acc = touch(item, acc);
        return acc;
    case mb::engine::GgufValueType::Bool: return acc + (v.asBool() ? 1 : 2);
    default: {
        // Every other type is a number; compare bits, since a cast of a huge double is UB.
        double d = v.asFloat();
        uint64_t bits = 0;
        std::memcpy(&bits, &d, sizeof(bits));
        return acc ^ bits;
    }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        auto file = mb::engine::GgufFile::fromMemory({data, size});
        uint64_t acc = file.version() + file.alignment() + file.dataOffset();
        for (const auto& [key, value] : file.metadata()) {
            for (char c : key) acc += static_cast<unsigned char>(c);
            acc = touch(value, acc);
            if (file.find(key) != &value) __builtin_trap(); // keys are unique
        }
        for (const auto& t : file.tensors()) {
            if (t.bytes == 0 || t.data == nullptr) __builtin_trap(); // zero dims are rejected
            acc += t.data[0] + t.data[t.bytes - 1] + t.elements() + t.rows();
            if (file.findTensor(t.name) != &t) __builtin_trap();
        }
        volatile uint64_t sink = acc;
        (void)sink;
    } catch (const mb::engine::GgufError&) {
        // Rejected input: the expected outcome for almost every mutation.
    }
    return 0;
}
