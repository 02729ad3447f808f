// Q8_0 panels: the layout (packPanelsQ8_0) and every table's vpdpbusd outer-product product over it
// (gemmPanelsQ8_0).
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

std::vector<BlockQ8_0> randomBlocks(int64_t rows, int64_t nb, uint32_t seed) {
    return randomRows<BlockQ8_0>(rows, nb, seed, quantizeRowQ8_0);
}

// What gemmPanelsQ8_0 promises bit for bit: the block chains of w * x.
std::vector<float> blockChains(const std::vector<BlockQ8_0>& w, const std::vector<BlockQ8_0>& x, int64_t rows,
                               int64_t nb, int64_t tokens) {
    return mb::kernels::test::blockChains(w, x, rows, nb, tokens, [](const BlockQ8_0& b, int i) { return int{b.qs[i]}; });
}

// Blocks at the ends of the range: every q = lowest or +127 (alternating by block, a sign
// pattern by element), so the integer sums reach their extremes. Weights take -128, which
// quantizeRowQ8_0 never writes but a file may hold; activations -127, the least that
// quantizeRowQ8_0 writes (the AVX2 kernel's vpsignb could not negate -128).
void makeExtreme(std::vector<BlockQ8_0>& blocks, int lowest) {
    for (size_t i = 0; i < blocks.size(); ++i)
        for (int j = 0; j < static_cast<int>(kQ8_0BlockSize); ++j)
            blocks[i].qs[j] = static_cast<int8_t>(i % 2 == 0 ? lowest : (j % 3 == 0 ? lowest : 127));
}

PanelMemory panelsOf(const std::vector<BlockQ8_0>& w, int64_t rows, int64_t nb) {
    PanelMemory m = allocatePanelMemory(panelsQ8_0Bytes(rows, nb));
    packPanelsQ8_0(w.data(), rows, nb, reinterpret_cast<uint8_t*>(m.get()));
    return m;
}

} // namespace

TEST(PanelsQ8, GroupsHoldFourBytesOfSixteenRowsBiasedThenTheF16Scales) {
    const int64_t rows = 19, nb = 2;
    const auto w = randomBlocks(rows, nb, 1);
    ASSERT_EQ(panelsQ8_0Bytes(rows, nb), static_cast<size_t>(2 * q8PanelStride(nb)));
    EXPECT_EQ(q8PanelStride(3), 1664); // 3 x 544 = 1632, rounded up to 64
    EXPECT_EQ(panelsQ8_0Bytes(0, nb), 0u);
    EXPECT_EQ(panelsQ8_0Bytes(rows, -1), 0u);
    const PanelMemory m = panelsOf(w, rows, nb);
    for (int64_t p = 0; p < 2; ++p) {
        const uint8_t* panel = bytesOf(m) + p * q8PanelStride(nb);
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t* block = panel + b * kQ8PanelQuantBytes;
            for (int64_t lane = 0; lane < 16; ++lane) {
                const int64_t r = p * 16 + lane;
                for (int64_t i = 0; i < kQ8_0BlockSize; ++i) {
                    const int q = r < rows ? w[static_cast<size_t>(r * nb + b)].qs[i] : 0;
                    ASSERT_EQ(block[(i / 4) * 64 + lane * 4 + i % 4], q + 128)
                        << "row " << r << " element " << i;
                }
                uint16_t d = 0;
                std::memcpy(&d, panel + nb * kQ8PanelQuantBytes + (b * 16 + lane) * 2, 2);
                EXPECT_EQ(d, r < rows ? w[static_cast<size_t>(r * nb + b)].d : 0);
            }
        }
    }
    // The rows' own size: 34 bytes per row and block.
    EXPECT_EQ(static_cast<size_t>(kQ8PanelBlockBytes), 16 * sizeof(BlockQ8_0));
}

