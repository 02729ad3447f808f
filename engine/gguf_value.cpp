// GgufValue: factories and checked accessors for GGUF metadata values.
#include "engine/gguf.h"

#include <limits>

namespace mb::engine {

namespace {

GgufValue makeValue(GgufValueType type, decltype(GgufValue::data) data) {
    GgufValue v;
    v.type = type;
    v.data = std::move(data);
    return v;
}

[[noreturn]] void mismatch(const GgufValue& v, std::string_view wanted) {
    throw GgufError("metadata value is " + std::string(ggufValueTypeName(v.type)) + ", not " +
                    std::string(wanted));
}

// The stored integer as a signed 128-bit-free pair: (negative?, magnitude).
struct IntParts {
    bool negative;
    uint64_t magnitude;
};

IntParts intParts(const GgufValue& v) {
    if (v.type == GgufValueType::Bool) {
        if (const bool* b = std::get_if<bool>(&v.data)) return {false, *b ? 1u : 0u};
    } else if (v.isInteger()) {
        if (const uint64_t* u = std::get_if<uint64_t>(&v.data)) return {false, *u};
        if (const int64_t* i = std::get_if<int64_t>(&v.data)) {
            if (*i >= 0) return {false, static_cast<uint64_t>(*i)};
            // Negate in unsigned arithmetic so INT64_MIN does not overflow.
            return {true, 0 - static_cast<uint64_t>(*i)};
        }
    }
    mismatch(v, "an integer");
}

} // namespace

std::string_view ggufValueTypeName(GgufValueType t) {
    switch (t) {
    case GgufValueType::U8: return "u8";
    case GgufValueType::I8: return "i8";
    case GgufValueType::U16: return "u16";
    case GgufValueType::I16: return "i16";
    case GgufValueType::U32: return "u32";
    case GgufValueType::I32: return "i32";
    case GgufValueType::F32: return "f32";
    case GgufValueType::Bool: return "bool";
    case GgufValueType::String: return "string";
    case GgufValueType::Array: return "array";
    case GgufValueType::U64: return "u64";
    case GgufValueType::I64: return "i64";
    case GgufValueType::F64: return "f64";
    }
    return "unknown";
}

GgufValue GgufValue::u8(uint8_t v) {
    return makeValue(GgufValueType::U8, uint64_t{v});
}
GgufValue GgufValue::i8(int8_t v) {
    return makeValue(GgufValueType::I8, int64_t{v});
}
GgufValue GgufValue::u16(uint16_t v) {
    return makeValue(GgufValueType::U16, uint64_t{v});
}
GgufValue GgufValue::i16(int16_t v) {
    return makeValue(GgufValueType::I16, int64_t{v});
}
GgufValue GgufValue::u32(uint32_t v) {
    return makeValue(GgufValueType::U32, uint64_t{v});
}
GgufValue GgufValue::i32(int32_t v) {
    return makeValue(GgufValueType::I32, int64_t{v});
}
GgufValue GgufValue::u64(uint64_t v) {
    return makeValue(GgufValueType::U64, v);
}
GgufValue GgufValue::i64(int64_t v) {
    return makeValue(GgufValueType::I64, v);
}
GgufValue GgufValue::f32(float v) {
    return makeValue(GgufValueType::F32, double{v});
}
GgufValue GgufValue::f64(double v) {
    return makeValue(GgufValueType::F64, v);
}
GgufValue GgufValue::boolean(bool v) {
    return makeValue(GgufValueType::Bool, v);
}
GgufValue GgufValue::string(std::string v) {
    return makeValue(GgufValueType::String, std::move(v));
}

GgufValue GgufValue::array(GgufValueType elementType, Array items) {
    for (const GgufValue& item : items) {
        if (item.type != elementType)
            throw GgufError("array of " + std::string(ggufValueTypeName(elementType)) +
                            " given an element of type " +
                            std::string(ggufValueTypeName(item.type)));
    }
    GgufValue v = makeValue(GgufValueType::Array, std::move(items));
    v.elementType = elementType;
    return v;
}

GgufValue GgufValue::stringArray(const std::vector<std::string>& items) {
    Array a;
    a.reserve(items.size());
    for (const std::string& s : items) a.push_back(string(s));
    return array(GgufValueType::String, std::move(a));
}

GgufValue GgufValue::f32Array(const std::vector<float>& items) {
    Array a;
    a.reserve(items.size());
    for (float f : items) a.push_back(f32(f));
    return array(GgufValueType::F32, std::move(a));
}

GgufValue GgufValue::i32Array(const std::vector<int32_t>& items) {
    Array a;
    a.reserve(items.size());
    for (int32_t i : items) a.push_back(i32(i));
    return array(GgufValueType::I32, std::move(a));
}

bool GgufValue::isInteger() const {
    switch (type) {
    case GgufValueType::U8:
    case GgufValueType::I8:
    case GgufValueType::U16:
    case GgufValueType::I16:
    case GgufValueType::U32:
    case GgufValueType::I32:
    case GgufValueType::U64:
    case GgufValueType::I64: return true;
    default: return false;
    }
}

bool GgufValue::isFloat() const {
    return type == GgufValueType::F32 || type == GgufValueType::F64;
}

uint64_t GgufValue::asUInt() const {
    IntParts p = intParts(*this);
    if (p.negative)
        throw GgufError("metadata value -" + std::to_string(p.magnitude) +
                        " is negative, expected an unsigned integer");
    return p.magnitude;
}

int64_t GgufValue::asInt() const {
    IntParts p = intParts(*this);
    constexpr uint64_t kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    // Negative values came from an int64_t, so converting back is exact (C++20 modular).
    if (p.negative) return static_cast<int64_t>(0 - p.magnitude);
    if (p.magnitude > kMax)
        throw GgufError("metadata value " + std::to_string(p.magnitude) +
                        " does not fit a 64-bit signed integer");
    return static_cast<int64_t>(p.magnitude);
}

double GgufValue::asFloat() const {
    if (isFloat()) {
        if (const double* d = std::get_if<double>(&data)) return *d;
        mismatch(*this, "a float");
    }
    if (isInteger()) {
        IntParts p = intParts(*this);
        double m = static_cast<double>(p.magnitude);
        return p.negative ? -m : m;
    }
    mismatch(*this, "a number");
}

bool GgufValue::asBool() const {
    if (type == GgufValueType::Bool) {
        if (const bool* b = std::get_if<bool>(&data)) return *b;
    } else if (isInteger()) {
        return intParts(*this).magnitude != 0;
    }
    mismatch(*this, "a bool");
}

const std::string& GgufValue::asString() const {
    if (type == GgufValueType::String) {
        if (const std::string* s = std::get_if<std::string>(&data)) return *s;
    }
    mismatch(*this, "a string");
}

const GgufValue::Array& GgufValue::asArray() const {
    if (type == GgufValueType::Array) {
        if (const Array* a = std::get_if<Array>(&data)) return *a;
    }
    mismatch(*this, "an array");
}

} // namespace mb::engine
