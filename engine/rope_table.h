// Precomputed RoPE cos/sin for positions [0, positions): the fast profile's precomputation.
#pragma once

#include "engine/model_config.h"

#include <cstdint>
#include <vector>

namespace mb::engine {

// (positions, ropeDim/2) cos and sin values, computed with kernels::ropeAngles so that a
// table lookup gives bit-identical angles to computing them per token. Immutable.
class RopeTable {
public:
    RopeTable(const ModelConfig& config, int64_t positions);
    int64_t positions() const { return m_positions; }
    const float* cos(int64_t pos) const { return m_cos.data() + pos * m_half; }
    const float* sin(int64_t pos) const { return m_sin.data() + pos * m_half; }
    uint64_t bytes() const { return (m_cos.size() + m_sin.size()) * sizeof(float); }

private:
    int64_t m_positions;
    int64_t m_half;
    std::vector<float> m_cos, m_sin;
};

} // namespace mb::engine
