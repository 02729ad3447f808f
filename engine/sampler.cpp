// Greedy and filtered stochastic sampling.
#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_set>

namespace mb::engine {

std::string SamplerParams::validate() const {
    if (!(temperature >= 0.0f) || !std::isfinite(temperature)) return "temperature must be a finite number >= 0";
    if (topK < 0) return "top-k must be >= 0";
    if (!(topP > 0.0f && topP <= 1.0f)) return "top-p must be in (0, 1]";
    if (!(minP >= 0.0f && minP <= 1.0f)) return "min-p must be in [0, 1]";
    if (!(repeatPenalty > 0.0f) || !std::isfinite(repeatPenalty)) return "repetition penalty must be > 0";
    if (repeatLastN < 0) return "repeat-last-n must be >= 0";
    return {};
}

int32_t argmax(std::span<const float> logits) {
    // Two passes the compiler vectorises (a running index per element does not): the largest
    // value over 16 lanes, then the first index holding it. NaNs are never the largest.
    const size_t n = logits.size();
    constexpr size_t kLanes = 16;
    float lanes[kLanes];
    std::fill(lanes, lanes + kLanes, -std::numeric_limits<float>::infinity());
    size_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (size_t j = 0; j < kLanes; ++j) lanes[j] = lanes[j] < logits[i + j] ? logits[i + j] : lanes[j];
    float best = -std::numeric_limits<float>::infinity();
    for (float v : lanes) best = best < v ? v : best;
    for (; i < n; ++i) best = best < logits[i] ? logits[i] : best;
    for (size_t k = 0; k < n; ++k)
        if (logits[k] == best) return static_cast<int32_t>(k);
    return 0; // empty, or nothing but NaN
}

Sampler::Sampler(SamplerParams params) : m_params(params), m_state(params.seed) {}

double Sampler::nextUniform() {
    // splitmix64: tiny, fast, and the same sequence everywhere for a seed.
    uint64_t z = (m_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> recent) {
    const bool penalise = m_params.repeatPenalty != 1.0f && m_params.repeatLastN > 0 && !recent.empty();
    if (m_params.temperature == 0.0f && !penalise) return argmax(logits);

    m_candidates.resize(logits.size());
    for (size_t i = 0; i < logits.size(); ++i) m_candidates[i] = {static_cast<int32_t>(i), logits[i], 0.0f};
    if (penalise) {
        const size_t from = recent.size() > static_cast<size_t>(m_params.repeatLastN)
                                ? recent.size() - static_cast<size_t>(m_params.repeatLastN)
                                : 0;
        std::unordered_set<int32_t> seen(recent.begin() + static_cast<std::ptrdiff_t>(from), recent.end());
        for (int32_t id : seen) {
            if (id < 0 || static_cast<size_t>(id) >= m_candidates.size()) continue;
            float& l = m_candidates[static_cast<size_t>(id)].logit;
            l = l > 0.0f ? l / m_params.repeatPenalty : l * m_params.repeatPenalty;
        }
    }
    if (m_params.temperature == 0.0f) {
        // Greedy on the penalised logits; candidates are in id order, so ties keep the first.
        size_t best = 0;
        for (size_t i = 1; i < m_candidates.size(); ++i)
            if (m_candidates[i].logit > m_candidates[best].logit) best = i;
        return m_candidates[best].id;
    }

    // Sort by logit descending (stable on ids for determinism), keeping only top-k.
    auto byLogit = [](const Candidate& a, const Candidate& b) {
        return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
    };
    size_t keep = m_candidates.size();
    if (m_params.topK > 0 && static_cast<size_t>(m_params.topK) < keep) {
        keep = static_cast<size_t>(m_params.topK);
        std::partial_sort(m_candidates.begin(), m_candidates.begin() + static_cast<std::ptrdiff_t>(keep),
                          m_candidates.end(), byLogit);
    } else {
        std::sort(m_candidates.begin(), m_candidates.end(), byLogit);
    }
    m_candidates.resize(keep);

    // Softmax with temperature.
    const float maxLogit = m_candidates.front().logit;
    double sum = 0.0;
    for (auto& c : m_candidates) {
        c.p = std::exp((c.logit - maxLogit) / m_params.temperature);
        sum += c.p;
    }
    for (auto& c : m_candidates) c.p = static_cast<float>(c.p / sum);

    // Top-p: the smallest prefix whose mass reaches topP (at least one token).
    if (m_params.topP < 1.0f) {
        double mass = 0.0;
        size_t n = 0;
        while (n < m_candidates.size()) {
            mass += m_candidates[n].p;
            ++n;
            if (mass >= m_params.topP) break;
        }
        m_candidates.resize(std::max<size_t>(1, n));
    }
    // Min-p: drop tokens below minP times the most likely one.
    if (m_params.minP > 0.0f) {
        const float floor = m_params.minP * m_candidates.front().p;
        size_t n = 1;
        while (n < m_candidates.size() && m_candidates[n].p >= floor) ++n;
        m_candidates.resize(n);
    }

    double total = 0.0;
    for (const auto& c : m_candidates) total += c.p;
    double r = nextUniform() * total;
    for (const auto& c : m_candidates) {
        r -= c.p;
        if (r < 0.0) return c.id;
    }
    return m_candidates.back().id;
}

} // namespace mb::engine
