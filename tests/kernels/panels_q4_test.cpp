// Q4_0 panels: the layout (packPanelsQ4_0) and every table's vpdpbusd outer-product product over it
// (gemmPanelsQ4_0), bit for bit against the chain it promises, and matmul over them.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/panels.h"
#include "kernels/cpu/quant.h"
#include "panels_test_util.h"
#include "vec_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

using namespace mb::kernels;
using mb::kernels::test::bytesOf;
using mb::kernels::test::Prepared;
using mb::kernels::test::prepared;
using mb::kernels::test::randomFloats;
using mb::kernels::test::randomRows;
using mb::kernels::test::sameBits;
using mb::kernels::test::tablesWith;

namespace {

std::vector<BlockQ4_0> weights(int64_t rows, int64_t nb, uint32_t seed) {
    return randomRows<BlockQ4_0>(rows, nb, seed, quantizeRowQ4_0);
}
std::vector<BlockQ8_0> activations(int64_t tokens, int64_t nb, uint32_t seed) {
    return randomRows<BlockQ8_0>(tokens, nb, seed, quantizeRowQ8_0);
}

int q4(const BlockQ4_0& b, int i) { return i < 16 ? (b.qs[i] & 0x0F) : (b.qs[i - 16] >> 4); }

// What gemmPanelsQ4_0 promises bit for bit: the block chains of (q - 8) * x.
std::vector<float> blockChains(const std::vector<BlockQ4_0>& w, const std::vector<BlockQ8_0>& x, int64_t rows,
                               int64_t nb, int64_t tokens) {
    return mb::kernels::test::blockChains(w, x, rows, nb, tokens, [](const BlockQ4_0& b, int i) { return q4(b, i) - 8; });
}

PanelMemory panelsOf(const std::vector<BlockQ4_0>& w, int64_t rows, int64_t nb) {
    PanelMemory m = allocatePanelMemory(panelsQ4_0Bytes(rows, nb));
    packPanelsQ4_0(w.data(), rows, nb, reinterpret_cast<uint8_t*>(m.get()));
    return m;
}

} // namespace

TEST(PanelsQ4, TheRowsOwnBytesInGroupsOfFourThenTheF16Scales) {
    const int64_t rows = 19, nb = 3;
    const auto w = weights(rows, nb, 1);
    // The rows' own size (288 bytes per 16 rows and block), each panel padded to 64 bytes.
    ASSERT_EQ(panelsQ4_0Bytes(rows, nb), static_cast<size_t>(2 * q4PanelStride(nb)));
    EXPECT_EQ(q4PanelStride(3), 896); // 3 x 288 = 864, rounded up to 64
    EXPECT_EQ(static_cast<size_t>(kQ4PanelBlockBytes), 16 * sizeof(BlockQ4_0));
    EXPECT_EQ(panelsQ4_0Bytes(0, nb), 0u);
    EXPECT_EQ(panelsQ4_0Bytes(rows, 0), 0u);
    const PanelMemory m = panelsOf(w, rows, nb);
    for (int64_t p = 0; p < 2; ++p) {
        const uint8_t* panel = bytesOf(m) + p * q4PanelStride(nb);
        for (int64_t b = 0; b < nb; ++b)
            for (int64_t lane = 0; lane < 16; ++lane) {
                const int64_t r = p * 16 + lane;
                const BlockQ4_0* src = r < rows ? &w[static_cast<size_t>(r * nb + b)] : nullptr;
                for (int64_t i = 0; i < 16; ++i)
                    ASSERT_EQ(panel[b * kQ4PanelQuantBytes + (i / 4) * 64 + lane * 4 + i % 4], src ? src->qs[i] : 0)
                        << "row " << r << " byte " << i;
                uint16_t d = 0;
                std::memcpy(&d, panel + nb * kQ4PanelQuantBytes + (b * 16 + lane) * 2, 2);
                EXPECT_EQ(d, src ? src->d : 0);
            }
    }
}

