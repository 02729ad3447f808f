// Every SIMD vector kernel against the portable one and a double-precision reference, on awkward shapes.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/vec.h"
#include "tests/kernels/vec_test_util.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

using namespace mb::kernels;
using mb::kernels::test::randomFloats;
using mb::kernels::test::tables;

namespace {

// atol + rtol * sum|w*x|: the bound for two float summation orders.
void expectClose(double got, double ref, double absSum, const std::string& what) {
    EXPECT_NEAR(got, ref, 1e-6 + 1e-5 * absSum) << what;
}

// Every SIMD table this CPU has (avx2, avx512) against the portable one.
class VecKernelsTest : public ::testing::Test {
protected:
    void SetUp() override {
        for (const VecKernels* k : availableVecKernels())
            if (k != &portableVecKernels()) simds.push_back(k);
        if (simds.empty()) GTEST_SKIP() << "this CPU has no AVX2+FMA+F16C; only the portable kernels exist";
    }
    const VecKernels& ref = portableVecKernels();
    std::vector<const VecKernels*> simds;
};

} // namespace

TEST_F(VecKernelsTest, FloatDotsMatchPortable) {
    for (const VecKernels* simd : simds) {
        for (int64_t n : {1, 7, 8, 15, 16, 17, 31, 33, 100, 257, 4096}) {
            const auto w = randomFloats(static_cast<size_t>(n), 1);
            const auto x = randomFloats(static_cast<size_t>(n), 2);
            std::vector<uint16_t> wh(static_cast<size_t>(n)), wb(static_cast<size_t>(n));
            double absSum = 0;
            for (int64_t i = 0; i < n; ++i) {
                wh[static_cast<size_t>(i)] = floatToFp16(w[static_cast<size_t>(i)]);
                wb[static_cast<size_t>(i)] = floatToBf16(w[static_cast<size_t>(i)]);
                absSum += std::fabs(w[static_cast<size_t>(i)] * x[static_cast<size_t>(i)]);
            }
            const std::string at = std::string(simd->name) + " n=" + std::to_string(n);
            expectClose(simd->dotF32(w.data(), x.data(), n), ref.dotF32(w.data(), x.data(), n), absSum, "f32 " + at);
            expectClose(simd->dotF16(wh.data(), x.data(), n), ref.dotF16(wh.data(), x.data(), n), absSum, "f16 " + at);
            expectClose(simd->dotBF16(wb.data(), x.data(), n), ref.dotBF16(wb.data(), x.data(), n), absSum, "bf16 " + at);
        }
    }
}

TEST_F(VecKernelsTest, QuantisedDotsMatchPortable) {
    for (const VecKernels* simd : simds) {
        for (int64_t nb : {1, 2, 3, 9, 24, 64}) {
            const int64_t n = nb * 32;
            const auto w = randomFloats(static_cast<size_t>(n), 3);
            const auto x = randomFloats(static_cast<size_t>(n), 4);
            std::vector<BlockQ8_0> w8(static_cast<size_t>(nb)), xq(static_cast<size_t>(nb));
            std::vector<BlockQ4_0> w4(static_cast<size_t>(nb));
            quantizeRowQ8_0(w.data(), w8.data(), n);
            quantizeRowQ4_0(w.data(), w4.data(), n);
            quantizeRowQ8_0(x.data(), xq.data(), n);
            // Integer products are exact; only the per-block float accumulation order differs.
            const double scale = static_cast<double>(n);
            EXPECT_NEAR(simd->dotQ8_0(w8.data(), xq.data(), nb), ref.dotQ8_0(w8.data(), xq.data(), nb), 1e-5 * scale)
                << simd->name << " nb=" << nb;
            EXPECT_NEAR(simd->dotQ4_0(w4.data(), xq.data(), nb), ref.dotQ4_0(w4.data(), xq.data(), nb), 1e-5 * scale)
                << simd->name << " nb=" << nb;
        }
    }
}

