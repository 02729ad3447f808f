// Row operations against direct double-precision formulas.
#include "kernels/cpu/ops.h"

#include "kernels/cpu/fp16.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

using namespace mb::kernels;

namespace {
std::vector<float> randomFloats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> x(n);
    for (auto& v : x) v = d(rng);
    return x;
}
} // namespace

TEST(Ops, RmsNormMatchesFormula) {
    const auto x = randomFloats(100, 1);
    const auto w = randomFloats(100, 2);
    std::vector<float> out(100);
    rmsNorm(x.data(), w.data(), out.data(), 100, 1e-5f);
    double ss = 0;
    for (float v : x) ss += static_cast<double>(v) * v;
    const double scale = 1.0 / std::sqrt(ss / 100 + 1e-5);
    for (size_t i = 0; i < 100; ++i) EXPECT_NEAR(out[i], x[i] * scale * w[i], 1e-5);
}

TEST(Ops, SoftmaxIsADistributionAndStable) {
    std::vector<float> x = {1000.0f, 1001.0f, 999.0f, -1e30f};
    softmax(x.data(), 4);
    EXPECT_NEAR(std::accumulate(x.begin(), x.end(), 0.0), 1.0, 1e-6);
    EXPECT_NEAR(x[1], std::exp(1.0) / (1 + std::exp(1.0) + std::exp(-1.0)), 1e-6);
    EXPECT_EQ(x[3], 0.0f);
}

TEST(Ops, SiluMul) {
    std::vector<float> g = {-2.0f, 0.0f, 3.0f}, u = {1.0f, 5.0f, 0.5f};
    siluMul(g.data(), u.data(), 3);
    EXPECT_NEAR(g[0], -2.0 / (1 + std::exp(2.0)), 1e-6);
    EXPECT_EQ(g[1], 0.0f);
    EXPECT_NEAR(g[2], 0.5 * 3.0 / (1 + std::exp(-3.0)), 1e-6);
}

TEST(Ops, RopeRotatesAdjacentPairs) {
    const int64_t heads = 3, hd = 8;
    auto x = randomFloats(static_cast<size_t>(heads * hd), 3);
    const auto orig = x;
    std::vector<float> c(hd / 2), s(hd / 2);
    ropeAngles(5, hd, 10000.0f, c.data(), s.data());
    ropeApply(x.data(), heads, hd, hd, c.data(), s.data());
    for (int64_t h = 0; h < heads; ++h)
        for (int64_t i = 0; i < hd / 2; ++i) {
            const double theta = 5.0 * std::pow(10000.0, -2.0 * static_cast<double>(i) / hd);
            const double a = orig[static_cast<size_t>(h * hd + 2 * i)], b = orig[static_cast<size_t>(h * hd + 2 * i + 1)];
            EXPECT_NEAR(x[static_cast<size_t>(h * hd + 2 * i)], a * std::cos(theta) - b * std::sin(theta), 1e-5);
            EXPECT_NEAR(x[static_cast<size_t>(h * hd + 2 * i + 1)], a * std::sin(theta) + b * std::cos(theta), 1e-5);
        }
}

TEST(Ops, RopePartialDimensionLeavesTheRest) {
    auto x = randomFloats(8, 4);
    const auto orig = x;
    std::vector<float> c(2), s(2);
    ropeAngles(3, 4, 10000.0f, c.data(), s.data());
    ropeApply(x.data(), 1, 8, 4, c.data(), s.data());
    for (size_t i = 4; i < 8; ++i) EXPECT_EQ(x[i], orig[i]);
}

