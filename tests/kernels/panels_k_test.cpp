// Q4_K and Q6_K panels: the layouts (packPanelsQ4_K, packPanelsQ6_K) and every table's vpdpbusd
// outer-product products over them (gemmPanelsQ4_K, gemmPanelsQ6_K), bit for bit against the
// chains they promise, and matmul over them.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/kquant_layout.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/panels.h"
#include "kernels/cpu/panels_k.h"
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
using mb::kernels::test::randomFloats;
using mb::kernels::test::sameBits;
using mb::kernels::test::tablesWith;

namespace {

using PanelFn = void (*)(const uint8_t*, int64_t, int64_t, int64_t, const BlockQ8_K*, int64_t, int64_t, float*,
                         int64_t);

// rows x nb super-blocks quantised from seeded floats with quantize (a row of nb * 256).
template <class Block>
std::vector<Block> superBlocks(int64_t rows, int64_t nb, uint32_t seed, void (*quantize)(const float*, void*, int64_t)) {
    const int64_t cols = nb * kSuperBlockSize;
    const auto f = randomFloats(static_cast<size_t>(rows * cols), seed);
    std::vector<Block> out(static_cast<size_t>(rows * nb));
    for (int64_t r = 0; r < rows; ++r) quantize(f.data() + r * cols, out.data() + r * nb, cols);
    return out;
}

std::vector<BlockQ8_K> activations(int64_t tokens, int64_t nb, uint32_t seed) {
    return superBlocks<BlockQ8_K>(tokens, nb, seed, quantizeRowQ8_K);
}

// The chain gemmPanelsQ4_K promises for output (r, t).
float q4kChain(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb) {
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t s = 0, m = 0;
        for (int j = 0; j < 8; ++j) {
            uint8_t scale = 0, min = 0;
            scaleMinK4(j, w[b].scales, scale, min);
            int32_t sub = 0, xs = 0;
            for (int e = 32 * j; e < 32 * j + 32; ++e) sub += layout::q4(w[b].qs, e) * x[b].qs[e], xs += x[b].qs[e];
            s += scale * sub;
            m += min * xs;
        }
        acc = std::fma(static_cast<float>(s), fp16ToFloat(w[b].d) * x[b].d, acc);
        acc = std::fma(-static_cast<float>(m), fp16ToFloat(w[b].dmin) * x[b].d, acc);
    }
    return acc;
}

// The chain gemmPanelsQ6_K promises.
float q6kChain(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb) {
    float acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t s = 0;
        for (int j = 0; j < 16; ++j) {
            int32_t sub = 0;
            for (int e = 16 * j; e < 16 * j + 16; ++e) sub += layout::q6(w[b], e) * x[b].qs[e];
            s += w[b].scales[j] * sub;
        }
        acc = std::fma(static_cast<float>(s), fp16ToFloat(w[b].d) * x[b].d, acc);
    }
    return acc;
}

template <class Block> struct KType;
template <> struct KType<BlockQ4_K> {
    static constexpr TensorType type = TensorType::Q4_K;
    static constexpr auto quantize = quantizeRowQ4_K;
    static constexpr auto fn = &VecKernels::gemmPanelsQ4_K;
    static float chain(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb) { return q4kChain(w, x, nb); }
    // Nibbles 15 or 0, every scale and min 63, d and dmin 1.
    static void extreme(BlockQ4_K& b, bool high) {
        std::memset(b.qs, high ? 0xFF : 0x00, sizeof b.qs);
        std::memset(b.scales, 0xFF, sizeof b.scales);
        b.d = b.dmin = floatToFp16(1.0f);
    }
};
template <> struct KType<BlockQ6_K> {
    static constexpr TensorType type = TensorType::Q6_K;
    static constexpr auto quantize = quantizeRowQ6_K;
    static constexpr auto fn = &VecKernels::gemmPanelsQ6_K;
    static float chain(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb) { return q6kChain(w, x, nb); }
    // Values 63 or 0 (q - 32 = 31 or -32), scales -128 or 127.
    static void extreme(BlockQ6_K& b, bool high) {
        std::memset(b.ql, high ? 0xFF : 0x00, sizeof b.ql);
        std::memset(b.qh, high ? 0xFF : 0x00, sizeof b.qh);
        for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<int8_t>(j % 2 ? 127 : -128);
        b.d = floatToFp16(1.0f);
    }
};