TEST(VecPanelsQ8, EveryOutputChainsTheExactBlockSumsInOrder) {
    // Shapes around the panel and every tile (1 to 6 tokens; 8, 4, 3 or 2 panels), then a
    // wide matrix (256 blocks: 8.5 KiB of activations per token) whose 70 tokens the kernel
    // takes in three blocks, and blocks of -128 and +127 (the extreme sums). A NaN-filled y
    // shows any output left unwritten.
    const auto kernels = tablesWith(&VecKernels::gemmPanelsQ8_0);
    if (kernels.empty())
        GTEST_SKIP() << "no kernel table on this CPU multiplies Q8_0 panels (AVX2 or AVX-512 VNNI)";
    auto check = [](const VecKernels* k, int64_t rows, int64_t nb, int64_t tokens,
                    bool extreme = false) {
        auto w = randomBlocks(rows, nb, 2), x = randomBlocks(tokens, nb, 3);
        if (extreme) makeExtreme(w, -128), makeExtreme(x, -127);
        const PanelMemory m = panelsOf(w, rows, nb);
        std::vector<float> y(static_cast<size_t>(rows * tokens),
                             std::numeric_limits<float>::quiet_NaN());
        const Prepared px = prepared(x, tokens, nb);
        k->gemmPanelsQ8_0(bytesOf(m), nb, 0, rows, x.data(), nb, px.bias.data(), px.scale.data(),
                          tokens, y.data(), rows);
        const auto want = blockChains(w, x, rows, nb, tokens);
        for (size_t i = 0; i < y.size(); ++i)
            ASSERT_TRUE(sameBits(y[i], want[i]))
                << k->name << " rows=" << rows << " nb=" << nb << " tokens=" << tokens << " output "
                << i << ": " << y[i] << " vs " << want[i];
    };
    for (const VecKernels* k : kernels) {
        for (int64_t rows : {1, 15, 16, 17, 49, 130})
            for (int64_t nb : {1, 2, 9})
                for (int64_t tokens : {1, 2, 3, 4, 5, 6, 7, 13}) check(k, rows, nb, tokens);
        check(k, 37, 256, 70);
        check(k, 33, 5, 7, /*extreme=*/true);
    }
}

TEST(VecPanelsQ8, ARowRangeWritesOnlyItsRowsAndTheLastStoreStaysInside) {
    // A range starting and ending inside panels writes its rows with the whole product's
    // bits and nothing else; outputs ending right before an unmapped page do not fault.
    const auto kernels = tablesWith(&VecKernels::gemmPanelsQ8_0);
    if (kernels.empty())
        GTEST_SKIP() << "no kernel table on this CPU multiplies Q8_0 panels (AVX2 or AVX-512 VNNI)";
    const int64_t rows = 70, nb = 3, tokens = 10;
    const auto w = randomBlocks(rows, nb, 4), x = randomBlocks(tokens, nb, 5);
    const PanelMemory m = panelsOf(w, rows, nb);
    const Prepared px = prepared(x, tokens, nb);
    const mb::kernels::test::GuardPage guard;
    float* end = guard.end();
    for (const VecKernels* k : kernels) {
        std::vector<float> whole(static_cast<size_t>(rows * tokens));
        k->gemmPanelsQ8_0(bytesOf(m), nb, 0, rows, x.data(), nb, px.bias.data(), px.scale.data(),
                          tokens, whole.data(), rows);
        for (auto [r0, r1] :
             {std::pair<int64_t, int64_t>{5, 37}, {16, 32}, {33, 34}, {60, 70}, {0, 1}}) {
            std::vector<float> y(whole.size(), -7.0f);
            k->gemmPanelsQ8_0(bytesOf(m), nb, r0, r1, x.data(), nb, px.bias.data(), px.scale.data(),
                              tokens, y.data(), rows);
            for (int64_t t = 0; t < tokens; ++t)
                for (int64_t r = 0; r < rows; ++r) {
                    const size_t i = static_cast<size_t>(t * rows + r);
                    if (r >= r0 && r < r1)
                        ASSERT_TRUE(sameBits(y[i], whole[i])) << k->name << " row " << r;
                    else
                        ASSERT_EQ(y[i], -7.0f)
                            << k->name << " range [" << r0 << ", " << r1 << ") wrote row " << r;
                }
        }
        // One token, its 70 outputs the last floats before the unmapped page.
        k->gemmPanelsQ8_0(bytesOf(m), nb, 0, rows, x.data(), nb, px.bias.data(), px.scale.data(), 1,
                          end - rows, rows);
        for (int64_t r = 0; r < rows; ++r)
            EXPECT_TRUE(sameBits(end[r - rows], whole[static_cast<size_t>(r)]));
    }
}

TEST(Matmul, Q8PanelsGiveTheSameBitsForAnyThreadsAndBatch) {
    // matmul with Q8_0 panels set (activations quantised by matmul itself): 333 rows on 4
    // threads, on 1, and each token alone all give the same bits (ranges cut inside panels
    // are VecPanelsQ8.ARowRange...'s).
    if (!vecKernels().gemmPanelsQ8_0)
        GTEST_SKIP() << "the chosen kernel table does not multiply Q8_0 panels";
    const int64_t rows = 333, nb = 4, cols = nb * kQ8_0BlockSize, n = 11;
    const auto wb = randomBlocks(rows, nb, 6);
    const auto x = randomFloats(static_cast<size_t>(n * cols), 7);
    const PanelMemory m = panelsOf(wb, rows, nb);
    WeightMatrix w{TensorType::Q8_0, rows, cols, wb.data()};
    w.panels = m.get();
    mb::kernels::test::expectPanelMatmulInvariant(w, x, n);
}