TEST(Ops, PagedAttentionMatchesNaive) {
    // 23 positions in blocks of 5 (the last partly filled), two heads per stride, reading
    // the second; head sizes below, at and above the 8- and 32-float vector steps.
    for (int64_t hd : {6, 8, 37, 64, 72}) {
        const int64_t len = 23, bs = 5, stride = 2 * hd + 1, headOffset = hd;
        const int64_t nBlocks = (len + bs - 1) / bs;
        const auto q = randomFloats(static_cast<size_t>(hd), 5);
        std::vector<std::vector<float>> kStore(static_cast<size_t>(nBlocks)), vStore(static_cast<size_t>(nBlocks));
        std::vector<const float*> kp, vp;
        // Scatter the blocks in reverse order in memory to prove the table is honoured.
        for (int64_t b = nBlocks - 1; b >= 0; --b) {
            kStore[static_cast<size_t>(b)] = randomFloats(static_cast<size_t>(bs * stride), static_cast<uint32_t>(10 + b));
            vStore[static_cast<size_t>(b)] = randomFloats(static_cast<size_t>(bs * stride), static_cast<uint32_t>(50 + b));
        }
        for (int64_t b = 0; b < nBlocks; ++b) {
            kp.push_back(kStore[static_cast<size_t>(b)].data());
            vp.push_back(vStore[static_cast<size_t>(b)].data());
        }
        std::vector<float> scores(len), out(static_cast<size_t>(hd));
        const float scale = 0.4f;
        attendPaged(q.data(), kp.data(), vp.data(), bs, len, stride, headOffset, hd, scale, scores.data(), out.data());

        std::vector<double> sc(len);
        double mx = -1e300, sum = 0;
        for (int64_t j = 0; j < len; ++j) {
            const float* k = kp[static_cast<size_t>(j / bs)] + (j % bs) * stride + headOffset;
            double d = 0;
            for (int64_t i = 0; i < hd; ++i) d += static_cast<double>(q[static_cast<size_t>(i)]) * k[i];
            sc[static_cast<size_t>(j)] = d * scale;
            mx = std::max(mx, sc[static_cast<size_t>(j)]);
        }
        for (auto& s : sc) sum += (s = std::exp(s - mx));
        for (int64_t i = 0; i < hd; ++i) {
            double o = 0;
            for (int64_t j = 0; j < len; ++j)
                o += sc[static_cast<size_t>(j)] / sum * vp[static_cast<size_t>(j / bs)][(j % bs) * stride + headOffset + i];
            EXPECT_NEAR(out[static_cast<size_t>(i)], o, 1e-5) << "hd=" << hd << " i=" << i;
        }
    }
}

TEST(Ops, PagedAttentionRunEqualsOneQueryAtATime) {
    // Runs of 1 to 9 consecutive queries (tiles of 6 and their edges) over positions in
    // blocks of 5, against attendPaged per query: the same bits, not merely close.
    for (int64_t hd : {8, 37, 48, 64}) {
        const int64_t bs = 5, stride = 2 * hd + 3, headOffset = hd + 1, total = 31;
        const int64_t nBlocks = (total + bs - 1) / bs;
        std::vector<std::vector<float>> kStore, vStore;
        std::vector<const float*> kp, vp;
        for (int64_t b = 0; b < nBlocks; ++b) {
            kStore.push_back(randomFloats(static_cast<size_t>(bs * stride), static_cast<uint32_t>(100 + b)));
            vStore.push_back(randomFloats(static_cast<size_t>(bs * stride), static_cast<uint32_t>(200 + b)));
            kp.push_back(kStore.back().data());
            vp.push_back(vStore.back().data());
        }
        const int64_t qStride = 3 * hd; // queries of one head inside wider rows, as in the forward pass
        for (int64_t queries = 1; queries <= 9; ++queries) {
            const int64_t len = total - queries + 1 - 2; // the last query sees all but 2 positions
            const auto q = randomFloats(static_cast<size_t>(queries * qStride), static_cast<uint32_t>(queries));
            const int64_t scoreStride = total + 4;
            std::vector<float> scores(static_cast<size_t>(queries * scoreStride)), out(static_cast<size_t>(queries * qStride));
            attendPagedRun(q.data(), qStride, queries, kp.data(), vp.data(), bs, len, stride, headOffset, hd, 0.3f,
                           scores.data(), scoreStride, out.data(), qStride);
            for (int64_t t = 0; t < queries; ++t) {
                std::vector<float> one(static_cast<size_t>(hd)), sc(static_cast<size_t>(total));
                attendPaged(q.data() + t * qStride, kp.data(), vp.data(), bs, len + t, stride, headOffset, hd, 0.3f,
                            sc.data(), one.data());
                for (int64_t i = 0; i < hd; ++i)
                    ASSERT_EQ(out[static_cast<size_t>(t * qStride + i)], one[static_cast<size_t>(i)])
                        << "hd=" << hd << " queries=" << queries << " t=" << t << " i=" << i;
            }
        }
    }
}

