// What the running CPU supports, for runtime dispatch of SIMD kernels.
#pragma once

#include <string>

namespace mb::kernels {

struct CpuFeatures {
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool avx512f = false;
    bool avx512bw = false;
    bool avx512vl = false;
    bool avx512vnni = false; // vpdpbusd on 128/256/512-bit registers (EVEX)
    bool avxvnni = false;    // the VEX (256-bit) vpdpbusd; informational
    bool amd = false;        // CPUID vendor "AuthenticAMD": where tile shapes were measured per vendor

    // The AVX2 kernels need all three.
    bool hasAvx2Set() const { return avx2 && fma && f16c; }
    // The AVX-512 kernels (kernels/cpu/gemm_avx512.cpp) need the AVX2 set, F, BW, VL and VNNI.
    bool hasAvx512Set() const { return hasAvx2Set() && avx512f && avx512bw && avx512vl && avx512vnni; }
    std::string describe() const; // e.g. "avx2 fma f16c"
};

// Detected once. The environment variable MODEBENCH_CPU chooses a slower table for
// comparisons and debugging: "portable" hides every SIMD feature, "avx2" hides AVX-512
// (and VNNI); anything else (or unset) keeps what the CPU reports.
const CpuFeatures& cpuFeatures();

} // namespace mb::kernels
