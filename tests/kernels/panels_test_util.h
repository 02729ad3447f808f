// Helpers shared by the Q8_0 and Q4_0 panel tests: seeded blocks, the block chains the panel
// kernels promise bit for bit, and prepared activations.
#pragma once

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/panels.h"
#include "kernels/quant_blocks.h"
#include "vec_test_util.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace mb::kernels::test {

// rows x nb blocks quantised from seeded floats (weights, or activations with rows = tokens).
template <class Block>
std::vector<Block> randomRows(int64_t rows, int64_t nb, uint32_t seed, void (*quantize)(const float*, Block*, int64_t)) {
    const int64_t cols = nb * 32;
    const auto f = randomFloats(static_cast<size_t>(rows * cols), seed);
    std::vector<Block> out(static_cast<size_t>(rows * nb));
    for (int64_t r = 0; r < rows; ++r) quantize(f.data() + r * cols, out.data() + r * nb, cols);
    return out;
}

// What the panel kernels promise bit for bit: per output y[t * rows + r], the exact integer sum
// of each block's value(w, i) * x.qs[i], chained as acc = fma(float(sum), dw * dx, acc) over the
// blocks in order.
template <class Block, class Value>
std::vector<float> blockChains(const std::vector<Block>& w, const std::vector<BlockQ8_0>& x, int64_t rows, int64_t nb,
                               int64_t tokens, Value value) {
    std::vector<float> y(static_cast<size_t>(rows * tokens));
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t r = 0; r < rows; ++r) {
            float acc = 0.0f;
            for (int64_t b = 0; b < nb; ++b) {
                const Block& wb = w[static_cast<size_t>(r * nb + b)];
                const BlockQ8_0& xb = x[static_cast<size_t>(t * nb + b)];
                int32_t sum = 0;
                for (int i = 0; i < 32; ++i) sum += value(wb, i) * xb.qs[i];
                acc = std::fma(static_cast<float>(sum), fp16ToFloat(wb.d) * fp16ToFloat(xb.d), acc);
            }
            y[static_cast<size_t>(t * rows + r)] = acc;
        }
    return y;
}

// prepareQ8Panels of tokens x nb activation blocks.
struct Prepared {
    std::vector<int32_t> bias;
    std::vector<float> scale;
};
inline Prepared prepared(const std::vector<BlockQ8_0>& x, int64_t tokens, int64_t nb) {
    Prepared p{std::vector<int32_t>(static_cast<size_t>(tokens * nb)), std::vector<float>(static_cast<size_t>(tokens * nb))};
    prepareQ8Panels(x.data(), nb, tokens, nb, p.bias.data(), p.scale.data());
    return p;
}

inline const uint8_t* bytesOf(const PanelMemory& m) { return reinterpret_cast<const uint8_t*>(m.get()); }

} // namespace mb::kernels::test