template <class Block> PanelMemory panelsOf(const std::vector<Block>& w, int64_t rows, int64_t nb) {
    const int64_t cols = nb * kSuperBlockSize;
    const size_t bytes = KType<Block>::type == TensorType::Q4_K ? panelsQ4_KBytes(rows, nb) : panelsQ6_KBytes(rows, nb);
    PanelMemory m = allocatePanelMemory(bytes);
    packPanels(KType<Block>::type, w.data(), rows, cols, m.get());
    return m;
}

template <class Block> void checkChains(const VecKernels* k, int64_t rows, int64_t nb, int64_t tokens, bool extreme) {
    auto w = superBlocks<Block>(rows, nb, 2, KType<Block>::quantize);
    auto x = activations(tokens, nb, 3);
    if (extreme) { // the integer sums' extremes: activations -128 and 127
        for (size_t i = 0; i < w.size(); ++i) KType<Block>::extreme(w[i], i % 2 == 0);
        for (size_t i = 0; i < x.size(); ++i) {
            for (int e = 0; e < kSuperBlockSize; ++e) x[i].qs[e] = static_cast<int8_t>(i % 2 ? 127 : -128);
            for (int j = 0; j < 16; ++j) x[i].bsums[j] = static_cast<int16_t>(16 * x[i].qs[0]);
        }
    }
    const PanelMemory m = panelsOf(w, rows, nb);
    std::vector<float> y(static_cast<size_t>(rows * tokens), std::numeric_limits<float>::quiet_NaN());
    (k->*KType<Block>::fn)(bytesOf(m), nb, 0, rows, x.data(), nb, tokens, y.data(), rows);
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t r = 0; r < rows; ++r) {
            const float want = KType<Block>::chain(&w[static_cast<size_t>(r * nb)], &x[static_cast<size_t>(t * nb)], nb);
            const float got = y[static_cast<size_t>(t * rows + r)];
            ASSERT_TRUE(sameBits(got, want)) << k->name << " rows=" << rows << " nb=" << nb << " tokens=" << tokens
                                             << " row " << r << " token " << t << ": " << got << " vs " << want;
        }
}

template <class Block> void everyShape() {
    const auto kernels = tablesWith(KType<Block>::fn);
    if (kernels.empty()) GTEST_SKIP() << "no kernel table on this CPU multiplies k-quant panels (AVX-512 VNNI only)";
    for (const VecKernels* k : kernels) {
        for (int64_t rows : {1, 15, 16, 17, 49, 130})
            for (int64_t nb : {1, 2, 3})
                for (int64_t tokens : {1, 2, 3, 4, 5, 7, 9}) checkChains<Block>(k, rows, nb, tokens, false);
        checkChains<Block>(k, 37, 17, 13, false); // 4096 + 256 columns
        checkChains<Block>(k, 33, 2, 7, true);
    }
}

template <class Block> void rowRanges() {
    const auto kernels = tablesWith(KType<Block>::fn);
    if (kernels.empty()) GTEST_SKIP() << "no kernel table on this CPU multiplies k-quant panels (AVX-512 VNNI only)";
    const int64_t rows = 70, nb = 2, tokens = 10;
    const auto w = superBlocks<Block>(rows, nb, 4, KType<Block>::quantize);
    const auto x = activations(tokens, nb, 5);
    const PanelMemory m = panelsOf(w, rows, nb);
    const mb::kernels::test::GuardPage guard;
    float* end = guard.end();
    for (const VecKernels* k : kernels) {
        const auto fn = k->*KType<Block>::fn;
        std::vector<float> whole(static_cast<size_t>(rows * tokens));
        fn(bytesOf(m), nb, 0, rows, x.data(), nb, tokens, whole.data(), rows);
        for (auto [r0, r1] : {std::pair<int64_t, int64_t>{5, 37}, {16, 32}, {33, 34}, {60, 70}, {0, 1}}) {
            std::vector<float> y(whole.size(), -7.0f);
            fn(bytesOf(m), nb, r0, r1, x.data(), nb, tokens, y.data(), rows);
            for (int64_t t = 0; t < tokens; ++t)
                for (int64_t r = 0; r < rows; ++r) {
                    const size_t i = static_cast<size_t>(t * rows + r);
                    if (r >= r0 && r < r1) ASSERT_TRUE(sameBits(y[i], whole[i])) << k->name << " row " << r;
                    else ASSERT_EQ(y[i], -7.0f) << k->name << " range [" << r0 << ", " << r1 << ") wrote row " << r;
                }
        }
        fn(bytesOf(m), nb, 0, rows, x.data(), nb, 1, end - rows, rows);
        for (int64_t r = 0; r < rows; ++r) EXPECT_TRUE(sameBits(end[r - rows], whole[static_cast<size_t>(r)]));
    }
}

