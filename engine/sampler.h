// Choosing the next token from logits: greedy or seeded stochastic sampling with filters.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mb::engine {

struct SamplerParams {
    float temperature = 0.8f;     // 0 = greedy (argmax, first index on ties)
    int32_t topK = 40;            // 0 = off
    float topP = 0.95f;           // 1 = off
    float minP = 0.05f;           // 0 = off; keeps tokens with p >= minP * p_max
    float repeatPenalty = 1.0f;   // 1 = off; divides positive / multiplies negative logits
    int32_t repeatLastN = 64;     // how many recent tokens the penalty looks at
    uint64_t seed = 0;

    // Empty when valid, else a one-line reason naming the parameter.
    std::string validate() const;
};

// Index of the largest value; the first on ties.
int32_t argmax(std::span<const float> logits);

// The filters run in llama.cpp's usual order: repetition penalty, top-k, temperature
// softmax, top-p, min-p, then a draw from the remaining distribution. A small
// deterministic generator (splitmix64) makes the same seed give the same tokens on every
// platform. One per generation; not thread-safe. Scratch is reused between calls.
class Sampler {
public:
    explicit Sampler(SamplerParams params);

    // `recent`: tokens generated or prompted so far (for the repetition penalty).
    int32_t sample(std::span<const float> logits, std::span<const int32_t> recent);

    const SamplerParams& params() const { return m_params; }

private:
    double nextUniform(); // [0, 1)

    struct Candidate {
        int32_t id;
        float logit;
        float p;
    };
    SamplerParams m_params;
    uint64_t m_state;
    std::vector<Candidate> m_candidates;
};

} // namespace mb::engine
