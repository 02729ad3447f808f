// Attention's and the FFN's row kernels in every table: the V sums (axpyRows and its F16 and
// many-query forms), whole-row decode attention, and the elementwise exp and SiLU, against
// the per-query, per-head or double-precision reference each promises to equal.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/vec.h"
#include "tests/kernels/vec_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

using namespace mb::kernels;
using mb::kernels::test::randomFloats;
using mb::kernels::test::tables;

TEST(VecAxpyRows, EqualsRepeatedAxpyAndDoubleReference) {
    for (const VecKernels* k : tables()) {
        for (int64_t n : {1, 7, 8, 31, 32, 33, 48, 64, 72, 100, 128, 129, 200}) {
            for (int64_t m : {0, 1, 3, 16, 17}) {
                const int64_t ldx = n + 4;
                const auto a = randomFloats(static_cast<size_t>(std::max<int64_t>(m, 1)), 13);
                const auto x = randomFloats(static_cast<size_t>(std::max<int64_t>(m, 1) * ldx), 14);
                auto y1 = randomFloats(static_cast<size_t>(n), 15);
                auto y2 = y1;
                const auto y0 = y1;
                k->axpyRows(a.data(), x.data(), ldx, m, y1.data(), n);
                for (int64_t j = 0; j < m; ++j) k->axpy(a[static_cast<size_t>(j)], x.data() + j * ldx, y2.data(), n);
                EXPECT_EQ(y1, y2) << k->name << " n=" << n << " m=" << m;
                for (int64_t i = 0; i < n; ++i) {
                    double ref = y0[static_cast<size_t>(i)], absSum = std::fabs(ref);
                    for (int64_t j = 0; j < m; ++j) {
                        const double v = static_cast<double>(a[static_cast<size_t>(j)]) * x[static_cast<size_t>(j * ldx + i)];
                        ref += v;
                        absSum += std::fabs(v);
                    }
                    EXPECT_NEAR(y1[static_cast<size_t>(i)], ref, 1e-6 + 1e-6 * absSum) << k->name << " n=" << n << " i=" << i;
                }
            }
        }
    }
}

TEST(VecAxpyRows, F16RowsEqualTheF32RowsTheyConvertTo) {
    // An F16 KV cache's V sum: each table's axpyRowsF16 is its axpyRows on the converted rows.
    for (const VecKernels* k : tables()) {
        for (int64_t n : {1, 7, 8, 15, 16, 17, 31, 32, 33, 48, 64, 72, 100, 128, 129, 200}) {
            for (int64_t m : {0, 1, 3, 16, 17}) {
                const int64_t ldx = n + 3;
                const auto a = randomFloats(static_cast<size_t>(std::max<int64_t>(m, 1)), 23);
                const auto raw = randomFloats(static_cast<size_t>(std::max<int64_t>(m, 1) * ldx), 24);
                std::vector<uint16_t> x16(raw.size());
                std::vector<float> x32(raw.size());
                for (size_t i = 0; i < raw.size(); ++i) {
                    x16[i] = floatToFp16(raw[i]);
                    x32[i] = fp16ToFloat(x16[i]);
                }
                auto y16 = randomFloats(static_cast<size_t>(n), 25);
                auto y32 = y16;
                k->axpyRowsF16(a.data(), x16.data(), ldx, m, y16.data(), n);
                k->axpyRows(a.data(), x32.data(), ldx, m, y32.data(), n);
                EXPECT_EQ(y16, y32) << k->name << " n=" << n << " m=" << m;
            }
        }
    }
}

