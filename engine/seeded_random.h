// The seeded generator synthetic files draw their weights from: splitmix64 and an FNV-1a name hash.
#pragma once

#include <cstdint>
#include <string_view>

namespace mb::engine {

// splitmix64: the next 64 random bits from `state` (advanced).
inline uint64_t splitmix(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Uniform in [-a, a] (standard deviation a / sqrt(3)).
inline float uniformIn(uint64_t& state, double a) {
    const double u = static_cast<double>(splitmix(state) >> 11) * 0x1.0p-53;
    return static_cast<float>((2.0 * u - 1.0) * a);
}

// 64-bit FNV-1a of a tensor name: each tensor's own stream (seed ^ hash).
inline uint64_t fnv1a(std::string_view s) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ull;
    return h;
}

} // namespace mb::engine
