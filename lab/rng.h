// A small seeded generator (xoshiro256**) whose integer stream is identical on every platform.
#pragma once

#include <cmath>
#include <cstdint>

namespace mb::lab {

// std:: distributions are implementation-defined (libstdc++ and libc++ draw differently
// from the same engine), so workloads draw through this class only. The integer stream is
// bit-exact everywhere; the real-valued draws go through log/sqrt/cos, which agree to the
// last ulp or so, and workload lengths are rounded to integers afterwards.
// Not thread-safe; one per stream. Roughly 1 ns per next().
class Rng {
public:
    explicit Rng(uint64_t seed = 0) {
        // splitmix64 expands the seed so that nearby seeds give unrelated states.
        uint64_t x = seed;
        for (uint64_t& word : m_state) word = splitmix64(x);
    }

    // An independent stream for (seed, stream): workloads draw prompts, warm-ups and
    // arrivals from separate streams so that changing one part does not reshuffle another.
    static Rng stream(uint64_t seed, uint64_t stream) {
        uint64_t x = seed ^ (0xD1B54A32D192ED03ull * (stream + 1));
        return Rng(splitmix64(x));
    }

    static uint64_t splitmix64(uint64_t& x) {
        uint64_t z = (x += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }

    uint64_t next() {
        const uint64_t result = rotl(m_state[1] * 5, 7) * 9;
        const uint64_t t = m_state[1] << 17;
        m_state[2] ^= m_state[0];
        m_state[3] ^= m_state[1];
        m_state[1] ^= m_state[2];
        m_state[0] ^= m_state[3];
        m_state[2] ^= t;
        m_state[3] = rotl(m_state[3], 45);
        return result;
    }

    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    // Uniform integer in [lo, hi) without modulo bias; hi > lo.
    int64_t uniformInt(int64_t lo, int64_t hi) {
        const uint64_t range = static_cast<uint64_t>(hi - lo);
        const uint64_t limit = -range % range; // 2^64 mod range: reject the short tail
        uint64_t x = next();
        while (x < limit) x = next();
        return lo + static_cast<int64_t>(x % range);
    }

    // Standard normal by Box–Muller; the second value of each pair is kept for the next call.
    double normal() {
        if (m_haveSpare) {
            m_haveSpare = false;
            return m_spare;
        }
        const double u1 = 1.0 - uniform(); // (0, 1]: log stays finite
        const double u2 = uniform();
        const double r = std::sqrt(-2.0 * std::log(u1));
        const double theta = 2.0 * kPi * u2;
        m_spare = r * std::sin(theta);
        m_haveSpare = true;
        return r * std::cos(theta);
    }

    // Exponential with the given rate (mean 1/rate); rate > 0.
    double exponential(double rate) { return -std::log(1.0 - uniform()) / rate; }

    // Gamma(shape, scale), mean shape·scale, by Marsaglia–Tsang; shape > 0, scale > 0.
    double gamma(double shape, double scale) {
        if (shape < 1.0) {
            // Boost to shape + 1 and scale back by U^(1/shape) (Marsaglia–Tsang, §6).
            const double u = 1.0 - uniform();
            return gamma(shape + 1.0, scale) * std::pow(u, 1.0 / shape);
        }
        const double d = shape - 1.0 / 3.0;
        const double c = 1.0 / std::sqrt(9.0 * d);
        for (;;) {
            double x, v;
            do {
                x = normal();
                v = 1.0 + c * x;
            } while (v <= 0.0);
            v = v * v * v;
            const double u = 1.0 - uniform();
            if (u < 1.0 - 0.0331 * x * x * x * x) return d * v * scale;
            if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v * scale;
        }
    }

private:
    static constexpr double kPi = 3.14159265358979323846;
    static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

    uint64_t m_state[4];
    double m_spare = 0;
    bool m_haveSpare = false;
};

} // namespace mb::lab