TEST(VecAttentionRows, WholeRowsForManyHeadsEqualOneHeadAtATime) {
    // A decode step's attention kernels against this table's own per-head ones, for F32 and
    // F16 rows: the scores against gemmF32 / gemmF16AsF32 (one token), the V sums against
    // axpyRows / axpyRowsF16, bit for bit. Query heads firstHead.. map to kv heads by `group`;
    // head sizes around the 8- and 16-lane steps.
    for (const VecKernels* k : tables()) {
        for (int64_t hd : {8, 13, 16, 37, 48, 64}) {
            for (auto [heads, firstHead, group] : {std::tuple<int64_t, int64_t, int64_t>{1, 0, 1}, {6, 0, 1}, {3, 5, 1},
                                                   {8, 0, 4}, {5, 2, 3}}) {
                const int64_t kvHeads = (firstHead + heads - 1) / group + 1, m = 19;
                const int64_t ld = kvHeads * hd + 5, lds = m + 3;
                const auto rows32 = randomFloats(static_cast<size_t>(m * ld), static_cast<uint32_t>(hd + heads));
                std::vector<uint16_t> rows16(rows32.size());
                for (size_t i = 0; i < rows32.size(); ++i) rows16[i] = floatToFp16(rows32[i]);
                const auto q = randomFloats(static_cast<size_t>(heads * hd), 31);
                const auto p = randomFloats(static_cast<size_t>(heads * lds), 33);
                const auto y0 = randomFloats(static_cast<size_t>(heads * hd), 32);
                auto check = [&](const char* type, auto scoreRows, auto sumRows, auto gemm, auto axpyRows,
                                 const auto& rows) {
                    std::vector<float> s(static_cast<size_t>(heads * lds), -1.0f), ref(s.size(), -1.0f);
                    scoreRows(rows.data(), ld, m, q.data(), heads, firstHead, group, hd, s.data(), lds);
                    auto y = y0, yRef = y0;
                    sumRows(p.data(), lds, rows.data(), ld, m, heads, firstHead, group, hd, y.data());
                    for (int64_t h = 0; h < heads; ++h) {
                        const int64_t off = (firstHead + h) / group * hd;
                        gemm(rows.data() + off, ld, q.data() + h * hd, 0, hd, m, 1, ref.data() + h * lds, 0);
                        axpyRows(p.data() + h * lds, rows.data() + off, ld, m, yRef.data() + h * hd, hd);
                    }
                    EXPECT_EQ(s, ref) << k->name << " " << type << " hd=" << hd << " heads=" << heads << " group=" << group;
                    EXPECT_EQ(y, yRef) << k->name << " " << type << " hd=" << hd << " heads=" << heads << " group=" << group;
                };
                check("F32", k->scoreRowsF32, k->sumRowsF32, k->gemmF32, k->axpyRows, rows32);
                check("F16", k->scoreRowsF16, k->sumRowsF16, k->gemmF16AsF32, k->axpyRowsF16, rows16);
            }
        }
    }
}

TEST(VecElementwise, SiluMulIsWithinItsStatedErrorEverywhereAndLeavesThePastTheEndAlone) {
    // The FFN gate: each table within 4e-7 relative of silu(g) * u computed in double (or
    // 2e-36 |u| where silu(g) is that small), across the exponent's range (where e^-g
    // underflows to 0 and where it would overflow), with every tail length around the 8- and
    // 16-lane steps; the element past n is never written.
    for (const VecKernels* k : tables()) {
        for (int64_t n : {1, 2, 7, 8, 9, 15, 16, 17, 33, 768}) {
            std::vector<float> g(static_cast<size_t>(n) + 1), u(g.size());
            std::mt19937 rng(static_cast<uint32_t>(n));
            std::uniform_real_distribution<float> wide(-120.0f, 120.0f), narrow(-8.0f, 8.0f);
            for (size_t i = 0; i < g.size(); ++i) {
                g[i] = i % 3 == 0 ? wide(rng) : narrow(rng);
                u[i] = narrow(rng);
            }
            g[0] = 0.0f;
            if (n > 4) { // around where e^-g overflows F32 and where silu(g) leaves the normal range
                g[1] = -88.5f;
                g[2] = -100.0f;
                g[3] = -87.0f;
                g[4] = 89.0f;
            }
            const auto g0 = g;
            k->siluMul(g.data(), u.data(), n);
            for (int64_t i = 0; i < n; ++i) {
                const double x = g0[static_cast<size_t>(i)];
                const double want = x / (1.0 + std::exp(-x)) * u[static_cast<size_t>(i)];
                EXPECT_NEAR(g[static_cast<size_t>(i)], want,
                            4e-7 * std::abs(want) + 2e-36 * std::abs(u[static_cast<size_t>(i)]))
                    << k->name << " n=" << n << " g=" << x;
            }
            EXPECT_EQ(g[static_cast<size_t>(n)], g0[static_cast<size_t>(n)]) << k->name << " n=" << n;
        }
    }
}