template <class Block> void matmulOverPanels() {
    if (!(vecKernels().*KType<Block>::fn)) GTEST_SKIP() << "the chosen kernel table does not multiply k-quant panels";
    const int64_t rows = 333, nb = 3, cols = nb * kSuperBlockSize, n = 11;
    const auto wb = superBlocks<Block>(rows, nb, 6, KType<Block>::quantize);
    const auto x = randomFloats(static_cast<size_t>(n * cols), 7);
    const PanelMemory m = panelsOf(wb, rows, nb);
    WeightMatrix w{KType<Block>::type, rows, cols, wb.data()};
    w.panels = m.get();
    mb::kernels::test::expectPanelMatmulInvariant(w, x, n);
}

} // namespace

TEST(PanelsK, Q4KHoldsTheStoredBytesThenScalesMinPairsAndHalves) {
    const int64_t rows = 19, nb = 2;
    const auto w = superBlocks<BlockQ4_K>(rows, nb, 1, quantizeRowQ4_K);
    EXPECT_EQ(kQ4KPanelBlockBytes, 2368); // 16 x 144 = 2304 bytes of rows, + 64
    ASSERT_EQ(panelsQ4_KBytes(rows, nb), static_cast<size_t>(2 * nb * kQ4KPanelBlockBytes));
    EXPECT_EQ(panelsQ4_KBytes(0, nb), 0u);
    EXPECT_EQ(panelsQ4_KBytes(rows, 0), 0u);
    const PanelMemory m = panelsOf(w, rows, nb);
    for (int64_t p = 0; p < 2; ++p)
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t* blk = bytesOf(m) + p * q4kPanelStride(nb) + b * kQ4KPanelBlockBytes;
            for (int lane = 0; lane < 16; ++lane) {
                const int64_t r = p * 16 + lane;
                const BlockQ4_K* src = r < rows ? &w[static_cast<size_t>(r * nb + b)] : nullptr;
                for (int e = 0; e < kSuperBlockSize; ++e) { // element e's nibble where the layout says
                    const int c = e / 64, g = (e % 32) / 4, hi = (e / 32) % 2;
                    const int got = (blk[(8 * c + g) * 64 + 4 * lane + e % 4] >> (4 * hi)) & 0xF;
                    ASSERT_EQ(got, src ? layout::q4(src->qs, e) : 0) << "row " << r << " element " << e;
                }
                for (int j = 0; j < 8; ++j) {
                    uint8_t scale = 0, min = 0;
                    if (src) scaleMinK4(j, src->scales, scale, min);
                    EXPECT_EQ(blk[kQ4KPanelScales + 16 * j + lane], scale);
                    EXPECT_EQ(blk[kQ4KPanelMins + 32 * (j / 2) + 2 * lane + j % 2], min);
                }
                uint16_t d = 0, dmin = 0;
                std::memcpy(&d, blk + kQ4KPanelD + 2 * lane, 2);
                std::memcpy(&dmin, blk + kQ4KPanelDmin + 2 * lane, 2);
                EXPECT_EQ(d, src ? src->d : 0);
                EXPECT_EQ(dmin, src ? src->dmin : 0);
            }
        }
}

