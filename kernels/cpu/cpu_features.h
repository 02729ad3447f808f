// What the running CPU supports, for runtime dispatch of SIMD kernels.
#pragma once

#include <string>

namespace mb::kernels {

struct CpuFeatures {
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool avx512f = false;

    // The AVX2 kernels need all three.
    bool hasAvx2Set() const { return avx2 && fma && f16c; }
    std::string describe() const; // e.g. "avx2 fma f16c"
};

// Detected once. Setting the environment variable MODEBENCH_CPU=portable hides every
// SIMD feature, so the portable kernels run (for comparisons and debugging).
const CpuFeatures& cpuFeatures();

} // namespace mb::kernels