TEST(VecElementwise, ExpShiftSumIsWithinItsStatedErrorAndSumsWhatItWrites) {
    // Softmax's numerator: e^(x - shift) within 2 ulp (2.4e-7 relative) of the float
    // difference's exponential, 0 far below, and the returned sum equal to the written
    // values' sum (to float rounding).
    for (const VecKernels* k : tables()) {
        for (int64_t n : {1, 7, 8, 9, 16, 17, 100}) {
            auto x = randomFloats(static_cast<size_t>(n), static_cast<uint32_t>(n + 9));
            for (auto& v : x) v *= 20.0f;
            x[0] = -200.0f;
            const auto x0 = x;
            const float shift = 3.0f;
            const float sum = k->expShiftSum(x.data(), n, shift);
            double written = 0;
            for (int64_t i = 0; i < n; ++i) {
                const float arg = x0[static_cast<size_t>(i)] - shift; // the float difference, as the kernels take it
                const double want = std::exp(static_cast<double>(arg));
                EXPECT_NEAR(x[static_cast<size_t>(i)], want, 2.4e-7 * want + 1e-37) << k->name << " n=" << n << " i=" << i;
                written += x[static_cast<size_t>(i)];
            }
            EXPECT_NEAR(sum, written, 1e-6 * written) << k->name << " n=" << n;
        }
    }
}

TEST(VecAxpyRows, ManyQueriesAtOnceEqualOneQueryAtATime) {
    // A prefill run's V sum: axpyRowsQ (axpyRowsQF16) for several queries over the same rows
    // gives each query exactly its own axpyRows (axpyRowsF16), for query counts around the
    // passes of 4 and row widths around the 16-lane steps and the 64-lane chunks.
    for (const VecKernels* k : tables()) {
        for (int64_t queries : {1, 2, 3, 4, 5, 8, 9}) {
            for (int64_t n : {1, 15, 16, 17, 48, 64, 65, 100, 128}) {
                const int64_t m = 16, ldx = n + 7, lda = m + 3, ldy = n + 5;
                const auto a = randomFloats(static_cast<size_t>(queries * lda), static_cast<uint32_t>(queries + n));
                const auto x32 = randomFloats(static_cast<size_t>(m * ldx), static_cast<uint32_t>(n + 50));
                std::vector<uint16_t> x16(x32.size());
                for (size_t i = 0; i < x32.size(); ++i) x16[i] = floatToFp16(x32[i]);
                const auto y0 = randomFloats(static_cast<size_t>(queries * ldy), 61);
                auto y = y0, yRef = y0, y16 = y0, y16Ref = y0;
                k->axpyRowsQ(a.data(), lda, queries, x32.data(), ldx, m, y.data(), ldy, n);
                k->axpyRowsQF16(a.data(), lda, queries, x16.data(), ldx, m, y16.data(), ldy, n);
                for (int64_t q = 0; q < queries; ++q) {
                    k->axpyRows(a.data() + q * lda, x32.data(), ldx, m, yRef.data() + q * ldy, n);
                    k->axpyRowsF16(a.data() + q * lda, x16.data(), ldx, m, y16Ref.data() + q * ldy, n);
                }
                EXPECT_EQ(y, yRef) << k->name << " queries=" << queries << " n=" << n;
                EXPECT_EQ(y16, y16Ref) << k->name << " queries=" << queries << " n=" << n;
            }
        }
    }
}

TEST(VecElementwise, ScaleMaxScalesExactlyAndReturnsTheLargest) {
    // Softmax's first pass: every x[i] * scale exactly as a scalar multiply gives it, and the
    // largest of them, for lengths around the 8-lane steps and the 32-element unrolled loop,
    // with the maximum placed first, last and in the tail.
    for (const VecKernels* k : tables()) {
        for (int64_t n : {1, 2, 7, 8, 9, 31, 32, 33, 100}) {
            for (int64_t at : {int64_t{0}, n - 1, n / 2}) {
                auto x = randomFloats(static_cast<size_t>(n), static_cast<uint32_t>(n * 7 + at));
                for (auto& v : x) v = v * 40.0f - 30.0f; // all negative but the planted maximum
                x[static_cast<size_t>(at)] = 11.5f;
                const auto x0 = x;
                const float scale = 0.14433756f;
                const float got = k->scaleMax(x.data(), n, scale);
                float want = x0[0] * scale;
                for (int64_t i = 0; i < n; ++i) {
                    const float y = x0[static_cast<size_t>(i)] * scale;
                    EXPECT_EQ(x[static_cast<size_t>(i)], y) << k->name << " n=" << n << " i=" << i;
                    want = want < y ? y : want;
                }
                EXPECT_EQ(got, want) << k->name << " n=" << n << " at=" << at;
            }
        }
    }
}
