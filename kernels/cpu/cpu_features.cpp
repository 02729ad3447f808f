// Runtime CPU feature detection.
#include "kernels/cpu/cpu_features.h"

#include <cstdlib>
#include <string_view>

namespace mb::kernels {

namespace {
CpuFeatures detect() {
    CpuFeatures f;
    const char* force = std::getenv("MODEBENCH_CPU");
    if (force && std::string_view(force) == "portable") return f;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    f.avx2 = __builtin_cpu_supports("avx2");
    f.fma = __builtin_cpu_supports("fma");
    f.f16c = __builtin_cpu_supports("f16c");
    f.avx512f = __builtin_cpu_supports("avx512f");
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
    return s.empty() ? "portable" : s;
}

const CpuFeatures& cpuFeatures() {
    static const CpuFeatures features = detect();
    return features;
}

} // namespace mb::kernels
