// Helpers shared by the quantised panel tests: seeded blocks, the block chains the panel kernels
// promise bit for bit, prepared activations and matmul's invariance over panels.
#pragma once

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/panels.h"
#include "kernels/quant_blocks.h"
#include "vec_test_util.h"

#include <gtest/gtest.h>

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

// matmul over w (its panels set; n tokens of x, activations quantised by matmul itself): on 1 and 4
// threads and token by token the same bits, and within 1e-4 (relative) of the rows' dot products
// (w without its panels: the same integer sums, another float order).
inline void expectPanelMatmulInvariant(const WeightMatrix& w, const std::vector<float>& x, int64_t n) {
    const int64_t rows = w.rows, cols = w.cols;
    ThreadPool p1(1), p4(4);
    MatmulScratch scratch;
    std::vector<float> y1(static_cast<size_t>(n * rows)), y4(y1.size()), one(static_cast<size_t>(rows));
    matmul(w, x.data(), n, y1.data(), p1, scratch);
    matmul(w, x.data(), n, y4.data(), p4, scratch);
    for (size_t i = 0; i < y1.size(); ++i) ASSERT_TRUE(sameBits(y1[i], y4[i])) << "output " << i;
    for (int64_t t = 0; t < n; ++t) {
        matmul(w, x.data() + t * cols, 1, one.data(), p4, scratch);
        for (int64_t r = 0; r < rows; ++r)
            ASSERT_TRUE(sameBits(one[static_cast<size_t>(r)], y1[static_cast<size_t>(t * rows + r)])) << t << " " << r;
    }
    WeightMatrix rowsOnly = w;
    rowsOnly.panels = nullptr;
    std::vector<float> yRows(y1.size());
    matmul(rowsOnly, x.data(), n, yRows.data(), p1, scratch);
    for (size_t i = 0; i < y1.size(); ++i) EXPECT_NEAR(y1[i], yRows[i], 1e-4f * (1.0f + std::fabs(yRows[i])));
}

inline const uint8_t* bytesOf(const PanelMemory& m) { return reinterpret_cast<const uint8_t*>(m.get()); }

} // namespace mb::kernels::test