TEST_F(VecKernelsTest, ActivationQuantisationMatchesPortable) {
    for (const VecKernels* simd : simds) {
        const int64_t n = 32 * 50;
        auto x = randomFloats(static_cast<size_t>(n), 5);
        x[0] = 0.0f; // a block with an exact zero and extremes
        std::vector<BlockQ8_0> a(static_cast<size_t>(n / 32)), b(static_cast<size_t>(n / 32));
        ref.quantizeQ8_0(x.data(), a.data(), n);
        simd->quantizeQ8_0(x.data(), b.data(), n);
        for (size_t blk = 0; blk < a.size(); ++blk) {
            ASSERT_EQ(a[blk].d, b[blk].d) << simd->name << " block " << blk;
            for (int j = 0; j < 32; ++j)
                ASSERT_LE(std::abs(a[blk].qs[j] - b[blk].qs[j]), 1) << simd->name << " block " << blk << " j " << j; // ties may differ
        }
    }
}

TEST_F(VecKernelsTest, AxpyMatchesPortable) {
    for (const VecKernels* simd : simds) {
        for (int64_t n : {1, 9, 64, 129}) {
            const auto x = randomFloats(static_cast<size_t>(n), 6);
            auto y1 = randomFloats(static_cast<size_t>(n), 7);
            auto y2 = y1;
            ref.axpy(0.37f, x.data(), y1.data(), n);
            simd->axpy(0.37f, x.data(), y2.data(), n);
            for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y1[static_cast<size_t>(i)], y2[static_cast<size_t>(i)], 1e-6f);
        }
    }
}

TEST(VecDispatch, ChoosesAKernelTable) {
    const VecKernels& k = vecKernels();
    EXPECT_NE(k.name, nullptr);
    // The fastest available; MODEBENCH_CPU=avx2 / portable (the CTest avx2.* and portable.*
    // runs) hide the faster ones.
    if (avx512VecKernels()) EXPECT_STREQ(k.name, "avx512");
    else if (avx2VecKernels()) EXPECT_STREQ(k.name, "avx2");
    else EXPECT_STREQ(k.name, "portable");
    if (avx512VecKernels()) {
        EXPECT_NE(avx2VecKernels(), nullptr);
    }
}

namespace {

// Every table this machine can run: portable always, AVX2 and AVX-512 where the CPU has them.
// A panel of weights (F32 source, F16/Q8_0/Q4_0 copies) and activations with padded
// strides, so every kernel must honour ldw, ldx and ldy.
struct Panel {
    int64_t rows, tokens, k, ldw, ldx, nb;
    std::vector<float> w, x;
    std::vector<uint16_t> wh;
    std::vector<BlockQ8_0> w8, xq;
    std::vector<BlockQ4_0> w4;

    Panel(int64_t rows_, int64_t tokens_, int64_t k_, uint32_t seed)
        : rows(rows_), tokens(tokens_), k(k_), ldw(k_ + 5), ldx(k_ + 3), nb(k_ / 32) {
        w = randomFloats(static_cast<size_t>(rows * ldw), seed);
        x = randomFloats(static_cast<size_t>(tokens * ldx), seed + 1);
        wh.resize(w.size());
        for (size_t i = 0; i < w.size(); ++i) wh[i] = floatToFp16(w[i]);
        if (k % 32 != 0) return;
        w8.resize(static_cast<size_t>(rows * (nb + 1)));
        w4.resize(w8.size());
        xq.resize(static_cast<size_t>(tokens * (nb + 2)));
        for (int64_t r = 0; r < rows; ++r) {
            quantizeRowQ8_0(w.data() + r * ldw, w8.data() + r * (nb + 1), k);
            quantizeRowQ4_0(w.data() + r * ldw, w4.data() + r * (nb + 1), k);
        }
        for (int64_t t = 0; t < tokens; ++t) quantizeRowQ8_0(x.data() + t * ldx, xq.data() + t * (nb + 2), k);
    }
    size_t outSize() const { return static_cast<size_t>(tokens * (rows + 1)); } // ldy = rows + 1
};

// gemmF32 and gemmF16 of panel p (ldy = rows + 1, y holding -1 beforehand): every output the
// table's single dot bit for bit, and the column past the rows untouched.
void expectFloatGemmsEqualTheDots(const VecKernels& k, const Panel& p, std::vector<float>& y, const std::string& at) {
    const int64_t rows = p.rows, tokens = p.tokens, K = p.k, ldy = rows + 1;
    k.gemmF32(p.w.data(), p.ldw, p.x.data(), p.ldx, K, rows, tokens, y.data(), ldy);
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t r = 0; r < rows; ++r)
            ASSERT_EQ(y[static_cast<size_t>(t * ldy + r)], k.dotF32(p.w.data() + r * p.ldw, p.x.data() + t * p.ldx, K))
                << "f32 " << at;
    k.gemmF16(p.wh.data(), p.ldw, p.x.data(), p.ldx, K, rows, tokens, y.data(), ldy);
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t r = 0; r < rows; ++r)
            ASSERT_EQ(y[static_cast<size_t>(t * ldy + r)], k.dotF16(p.wh.data() + r * p.ldw, p.x.data() + t * p.ldx, K))
                << "f16 " << at;
    for (int64_t t = 0; t < tokens; ++t) ASSERT_EQ(y[static_cast<size_t>(t * ldy + rows)], -1.0f) << at;
}