TEST(Ops, SoftmaxMatchesDoubleOnEveryLengthAndRange) {
    // Every length up to 40 (vector steps and masked tails), values spread over [-120, 30]
    // so some underflow to 0 and the rest span the exponent range.
    for (int64_t n = 1; n <= 40; ++n) {
        std::vector<float> x(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = -120.0f + static_cast<float>((i * 37) % 151);
        std::vector<double> ref(x.begin(), x.end());
        const double mx = *std::max_element(ref.begin(), ref.end());
        double sum = 0;
        for (double& v : ref) sum += (v = std::exp(v - mx));
        softmax(x.data(), n);
        for (int64_t i = 0; i < n; ++i) {
            const double want = ref[static_cast<size_t>(i)] / sum;
            EXPECT_NEAR(x[static_cast<size_t>(i)], want, 1e-6 * want + 1e-30) << "n=" << n << " i=" << i;
        }
    }
}

TEST(Ops, PagedAttentionOverAnF16CacheMatchesNaiveAndRunsAgree) {
    // K and V stored as F16 (the `mixed` precision's cache): a run gives F32 attention's bits
    // on the converted values, every query of it equals the same query attending alone, and
    // the double-precision formula on the F16 values holds within F32 rounding.
    for (int64_t hd : {8, 37, 48, 64}) {
        const int64_t bs = 5, stride = 2 * hd + 3, headOffset = hd + 1, total = 29;
        const int64_t nBlocks = (total + bs - 1) / bs;
        std::vector<std::vector<uint16_t>> kStore, vStore;
        std::vector<const uint16_t*> kp, vp;
        auto half = [](const std::vector<float>& x) {
            std::vector<uint16_t> h(x.size());
            for (size_t i = 0; i < x.size(); ++i) h[i] = floatToFp16(x[i]);
            return h;
        };
        for (int64_t b = 0; b < nBlocks; ++b) {
            kStore.push_back(half(randomFloats(static_cast<size_t>(bs * stride), static_cast<uint32_t>(300 + b))));
            vStore.push_back(half(randomFloats(static_cast<size_t>(bs * stride), static_cast<uint32_t>(400 + b))));
            kp.push_back(kStore.back().data());
            vp.push_back(vStore.back().data());
        }
        // The same values in F32: the F16 cache must give exactly F32 attention's bits on them.
        std::vector<std::vector<float>> k32, v32;
        std::vector<const float*> kp32, vp32;
        for (int64_t b = 0; b < nBlocks; ++b) {
            for (auto [src, dst] : {std::pair{&kStore, &k32}, std::pair{&vStore, &v32}}) {
                std::vector<float> f((*src)[static_cast<size_t>(b)].size());
                for (size_t i = 0; i < f.size(); ++i) f[i] = fp16ToFloat((*src)[static_cast<size_t>(b)][i]);
                dst->push_back(std::move(f));
            }
            kp32.push_back(k32.back().data());
            vp32.push_back(v32.back().data());
        }
        auto at = [&](const std::vector<const uint16_t*>& blocks, int64_t j, int64_t i) {
            return static_cast<double>(fp16ToFloat(blocks[static_cast<size_t>(j / bs)][(j % bs) * stride + headOffset + i]));
        };
        const int64_t qStride = 2 * hd, scoreStride = total + 2;
        const float scale = 0.35f;
        for (int64_t queries = 1; queries <= 8; ++queries) {
            const int64_t len = total - queries + 1;
            const auto q = randomFloats(static_cast<size_t>(queries * qStride), static_cast<uint32_t>(queries + 40));
            std::vector<float> scores(static_cast<size_t>(queries * scoreStride)), out(static_cast<size_t>(queries * qStride));
            attendPagedRun(q.data(), qStride, queries, kp.data(), vp.data(), bs, len, stride, headOffset, hd, scale,
                           scores.data(), scoreStride, out.data(), qStride);
            std::vector<float> out32(out.size());
            attendPagedRun(q.data(), qStride, queries, kp32.data(), vp32.data(), bs, len, stride, headOffset, hd, scale,
                           scores.data(), scoreStride, out32.data(), qStride);
            for (int64_t t = 0; t < queries; ++t)
                for (int64_t i = 0; i < hd; ++i)
                    ASSERT_EQ(out[static_cast<size_t>(t * qStride + i)], out32[static_cast<size_t>(t * qStride + i)])
                        << "hd=" << hd << " queries=" << queries << " t=" << t << " i=" << i;
            for (int64_t t = 0; t < queries; ++t) {
                std::vector<float> one(static_cast<size_t>(hd)), sc(static_cast<size_t>(total));
                attendPagedRun(q.data() + t * qStride, 0, 1, kp.data(), vp.data(), bs, len + t, stride, headOffset, hd,
                               scale, sc.data(), 0, one.data(), 0);
                std::vector<double> ref(static_cast<size_t>(len + t));
                double mx = -1e300, sum = 0;
                for (int64_t j = 0; j < len + t; ++j) {
                    double d = 0;
                    for (int64_t i = 0; i < hd; ++i) d += static_cast<double>(q[static_cast<size_t>(t * qStride + i)]) * at(kp, j, i);
                    mx = std::max(mx, ref[static_cast<size_t>(j)] = d * scale);
                }
                for (auto& r : ref) sum += (r = std::exp(r - mx));
                for (int64_t i = 0; i < hd; ++i) {
                    const float got = out[static_cast<size_t>(t * qStride + i)];
                    ASSERT_EQ(got, one[static_cast<size_t>(i)]) << "hd=" << hd << " queries=" << queries << " t=" << t;
                    double o = 0;
                    for (int64_t j = 0; j < len + t; ++j) o += ref[static_cast<size_t>(j)] / sum * at(vp, j, i);
                    EXPECT_NEAR(got, o, 1e-5) << "hd=" << hd << " queries=" << queries << " t=" << t << " i=" << i;
                }
            }
        }
    }
}

TEST(Ops, DecodeAttentionOverWholeRowsEqualsOneHeadAtATime) {
    // attendPagedHeads (a decode token, several heads reading whole positions) against
    // attendPagedRun for each head alone, over F32 and F16 caches: the same bits.
    // Grouped-query layouts included.
    for (int64_t hd : {8, 37, 48}) {
        for (auto [heads, firstHead, group, kvHeads] : {std::tuple<int64_t, int64_t, int64_t, int64_t>{6, 0, 1, 6},
                                                        {3, 3, 1, 6}, {8, 0, 2, 4}, {4, 4, 4, 2}}) {
            const int64_t bs = 5, len = 23, stride = kvHeads * hd + 2;
            const int64_t nBlocks = (len + bs - 1) / bs;
            std::vector<std::vector<float>> k32, v32;
            std::vector<std::vector<uint16_t>> k16, v16;
            std::vector<const float*> kp32, vp32;
            std::vector<const uint16_t*> kp16, vp16;
            for (int64_t b = 0; b < nBlocks; ++b) {
                for (auto [f32, f16] : {std::pair{&k32, &k16}, std::pair{&v32, &v16}}) {
                    f32->push_back(randomFloats(static_cast<size_t>(bs * stride), static_cast<uint32_t>(500 + b + f32->size() + (f32 == &v32 ? 100 : 0))));
                    std::vector<uint16_t> h(f32->back().size());
                    for (size_t i = 0; i < h.size(); ++i) h[i] = floatToFp16(f32->back()[i]);
                    f16->push_back(std::move(h));
                }
                kp32.push_back(k32.back().data());
                vp32.push_back(v32.back().data());
                kp16.push_back(k16.back().data());
                vp16.push_back(v16.back().data());
            }
            const auto q = randomFloats(static_cast<size_t>(heads * hd), 77);
            const int64_t scoreStride = len + 1;
            auto check = [&](const char* type, const auto& kp, const auto& vp) {
                std::vector<float> scores(static_cast<size_t>(heads * scoreStride)), out(static_cast<size_t>(heads * hd));
                attendPagedHeads(q.data(), heads, firstHead, group, kp.data(), vp.data(), bs, len, stride, hd, 0.3f,
                                 scores.data(), scoreStride, out.data());
                for (int64_t h = 0; h < heads; ++h) {
                    std::vector<float> one(static_cast<size_t>(hd)), sc(static_cast<size_t>(len));
                    attendPagedRun(q.data() + h * hd, 0, 1, kp.data(), vp.data(), bs, len, stride,
                                   (firstHead + h) / group * hd, hd, 0.3f, sc.data(), 0, one.data(), 0);
                    for (int64_t i = 0; i < hd; ++i)
                        ASSERT_EQ(out[static_cast<size_t>(h * hd + i)], one[static_cast<size_t>(i)])
                            << type << " hd=" << hd << " heads=" << heads << " group=" << group << " h=" << h
                            << " i=" << i;
                }
            };
            check("F32", kp32, vp32);
            check("F16", kp16, vp16);
        }
    }
}
