// F32 and F16 panels: the layout (packPanelsF32, packPanelsF16) and every table's outer-product
// product over it (gemmPanelsF32, gemmPanelsF16).
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/panels.h"
#include "vec_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

using namespace mb::kernels;
using mb::kernels::test::randomFloats;
using mb::kernels::test::sameBits;
using mb::kernels::test::tablesWith;

namespace {

// y[t * rows + r] as one std::fma chain over the columns in order from 0: what
// gemmPanelsF32 promises bit for bit.
std::vector<float> fmaChains(const std::vector<float>& w, const std::vector<float>& x, int64_t rows,
                             int64_t cols, int64_t tokens) {
    std::vector<float> y(static_cast<size_t>(rows * tokens));
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t r = 0; r < rows; ++r) {
            float acc = 0.0f;
            for (int64_t c = 0; c < cols; ++c)
                acc = std::fma(w[static_cast<size_t>(r * cols + c)],
                               x[static_cast<size_t>(t * cols + c)], acc);
            y[static_cast<size_t>(t * rows + r)] = acc;
        }
    return y;
}

// The panels of w (rows x cols) in memory of their own.
PanelMemory panelsOf(const std::vector<float>& w, int64_t rows, int64_t cols) {
    PanelMemory m = allocatePanelMemory(panelsF32Bytes(rows, cols));
    packPanelsF32(w.data(), rows, cols, m.get());
    return m;
}

} // namespace

TEST(Panels, SixteenRowsOfAColumnLieTogetherAndTheLastPanelIsZeroPadded) {
    const int64_t rows = 37, cols = 5;
    const auto w = randomFloats(static_cast<size_t>(rows * cols), 1);
    const PanelMemory p = panelsOf(w, rows, cols);
    EXPECT_EQ(panelsF32Bytes(rows, cols), static_cast<size_t>(3 * 16 * cols) * sizeof(float));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p.get()) % 64, 0u);
    for (int64_t panel = 0; panel < 3; ++panel)
        for (int64_t c = 0; c < cols; ++c)
            for (int64_t lane = 0; lane < 16; ++lane) {
                const int64_t r = panel * 16 + lane;
                const float want = r < rows ? w[static_cast<size_t>(r * cols + c)] : 0.0f;
                ASSERT_EQ(p[(panel * cols + c) * 16 + lane], want) << "row " << r << " col " << c;
            }
    for (int64_t badRows : {0, -40}) EXPECT_EQ(panelsF32Bytes(badRows, cols), 0u);
    EXPECT_EQ(allocatePanelMemory(0), nullptr);
}

// Table k's gemmPanelsF32 over a random rows x cols matrix and `tokens` tokens gives
// fmaChains' bits in every output (a NaN-filled y shows any output left unwritten).
static void expectFmaChains(const VecKernels* k, int64_t rows, int64_t cols, int64_t tokens) {
    const auto w = randomFloats(static_cast<size_t>(rows * cols), 2);
    const auto x = randomFloats(static_cast<size_t>(tokens * cols), 3);
    const PanelMemory p = panelsOf(w, rows, cols);
    std::vector<float> y(static_cast<size_t>(rows * tokens),
                         std::numeric_limits<float>::quiet_NaN());
    k->gemmPanelsF32(p.get(), cols, 0, rows, x.data(), cols, tokens, y.data(), rows);
    const auto want = fmaChains(w, x, rows, cols, tokens);
    for (size_t i = 0; i < y.size(); ++i)
        ASSERT_TRUE(sameBits(y[i], want[i]))
            << k->name << " rows=" << rows << " cols=" << cols << " tokens=" << tokens << " output "
            << i << ": " << y[i] << " vs " << want[i];
}