const int64_t kRowCounts[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 17};
const int64_t kTokenCounts[] = {1, 2, 3, 4, 5, 6, 7, 8, 13};

} // namespace

// The tiles may not change a single bit: every output of gemm* equals the table's single
// dot of that row and token, for every tile shape and edge (rows and tokens not multiples
// of the tile), so thread splits and batch grouping cannot change results.
TEST(VecGemm, EveryOutputEqualsTheSingleDotBitForBit) {
    for (const VecKernels* k : tables()) {
        for (int64_t K : {7, 23, 32, 48, 100, 288}) {
            for (int64_t rows : kRowCounts) {
                for (int64_t tokens : kTokenCounts) {
                    const Panel p(rows, tokens, K, static_cast<uint32_t>(rows * 100 + tokens));
                    const int64_t ldy = rows + 1;
                    const std::string at = std::string(k->name) + " k=" + std::to_string(K) +
                                           " rows=" + std::to_string(rows) + " tokens=" + std::to_string(tokens);
                    std::vector<float> y(p.outSize(), -1.0f);
                    expectFloatGemmsEqualTheDots(*k, p, y, at);
                    if (::testing::Test::HasFatalFailure()) return;
                    if (K % 32 != 0) continue;
                    const int64_t nb = p.nb;
                    k->gemmQ8_0(p.w8.data(), nb + 1, p.xq.data(), nb + 2, nb, rows, tokens, y.data(), ldy);
                    for (int64_t t = 0; t < tokens; ++t)
                        for (int64_t r = 0; r < rows; ++r)
                            ASSERT_EQ(y[static_cast<size_t>(t * ldy + r)],
                                      k->dotQ8_0(p.w8.data() + r * (nb + 1), p.xq.data() + t * (nb + 2), nb)) << "q8_0 " << at;
                    k->gemmQ4_0(p.w4.data(), nb + 1, p.xq.data(), nb + 2, nb, rows, tokens, y.data(), ldy);
                    for (int64_t t = 0; t < tokens; ++t)
                        for (int64_t r = 0; r < rows; ++r)
                            ASSERT_EQ(y[static_cast<size_t>(t * ldy + r)],
                                      k->dotQ4_0(p.w4.data() + r * (nb + 1), p.xq.data() + t * (nb + 2), nb)) << "q4_0 " << at;
                }
            }
        }
    }
}