TEST(PanelsK, Q6KHoldsNibblesThenBitPairsThenScalesAndHalves) {
    const int64_t rows = 21, nb = 2;
    const auto w = superBlocks<BlockQ6_K>(rows, nb, 1, quantizeRowQ6_K);
    EXPECT_EQ(kQ6KPanelBlockBytes, 3392); // 16 x 210 = 3360 bytes of rows, + 32
    ASSERT_EQ(panelsQ6_KBytes(rows, nb), static_cast<size_t>(2 * nb * kQ6KPanelBlockBytes));
    const PanelMemory m = panelsOf(w, rows, nb);
    for (int64_t p = 0; p < 2; ++p)
        for (int64_t b = 0; b < nb; ++b) {
            const uint8_t* blk = bytesOf(m) + p * q6kPanelStride(nb) + b * kQ6KPanelBlockBytes;
            for (int lane = 0; lane < 16; ++lane) {
                const int64_t r = p * 16 + lane;
                const BlockQ6_K* src = r < rows ? &w[static_cast<size_t>(r * nb + b)] : nullptr;
                for (int e = 0; e < kSuperBlockSize; ++e) {
                    const int j = e / 16, g = (e % 16) / 4;
                    const int low = (blk[(4 * (j / 2) + g) * 64 + 4 * lane + e % 4] >> (4 * (j % 2))) & 0xF;
                    const int high = (blk[kQ6KPanelHigh + 64 * j + 4 * lane + e % 4] >> (2 * g)) & 3;
                    ASSERT_EQ(low | (high << 4), src ? layout::q6(*src, e) + 32 : 0) << "row " << r << " element " << e;
                }
                for (int j = 0; j < 16; ++j)
                    EXPECT_EQ(static_cast<int8_t>(blk[kQ6KPanelScales + 16 * j + lane]), src ? src->scales[j] : 0);
                uint16_t d = 0;
                std::memcpy(&d, blk + kQ6KPanelD + 2 * lane, 2);
                EXPECT_EQ(d, src ? src->d : 0);
            }
        }
}

TEST(PanelsK, OnlyTablesWithTheProductGetPanelBytes) {
    for (const VecKernels* k : availableVecKernels()) {
        EXPECT_EQ(panelBytesFor(*k, TensorType::Q4_K, 20, 512) > 0, k->gemmPanelsQ4_K != nullptr) << k->name;
        EXPECT_EQ(panelBytesFor(*k, TensorType::Q6_K, 20, 512) > 0, k->gemmPanelsQ6_K != nullptr) << k->name;
        EXPECT_EQ(panelBytesFor(*k, TensorType::Q5_K, 20, 512), 0u) << k->name;
    }
}

TEST(VecPanelsK, Q4KOutputsChainTheExactSuperBlockSumsInOrder) { everyShape<BlockQ4_K>(); }
TEST(VecPanelsK, Q6KOutputsChainTheExactSuperBlockSumsInOrder) { everyShape<BlockQ6_K>(); }
TEST(VecPanelsK, Q4KRowRangeWritesOnlyItsRowsAndTheLastStoreStaysInside) { rowRanges<BlockQ4_K>(); }
TEST(VecPanelsK, Q6KRowRangeWritesOnlyItsRowsAndTheLastStoreStaysInside) { rowRanges<BlockQ6_K>(); }
TEST(Matmul, Q4KPanelsGiveTheSameBitsForAnyThreadsAndBatchAndMatchTheRows) { matmulOverPanels<BlockQ4_K>(); }
TEST(Matmul, Q6KPanelsGiveTheSameBitsForAnyThreadsAndBatchAndMatchTheRows) { matmulOverPanels<BlockQ6_K>(); }

TEST(PanelsK, Q6ValuesReadsEveryElementAsQ6) {
    auto w = superBlocks<BlockQ6_K>(4, 1, 8, quantizeRowQ6_K);
    std::memset(w[3].ql, 0xFF, sizeof w[3].ql); // values 63 and 48
    std::memset(w[3].qh, 0xAA, sizeof w[3].qh);
    for (const BlockQ6_K& b : w) {
        uint8_t q[kSuperBlockSize];
        layout::q6Values(b, q);
        for (int e = 0; e < kSuperBlockSize; ++e) ASSERT_EQ(q[e], layout::q6(b, e) + 32) << "element " << e;
    }
}
