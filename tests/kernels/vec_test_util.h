// Shared by the vector-kernel tests: seeded inputs and the kernel tables to run them on.
#pragma once

#include "kernels/cpu/vec.h"

#include <cstdint>
#include <random>
#include <vector>

namespace mb::kernels::test {

// n floats uniform in [-1, 1), reproducible from the seed.
inline std::vector<float> randomFloats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> x(n);
    for (auto& v : x) v = d(rng);
    return x;
}

// Every kernel table this CPU can run (portable, avx2, avx512 as present).
inline std::vector<const VecKernels*> tables() {
    return availableVecKernels();
}

} // namespace mb::kernels::test
