// Filling the RoPE table once per session.
#include "engine/rope_table.h"

#include "kernels/cpu/ops.h"

namespace mb::engine {

RopeTable::RopeTable(const ModelConfig& config, int64_t positions)
    : m_positions(positions), m_half(config.ropeDim / 2) {
    m_cos.resize(static_cast<size_t>(positions * m_half));
    m_sin.resize(m_cos.size());
    for (int64_t p = 0; p < positions; ++p)
        kernels::ropeAngles(p, config.ropeDim, config.ropeBase, m_cos.data() + p * m_half, m_sin.data() + p * m_half,
                            config.ropePosScale,
                            config.ropeFreqFactors.empty() ? nullptr : config.ropeFreqFactors.data());
}

} // namespace mb::engine