TEST(VecPanels, EveryOutputIsOneFmaChainInColumnOrder) {
    // Shapes around the panel (16 rows), the tile (3 panels x 8 tokens; 8 panels for one
    // token) and the token block; columns from 1 up to a model width. Then a wide matrix
    // (8,192 columns: 32 KiB of activations per token), whose 21 tokens the kernel takes in
    // three blocks of up to 8, the last one short.
    const auto kernels = tablesWith(&VecKernels::gemmPanelsF32);
    if (kernels.empty())
        GTEST_SKIP() << "no kernel table on this CPU multiplies panels (AVX-512 only)";
    for (const VecKernels* k : kernels) {
        for (int64_t rows : {1, 15, 16, 17, 49, 130})
            for (int64_t cols : {1, 7, 33, 288})
                for (int64_t tokens : {1, 2, 3, 8, 9, 21}) expectFmaChains(k, rows, cols, tokens);
        expectFmaChains(k, 37, 8192, 21);
    }
}

TEST(VecPanels, ARowRangeWritesOnlyItsRowsWithTheWholeProductsBits) {
    // Threads split a product at any row (matmulGroup's ranges cross matrices): a range that
    // starts and ends inside panels writes its rows, the same bits, and nothing else.
    const auto kernels = tablesWith(&VecKernels::gemmPanelsF32);
    if (kernels.empty())
        GTEST_SKIP() << "no kernel table on this CPU multiplies panels (AVX-512 only)";
    const int64_t rows = 70, cols = 40, tokens = 10;
    const auto w = randomFloats(static_cast<size_t>(rows * cols), 4);
    const auto x = randomFloats(static_cast<size_t>(tokens * cols), 5);
    const PanelMemory p = panelsOf(w, rows, cols);
    for (const VecKernels* k : kernels) {
        std::vector<float> whole(static_cast<size_t>(rows * tokens));
        k->gemmPanelsF32(p.get(), cols, 0, rows, x.data(), cols, tokens, whole.data(), rows);
        for (auto [r0, r1] :
             {std::pair<int64_t, int64_t>{5, 37}, {16, 32}, {33, 34}, {60, 70}, {0, 1}}) {
            std::vector<float> y(whole.size(), -7.0f);
            k->gemmPanelsF32(p.get(), cols, r0, r1, x.data(), cols, tokens, y.data(), rows);
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
    }
}

TEST(VecPanels, TheLastPanelsMaskedStoreTouchesNothingPastTheOutputs) {
    // Outputs ending right before an unmapped page, the last panel short of 16 rows: the
    // masked-off lanes of its store must not fault (see VecGemm.ShortTilesStoreNothingPast...).
    const auto kernels = tablesWith(&VecKernels::gemmPanelsF32);
    if (kernels.empty())
        GTEST_SKIP() << "no kernel table on this CPU multiplies panels (AVX-512 only)";
    const mb::kernels::test::GuardPage guard;
    float* end = guard.end();
    const int64_t cols = 24;
    const auto w = randomFloats(static_cast<size_t>(21 * cols), 6),
               x = randomFloats(static_cast<size_t>(cols), 7);
    for (const VecKernels* k : kernels)
        for (int64_t rows : {1, 3, 17, 21}) {
            const PanelMemory p = panelsOf(w, rows, cols);
            k->gemmPanelsF32(p.get(), cols, 0, rows, x.data(), cols, 1, end - rows, rows);
            const auto want = fmaChains(w, x, rows, cols, 1);
            for (int64_t r = 0; r < rows; ++r)
                EXPECT_TRUE(sameBits(end[r - rows], want[static_cast<size_t>(r)]));
        }
}

TEST(Matmul, PanelsGiveTheSameBitsForAnyThreadsBatchAndGrouping) {
    // matmul with panels set: each output one FMA chain (fmaChains' bits) on 1 or 4 threads,
    // for a token alone or inside a batch, and inside matmulGroup (whose ranges cut the
    // matrices at rows that are not panel edges).
    if (!vecKernels().gemmPanelsF32)
        GTEST_SKIP() << "the chosen kernel table does not multiply panels";
    // 904 rows at 11 tokens of 64 columns: 96-row ranges over 4 threads, cutting the second
    // and third matrices inside panels.
    const int64_t cols = 64, n = 11;
    const int64_t rows[] = {401, 170, 333};
    const auto x = randomFloats(static_cast<size_t>(n * cols), 8);
    std::vector<std::vector<float>> wf;
    std::vector<PanelMemory> panels;
    std::vector<WeightMatrix> ws;
    for (int i = 0; i < 3; ++i) {
        wf.push_back(
            randomFloats(static_cast<size_t>(rows[i] * cols), static_cast<uint32_t>(30 + i)));
        panels.push_back(panelsOf(wf.back(), rows[i], cols));
    }
    for (int i = 0; i < 3; ++i) {
        WeightMatrix w{TensorType::F32, rows[i], cols, wf[static_cast<size_t>(i)].data()};
        w.panels = panels[static_cast<size_t>(i)].get();
        ws.push_back(w);
    }
    ThreadPool p1(1), p4(4);
    MatmulScratch scratch;
    std::vector<std::vector<float>> grouped(3);
    std::vector<float*> outs;
    for (int i = 0; i < 3; ++i) {
        grouped[static_cast<size_t>(i)].resize(static_cast<size_t>(n * rows[i]));
        outs.push_back(grouped[static_cast<size_t>(i)].data());
    }
    matmulGroup(ws, x.data(), n, outs, p4, scratch);
    for (int i = 0; i < 3; ++i) {
        const WeightMatrix& w = ws[static_cast<size_t>(i)];
        const auto want = fmaChains(wf[static_cast<size_t>(i)], x, rows[i], cols, n);
        std::vector<float> one(static_cast<size_t>(n * rows[i])),
            alone(static_cast<size_t>(rows[i]));
        matmul(w, x.data(), n, one.data(), p1, scratch);
        for (size_t j = 0; j < want.size(); ++j) {
            ASSERT_TRUE(sameBits(one[j], want[j])) << "matrix " << i << " output " << j;
            ASSERT_TRUE(sameBits(grouped[static_cast<size_t>(i)][j], want[j]))
                << "matrix " << i << " output " << j;
        }
        for (int64_t t = 0; t < n; ++t) {
            matmul(w, x.data() + t * cols, 1, alone.data(), p4, scratch);
            for (int64_t r = 0; r < rows[i]; ++r)
                ASSERT_TRUE(sameBits(alone[static_cast<size_t>(r)],
                                     want[static_cast<size_t>(t * rows[i] + r)]));
        }
    }
}

namespace {
// Weights rounded to F16: their bits, and the exact F32 values the F16 panels multiply.
struct HalfWeights {
    std::vector<uint16_t> bits;
    std::vector<float> values;
};
HalfWeights halfWeights(int64_t rows, int64_t cols, uint32_t seed) {
    HalfWeights h;
    for (float v : randomFloats(static_cast<size_t>(rows * cols), seed)) {
        h.bits.push_back(floatToFp16(v));
        h.values.push_back(fp16ToFloat(h.bits.back()));
    }
    return h;
}
PanelMemory halfPanelsOf(const HalfWeights& w, int64_t rows, int64_t cols) {
    PanelMemory m = allocatePanelMemory(panelsF16Bytes(rows, cols));
    packPanelsF16(w.bits.data(), rows, cols, reinterpret_cast<uint16_t*>(m.get()));
    return m;
}
} // namespace

TEST(PanelsF16, TheF32LayoutInHalfTheBytesRoundedTo64) {
    const int64_t rows = 37, cols = 5;
    const HalfWeights w = halfWeights(rows, cols, 1);
    EXPECT_EQ(panelsF16Bytes(rows, cols), 512u); // 3 panels x 5 columns x 32 bytes = 480, rounded up
    EXPECT_EQ(panelsF16Bytes(32, 64), panelsF32Bytes(32, 64) / 2);
    const PanelMemory m = halfPanelsOf(w, rows, cols);
    const auto* p = reinterpret_cast<const uint16_t*>(m.get());
    for (int64_t panel = 0; panel < 3; ++panel)
        for (int64_t c = 0; c < cols; ++c)
            for (int64_t lane = 0; lane < 16; ++lane) {
                const int64_t r = panel * 16 + lane;
                ASSERT_EQ(p[(panel * cols + c) * 16 + lane], r < rows ? w.bits[static_cast<size_t>(r * cols + c)] : 0)
                    << "row " << r << " col " << c;
            }
}

TEST(VecPanelsF16, EveryOutputIsTheF32ChainOnTheConvertedWeights) {
    const auto kernels = tablesWith(&VecKernels::gemmPanelsF16);
    if (kernels.empty()) GTEST_SKIP() << "no kernel table on this CPU multiplies F16 panels (AVX-512 only)";
    for (const VecKernels* k : kernels)
        for (auto [rows, cols, tokens] : {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {17, 7, 9}, {49, 33, 3},
                                          {130, 288, 21}, {37, 8192, 21}, {16, 3, 8}}) {
            const HalfWeights w = halfWeights(rows, cols, 2);
            const auto x = randomFloats(static_cast<size_t>(tokens * cols), 3);
            const PanelMemory m = halfPanelsOf(w, rows, cols);
            std::vector<float> y(static_cast<size_t>(rows * tokens), std::numeric_limits<float>::quiet_NaN());
            k->gemmPanelsF16(reinterpret_cast<const uint16_t*>(m.get()), cols, 0, rows, x.data(), cols, tokens,
                             y.data(), rows);
            const auto want = fmaChains(w.values, x, rows, cols, tokens);
            for (size_t i = 0; i < y.size(); ++i)
                ASSERT_TRUE(sameBits(y[i], want[i])) << k->name << " rows=" << rows << " cols=" << cols
                                                     << " tokens=" << tokens << " output " << i;
            // A range inside the panels writes only its rows.
            std::vector<float> part(y.size(), -7.0f);
            const int64_t r0 = rows / 3, r1 = rows - rows / 4;
            k->gemmPanelsF16(reinterpret_cast<const uint16_t*>(m.get()), cols, r0, r1, x.data(), cols, tokens,
                             part.data(), rows);
            for (int64_t t = 0; t < tokens; ++t)
                for (int64_t r = 0; r < rows; ++r) {
                    const size_t i = static_cast<size_t>(t * rows + r);
                    if (r >= r0 && r < r1) ASSERT_TRUE(sameBits(part[i], want[i]));
                    else ASSERT_EQ(part[i], -7.0f);
                }
        }
}

TEST(Matmul, F16PanelsGiveTheSameBitsForAnyThreadsAndBatch) {
    if (!vecKernels().gemmPanelsF16) GTEST_SKIP() << "the chosen kernel table does not multiply F16 panels";
    const int64_t rows = 333, cols = 96, n = 11;
    const HalfWeights hw = halfWeights(rows, cols, 9);
    const auto x = randomFloats(static_cast<size_t>(n * cols), 10);
    const PanelMemory m = halfPanelsOf(hw, rows, cols);
    WeightMatrix w{TensorType::F16, rows, cols, hw.bits.data()};
    w.panels = m.get();
    ThreadPool p1(1), p4(4);
    MatmulScratch scratch;
    std::vector<float> y1(static_cast<size_t>(n * rows)), y4(y1.size()), one(static_cast<size_t>(rows));
    matmul(w, x.data(), n, y1.data(), p1, scratch);
    matmul(w, x.data(), n, y4.data(), p4, scratch);
    const auto want = fmaChains(hw.values, x, rows, cols, n);
    for (size_t i = 0; i < y1.size(); ++i) {
        ASSERT_TRUE(sameBits(y1[i], want[i])) << "output " << i;
        ASSERT_TRUE(sameBits(y4[i], want[i])) << "output " << i;
    }
    for (int64_t t = 0; t < n; ++t) {
        matmul(w, x.data() + t * cols, 1, one.data(), p4, scratch);
        for (int64_t r = 0; r < rows; ++r)
            ASSERT_TRUE(sameBits(one[static_cast<size_t>(r)], want[static_cast<size_t>(t * rows + r)]));
    }
}