// Matrices bigger than a panel block (about 256 KB of weights; the output matrix's case) with
// more tokens than one tile: the panel then walks blocks of rows, each against every tile of
// tokens, and still no bit may change.
TEST(VecGemm, RowBlocksOfBigMatricesChangeNoBit) {
    const int64_t K = 288, rows = 1700; // 1700 rows pass a block in every weight type
    for (const VecKernels* k : tables()) {
        for (int64_t tokens : {7, 13}) {
            const Panel p(rows, tokens, K, 77);
            const int64_t ldy = rows + 1, nb = p.nb;
            std::vector<float> y(p.outSize());
            auto check = [&](const char* type, auto dot) {
                for (int64_t t = 0; t < tokens; ++t)
                    for (int64_t r = 0; r < rows; ++r)
                        ASSERT_EQ(y[static_cast<size_t>(t * ldy + r)], dot(r, t))
                            << type << " " << k->name << " tokens=" << tokens << " row=" << r;
            };
            k->gemmF32(p.w.data(), p.ldw, p.x.data(), p.ldx, K, rows, tokens, y.data(), ldy);
            check("f32", [&](int64_t r, int64_t t) { return k->dotF32(p.w.data() + r * p.ldw, p.x.data() + t * p.ldx, K); });
            k->gemmF16(p.wh.data(), p.ldw, p.x.data(), p.ldx, K, rows, tokens, y.data(), ldy);
            check("f16", [&](int64_t r, int64_t t) { return k->dotF16(p.wh.data() + r * p.ldw, p.x.data() + t * p.ldx, K); });
            k->gemmQ8_0(p.w8.data(), nb + 1, p.xq.data(), nb + 2, nb, rows, tokens, y.data(), ldy);
            check("q8_0", [&](int64_t r, int64_t t) {
                return k->dotQ8_0(p.w8.data() + r * (nb + 1), p.xq.data() + t * (nb + 2), nb);
            });
            k->gemmQ4_0(p.w4.data(), nb + 1, p.xq.data(), nb + 2, nb, rows, tokens, y.data(), ldy);
            check("q4_0", [&](int64_t r, int64_t t) {
                return k->dotQ4_0(p.w4.data() + r * (nb + 1), p.xq.data() + t * (nb + 2), nb);
            });
        }
    }
}

// Rows wider than L1 holds for six tokens (AVX2 walks them in chunks of k, keeping each output's
// accumulators between chunks) with prefill token counts: still the single dot's bits, for
// widths with and without the 8-element remainder and the scalar tail.
TEST(VecGemm, WideRowsInChunksChangeNoBit) {
    for (const VecKernels* k : tables()) {
        for (int64_t K : {1376, 2048, 2059, 4096 + 16 + 8}) {
            for (int64_t rows : {1, 5, 70}) {
                for (int64_t tokens : {7, 13}) {
                    const Panel p(rows, tokens, K, static_cast<uint32_t>(K + rows * 10 + tokens));
                    std::vector<float> y(p.outSize(), -1.0f);
                    const std::string at = std::string(k->name) + " k=" + std::to_string(K) +
                                           " rows=" + std::to_string(rows) + " tokens=" + std::to_string(tokens);
                    expectFloatGemmsEqualTheDots(*k, p, y, at);
                    if (::testing::Test::HasFatalFailure()) return;
                }
            }
        }
    }
}

