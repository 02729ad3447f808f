// Shared by the `gpu` tests: skip without a device, host<->device vectors, and normalised MSE.
#pragma once

#include "kernels/cuda/device_buffer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

// Skips the test, saying why, on a machine where the CUDA runtime sees no device (always
// a skip, also under CI: CI machines have the toolkit but no GPU).
#define MB_REQUIRE_GPU()                                                                                   \
    do {                                                                                                  \
        if (::mb::kernels::cuda::deviceCount() == 0)                                                      \
            GTEST_SKIP() << "no CUDA device on this machine: GPU check not run (tests/gpu/device_checks.sh " \
                            "runs it on a GPU machine)";                                                  \
        ::mb::kernels::cuda::setDevice(0);                                                                \
    } while (0)

namespace mb::test {

template <class T>
kernels::cuda::DeviceBuffer toDevice(const std::vector<T>& v) {
    kernels::cuda::DeviceBuffer b(v.size() * sizeof(T));
    kernels::cuda::copyToDevice(b.data(), v.data(), v.size() * sizeof(T), nullptr);
    return b;
}

template <class T>
std::vector<T> toHost(const kernels::cuda::DeviceBuffer& b, size_t count) {
    std::vector<T> v(count);
    kernels::cuda::copyToHost(v.data(), b.data(), count * sizeof(T), nullptr);
    return v;
}

// sum (got - want)^2 / sum want^2 (in double); the per-op bounds are in the tests.
template <class A, class B>
double nmse(const std::vector<A>& got, const std::vector<B>& want) {
    EXPECT_EQ(got.size(), want.size());
    double num = 0, den = 0;
    for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
        const double d = static_cast<double>(got[i]) - static_cast<double>(want[i]);
        num += d * d;
        den += static_cast<double>(want[i]) * static_cast<double>(want[i]);
    }
    return den > 0 ? num / den : num;
}

// Deterministic values in [-1, 1) (xorshift), so every run sees the same inputs.
inline std::vector<float> randomFloats(size_t n, uint64_t seed) {
    std::vector<float> v(n);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
    for (auto& x : v) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        x = static_cast<float>(static_cast<double>(s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
    }
    return v;
}

} // namespace mb::test
