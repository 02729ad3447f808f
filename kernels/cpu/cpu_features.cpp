// Runtime CPU feature detection.
#include "kernels/cpu/cpu_features.h"

#include <cstdlib>
#include <string_view>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace mb::kernels {

namespace {
CpuFeatures detect() {
    CpuFeatures f;
    const char* force = std::getenv("MODEBENCH_CPU");
    if (force && std::string_view(force) == "portable") return f;
    const bool noAvx512 = force && std::string_view(force) == "avx2";
#if defined(__x86_64__) || defined(__i386__)
    // CPUID directly: clang 14's __builtin_cpu_supports does not know "f16c".
    unsigned a = 0, b = 0, c = 0, d = 0;
    // Vendor string in EBX, EDX, ECX: "Auth" "enti" "cAMD" (little-endian).
    if (__get_cpuid(0, &a, &b, &c, &d)) f.amd = b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const bool osxsave = c & (1u << 27);
    const bool avx = c & (1u << 28);
    f.fma = c & (1u << 12);
    f.f16c = c & (1u << 29);
    // The OS must save the YMM (and for AVX-512 the ZMM) registers on context switches.
    unsigned xcr0 = 0;
    if (osxsave) {
        unsigned hi = 0;
        __asm__("xgetbv" : "=a"(xcr0), "=d"(hi) : "c"(0));
    }
    const bool ymm = avx && (xcr0 & 0x6u) == 0x6u;
    const bool zmm = ymm && (xcr0 & 0xe0u) == 0xe0u;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
        f.avx2 = ymm && (b & (1u << 5));
        f.avx512f = zmm && (b & (1u << 16));
        f.avx512bw = f.avx512f && (b & (1u << 30));
        f.avx512vl = f.avx512f && (b & (1u << 31));
        f.avx512vnni = f.avx512f && (c & (1u << 11));
    }
    if (__get_cpuid_count(7, 1, &a, &b, &c, &d)) f.avxvnni = ymm && (a & (1u << 4));
    if (noAvx512) f.avx512f = f.avx512bw = f.avx512vl = f.avx512vnni = f.avxvnni = false;
    f.fma = f.fma && ymm;
    f.f16c = f.f16c && ymm;
#endif
    return f;
}
} // namespace

std::string CpuFeatures::describe() const {
    std::string s;
    auto add = [&](bool on, const char* name) {
        if (!on) return;
        if (!s.empty()) s += ' ';
        s += name;
    };
    add(avx2, "avx2");
    add(fma, "fma");
    add(f16c, "f16c");
    add(avx512f, "avx512f");
    add(avx512bw, "avx512bw");
    add(avx512vl, "avx512vl");
    add(avx512vnni, "avx512vnni");
    add(avxvnni, "avxvnni");
    return s.empty() ? "portable" : s;
}

const CpuFeatures& cpuFeatures() {
    static const CpuFeatures features = detect();
    return features;
}

} // namespace mb::kernels