// Against a double-precision product of exactly the values the kernel sees (decoded F16
// weights; dequantised Q8_0/Q4_0 weights and activations): only the float summation
// differs, bounded by atol + rtol * sum |w x|.
TEST(VecGemm, MatchesDoubleReference) {
    for (const VecKernels* k : tables()) {
        for (int64_t K : {1, 9, 23, 48, 64, 257, 768}) {
            for (int64_t rows : {1, 5, 8, 11}) {
                for (int64_t tokens : {1, 3, 4, 7, 13}) {
                    const Panel p(rows, tokens, K, static_cast<uint32_t>(K + rows + tokens));
                    const int64_t ldy = rows + 1;
                    std::vector<float> yf(p.outSize()), yh(p.outSize()), y8(p.outSize()), y4(p.outSize());
                    k->gemmF32(p.w.data(), p.ldw, p.x.data(), p.ldx, K, rows, tokens, yf.data(), ldy);
                    k->gemmF16(p.wh.data(), p.ldw, p.x.data(), p.ldx, K, rows, tokens, yh.data(), ldy);
                    const bool quant = K % 32 == 0;
                    if (quant) {
                        k->gemmQ8_0(p.w8.data(), p.nb + 1, p.xq.data(), p.nb + 2, p.nb, rows, tokens, y8.data(), ldy);
                        k->gemmQ4_0(p.w4.data(), p.nb + 1, p.xq.data(), p.nb + 2, p.nb, rows, tokens, y4.data(), ldy);
                    }
                    std::vector<float> wr(static_cast<size_t>(K)), xr(static_cast<size_t>(K));
                    for (int64_t t = 0; t < tokens; ++t) {
                        if (quant) dequantizeRowQ8_0(p.xq.data() + t * (p.nb + 2), xr.data(), K);
                        for (int64_t r = 0; r < rows; ++r) {
                            const size_t o = static_cast<size_t>(t * ldy + r);
                            const std::string at = std::string(k->name) + " k=" + std::to_string(K) + " r=" +
                                                   std::to_string(r) + " t=" + std::to_string(t);
                            auto check = [&](float got, auto weight, auto act, const char* what) {
                                double ref = 0, absSum = 0;
                                for (int64_t i = 0; i < K; ++i) {
                                    const double v = static_cast<double>(weight(i)) * act(i);
                                    ref += v;
                                    absSum += std::fabs(v);
                                }
                                EXPECT_NEAR(got, ref, 1e-6 + 5e-6 * absSum) << what << " " << at;
                            };
                            const float* w = p.w.data() + r * p.ldw;
                            const uint16_t* wh = p.wh.data() + r * p.ldw;
                            const float* x = p.x.data() + t * p.ldx;
                            auto xf = [&](int64_t i) { return x[i]; };
                            check(yf[o], [&](int64_t i) { return w[i]; }, xf, "f32");
                            check(yh[o], [&](int64_t i) { return fp16ToFloat(wh[i]); }, xf, "f16");
                            if (!quant) continue;
                            auto xd = [&](int64_t i) { return xr[static_cast<size_t>(i)]; };
                            dequantizeRowQ8_0(p.w8.data() + r * (p.nb + 1), wr.data(), K);
                            check(y8[o], [&](int64_t i) { return wr[static_cast<size_t>(i)]; }, xd, "q8_0");
                            dequantizeRowQ4_0(p.w4.data() + r * (p.nb + 1), wr.data(), K);
                            check(y4[o], [&](int64_t i) { return wr[static_cast<size_t>(i)]; }, xd, "q4_0");
                        }
                    }
                }
            }
        }
    }
}

// The VNNI quantised tiles sum each 4 bytes exactly into the lane the AVX2 tiles use and
// then take the same float steps, so quantised models give the same bits in both tables.
TEST(VecGemm, Avx512QuantisedEqualsAvx2BitForBit) {
    const VecKernels* a2 = avx2VecKernels();
    const VecKernels* a5 = avx512VecKernels();
    if (!a2 || !a5) GTEST_SKIP() << "needs both the AVX2 and the AVX-512 tables";
    for (int64_t rows : {1, 3, 9}) {
        for (int64_t tokens : {1, 2, 7}) {
            const Panel p(rows, tokens, 256, static_cast<uint32_t>(rows * 10 + tokens));
            const int64_t nb = p.nb, ldy = rows + 1;
            std::vector<float> y2(p.outSize()), y5(p.outSize());
            a2->gemmQ8_0(p.w8.data(), nb + 1, p.xq.data(), nb + 2, nb, rows, tokens, y2.data(), ldy);
            a5->gemmQ8_0(p.w8.data(), nb + 1, p.xq.data(), nb + 2, nb, rows, tokens, y5.data(), ldy);
            EXPECT_EQ(y2, y5) << "q8_0 rows=" << rows << " tokens=" << tokens;
            a2->gemmQ4_0(p.w4.data(), nb + 1, p.xq.data(), nb + 2, nb, rows, tokens, y2.data(), ldy);
            a5->gemmQ4_0(p.w4.data(), nb + 1, p.xq.data(), nb + 2, nb, rows, tokens, y5.data(), ldy);
            EXPECT_EQ(y2, y5) << "q4_0 rows=" << rows << " tokens=" << tokens;
        }
    }
}