TEST(VecPanelsQ4, EveryOutputChainsTheExactBlockSumsInOrder) {
    const auto kernels = tablesWith(&VecKernels::gemmPanelsQ4_0);
    if (kernels.empty()) GTEST_SKIP() << "no kernel table on this CPU multiplies Q4_0 panels (AVX-512 VNNI only)";
    auto check = [](const VecKernels* k, int64_t rows, int64_t nb, int64_t tokens, bool extreme = false) {
        auto w = weights(rows, nb, 2);
        auto x = activations(tokens, nb, 3);
        if (extreme) { // nibbles 0 and 15, activations -128 and 127: the sums' extremes
            for (size_t i = 0; i < w.size(); ++i) std::memset(w[i].qs, i % 2 ? 0xFF : 0x00, 16);
            for (size_t i = 0; i < x.size(); ++i)
                for (int j = 0; j < 32; ++j) x[i].qs[j] = static_cast<int8_t>(i % 2 ? 127 : -128);
        }
        const PanelMemory m = panelsOf(w, rows, nb);
        std::vector<float> y(static_cast<size_t>(rows * tokens), std::numeric_limits<float>::quiet_NaN());
        const Prepared px = prepared(x, tokens, nb);
        k->gemmPanelsQ4_0(bytesOf(m), nb, 0, rows, x.data(), nb, px.bias.data(), px.scale.data(), tokens, y.data(),
                          rows);
        const auto want = blockChains(w, x, rows, nb, tokens);
        for (size_t i = 0; i < y.size(); ++i)
            ASSERT_TRUE(sameBits(y[i], want[i])) << k->name << " rows=" << rows << " nb=" << nb << " tokens=" << tokens
                                                 << " output " << i << ": " << y[i] << " vs " << want[i];
    };
    for (const VecKernels* k : kernels) {
        for (int64_t rows : {1, 15, 16, 17, 49, 130})
            for (int64_t nb : {1, 2, 9})
                for (int64_t tokens : {1, 2, 3, 4, 5, 6, 7, 13}) check(k, rows, nb, tokens);
        check(k, 37, 256, 70);
        check(k, 33, 5, 7, /*extreme=*/true);
    }
}

TEST(VecPanelsQ4, ARowRangeWritesOnlyItsRowsAndTheLastStoreStaysInside) {
    const auto kernels = tablesWith(&VecKernels::gemmPanelsQ4_0);
    if (kernels.empty()) GTEST_SKIP() << "no kernel table on this CPU multiplies Q4_0 panels (AVX-512 VNNI only)";
    const int64_t rows = 70, nb = 3, tokens = 10;
    const auto w = weights(rows, nb, 4);
    const auto x = activations(tokens, nb, 5);
    const PanelMemory m = panelsOf(w, rows, nb);
    const Prepared px = prepared(x, tokens, nb);
    const mb::kernels::test::GuardPage guard;
    float* end = guard.end();
    for (const VecKernels* k : kernels) {
        std::vector<float> whole(static_cast<size_t>(rows * tokens));
        k->gemmPanelsQ4_0(bytesOf(m), nb, 0, rows, x.data(), nb, px.bias.data(), px.scale.data(), tokens,
                          whole.data(), rows);
        for (auto [r0, r1] : {std::pair<int64_t, int64_t>{5, 37}, {16, 32}, {33, 34}, {60, 70}, {0, 1}}) {
            std::vector<float> y(whole.size(), -7.0f);
            k->gemmPanelsQ4_0(bytesOf(m), nb, r0, r1, x.data(), nb, px.bias.data(), px.scale.data(), tokens,
                              y.data(), rows);
            for (int64_t t = 0; t < tokens; ++t)
                for (int64_t r = 0; r < rows; ++r) {
                    const size_t i = static_cast<size_t>(t * rows + r);
                    if (r >= r0 && r < r1) ASSERT_TRUE(sameBits(y[i], whole[i])) << k->name << " row " << r;
                    else ASSERT_EQ(y[i], -7.0f) << k->name << " range [" << r0 << ", " << r1 << ") wrote row " << r;
                }
        }
        k->gemmPanelsQ4_0(bytesOf(m), nb, 0, rows, x.data(), nb, px.bias.data(), px.scale.data(), 1, end - rows,
                          rows);
        for (int64_t r = 0; r < rows; ++r) EXPECT_TRUE(sameBits(end[r - rows], whole[static_cast<size_t>(r)]));
    }
}

TEST(Matmul, Q4PanelsGiveTheSameBitsForAnyThreadsAndBatchAndMatchTheRows) {
    if (!vecKernels().gemmPanelsQ4_0) GTEST_SKIP() << "the chosen kernel table does not multiply Q4_0 panels";
    const int64_t rows = 333, nb = 4, cols = nb * 32, n = 11;
    const auto wb = weights(rows, nb, 6);
    const auto x = randomFloats(static_cast<size_t>(n * cols), 7);
    const PanelMemory m = panelsOf(wb, rows, nb);
    WeightMatrix w{TensorType::Q4_0, rows, cols, wb.data()};
    w.panels = m.get();
    mb::kernels::test::expectPanelMatmulInvariant(w, x, n);
}
