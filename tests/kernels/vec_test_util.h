// Shared by the vector-kernel tests: seeded inputs and the kernel tables to run them on.
#pragma once

#include "kernels/cpu/vec.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <stdexcept>
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

// Those of them that have an optional kernel (e.g. &VecKernels::gemmPanelsF32).
template <class Fn> std::vector<const VecKernels*> tablesWith(Fn VecKernels::*kernel) {
    std::vector<const VecKernels*> out;
    for (const VecKernels* k : tables())
        if (k->*kernel) out.push_back(k);
    return out;
}

// Two pages, the second unmapped: end() is the first byte past the first, so outputs
// written to end - n .. end show whether a kernel touches anything past them (a fault ends
// the test binary).
class GuardPage {
public:
    GuardPage() {
        const long page = sysconf(_SC_PAGESIZE);
        m_bytes = static_cast<size_t>(2 * page);
        void* base =
            mmap(nullptr, m_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (base == MAP_FAILED) throw std::runtime_error("mmap failed");
        m_base = static_cast<char*>(base);
        if (mprotect(m_base + page, static_cast<size_t>(page), PROT_NONE) != 0)
            throw std::runtime_error("mprotect failed");
        m_end = reinterpret_cast<float*>(m_base + page);
    }
    ~GuardPage() { munmap(m_base, m_bytes); }
    GuardPage(const GuardPage&) = delete;
    GuardPage& operator=(const GuardPage&) = delete;
    float* end() const { return m_end; }

private:
    char* m_base = nullptr;
    size_t m_bytes = 0;
    float* m_end = nullptr;
};

// Bit-for-bit equality (NaN payloads and signed zeros included).
inline bool sameBits(float a, float b) {
    return std::memcmp(&a, &b, sizeof a) == 0;
}

} // namespace mb::kernels::test