TEST(VecGemm, F16RowsAsF32EqualTheF32GemmOnTheConvertedRows) {
    // An F16 KV cache's key scores: gemmF16AsF32 is gemmF32 on the rows converted to F32,
    // including rows longer than its conversion buffer and more rows than fit it at once.
    for (const VecKernels* k : tables()) {
        for (auto [n, rows, tokens] : {std::tuple<int64_t, int64_t, int64_t>{8, 16, 1}, {48, 16, 1}, {48, 100, 8},
                                       {37, 5, 3}, {64, 130, 6}, {5000, 3, 2}}) {
            const int64_t ldw = n + 3, ldx = n + 1, ldy = rows + 2;
            const auto raw = randomFloats(static_cast<size_t>(rows * ldw), static_cast<uint32_t>(n + rows));
            std::vector<uint16_t> w16(raw.size());
            std::vector<float> w32(raw.size());
            for (size_t i = 0; i < raw.size(); ++i) w32[i] = fp16ToFloat(w16[i] = floatToFp16(raw[i]));
            const auto x = randomFloats(static_cast<size_t>(tokens * ldx), 41);
            std::vector<float> y16(static_cast<size_t>(tokens * ldy), -1.0f), y32(y16);
            k->gemmF16AsF32(w16.data(), ldw, x.data(), ldx, n, rows, tokens, y16.data(), ldy);
            k->gemmF32(w32.data(), ldw, x.data(), ldx, n, rows, tokens, y32.data(), ldy);
            EXPECT_EQ(y16, y32) << k->name << " n=" << n << " rows=" << rows << " tokens=" << tokens;
        }
    }
}

TEST(VecConvert, ToF16MatchesTheScalarRoundingEverywhere) {
    // Every table's F32 -> F16 against floatToFp16: normals, ties, subnormals, overflow,
    // infinities and zeros, at lengths around the vector steps.
    std::vector<float> x;
    for (uint32_t bits = 0x33000000u; bits < 0x47800000u; bits += 0x1234u) { // 2^-25 .. 65536
        float f;
        std::memcpy(&f, &bits, sizeof f);
        x.push_back(f);
        x.push_back(-f);
    }
    for (float f : {0.0f, -0.0f, 65504.0f, 65519.0f, 65520.0f, 1e9f, -1e9f, 5.9604645e-8f, 2.9802322e-8f,
                    1.0009765625f + 0.00048828125f, std::numeric_limits<float>::infinity(),
                    -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min()})
        x.push_back(f);
    for (const VecKernels* k : tables()) {
        for (size_t n : {size_t{1}, size_t{7}, size_t{8}, size_t{9}, x.size()}) {
            std::vector<uint16_t> y(n);
            k->toF16(x.data() + (x.size() - n), y.data(), static_cast<int64_t>(n));
            for (size_t i = 0; i < n; ++i)
                ASSERT_EQ(y[i], floatToFp16(x[x.size() - n + i])) << k->name << " x=" << x[x.size() - n + i];
        }
    }
}

TEST(VecGemm, ShortTilesStoreNothingPastTheLastOutput) {
    // Outputs that end right before an unmapped page: a tile's short store (fewer than 4
    // outputs) must not touch the page even with its lanes masked off (a masked 4-lane
    // vextractf32x4 faulted there on AMD Zen 5). A fault ends the test binary.
    const long page = sysconf(_SC_PAGESIZE);
    auto* base = static_cast<char*>(mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(base, MAP_FAILED);
    ASSERT_EQ(mprotect(base + page, page, PROT_NONE), 0);
    auto* end = reinterpret_cast<float*>(base + page);
    const auto w = randomFloats(3 * 64, 5), x = randomFloats(64, 6);
    std::vector<uint16_t> w16(w.size());
    for (size_t i = 0; i < w.size(); ++i) w16[i] = floatToFp16(w[i]);
    for (const VecKernels* k : tables()) {
        for (int64_t rows = 1; rows <= 3; ++rows) {
            std::vector<float> ref(static_cast<size_t>(rows));
            k->gemmF32(w.data(), 64, x.data(), 64, 48, rows, 1, ref.data(), 1);
            k->gemmF32(w.data(), 64, x.data(), 64, 48, rows, 1, end - rows, 1);
            EXPECT_TRUE(std::equal(ref.begin(), ref.end(), end - rows)) << k->name << " rows=" << rows;
            k->gemmF16AsF32(w16.data(), 64, x.data(), 64, 48, rows, 1, end - rows, 1);
            k->gemmF16(w16.data(), 64, x.data(), 64, 48, rows, 1, end - rows, 1);
        }
        k->scoreRowsF32(w.data(), 64, 1, x.data(), 1, 0, 1, 48, end - 1, 1);
        k->scoreRowsF16(w16.data(), 64, 1, x.data(), 1, 0, 1, 48, end - 1, 1);
    }
    munmap(base, 2 * page);
}
