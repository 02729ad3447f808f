// Q4_1, Q5_0, Q5_1 and IQ4_NL x Q8_0 dots and tiles in every kernel table against a double loop
// over the dequantised blocks, tiles against dots bit for bit, and matmuls of these types
// independent of threads and batching.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/quant_legacy.h"
#include "kernels/cpu/vec.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace mb::kernels;

namespace {

const TensorType kTypes[] = {TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::IQ4_NL};

bool hasMin(TensorType t) { return t == TensorType::Q4_1 || t == TensorType::Q5_1; }
// The largest |value| a block's scale multiplies: 15 or 31 (unsigned), 16 (Q5_0), 127 (IQ4_NL).
double maxValue(TensorType t) {
    switch (t) {
    case TensorType::Q4_1: return 15;
    case TensorType::Q5_0: return 16;
    case TensorType::Q5_1: return 31;
    default: return 127;
    }
}

// Random bytes for every block (every nibble and fifth-bit pattern), then finite F16 scales
// (and mins) uniform in +-scale; d sits at offset 0 and m at 2 in every one of these formats.
std::vector<uint8_t> randomBlocks(TensorType t, int64_t rows, int64_t cols, uint32_t seed, float scale = 0.02f) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> bytes(rowBytes(t, cols) * static_cast<size_t>(rows));
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    std::uniform_real_distribution<float> d(-scale, scale);
    for (size_t b = 0; b < bytes.size(); b += blockBytes(t))
        for (int f = 0; f < (hasMin(t) ? 2 : 1); ++f) {
            const uint16_t h = floatToFp16(d(rng) * (f == 1 ? 5.0f : 1.0f));
            std::memcpy(bytes.data() + b + 2 * f, &h, 2);
        }
    return bytes;
}

std::vector<float> randomFloats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> x(n);
    for (auto& v : x) v = d(rng);
    return x;
}

float dotOf(const VecKernels& k, TensorType t, const void* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb) {
    switch (t) {
    case TensorType::Q4_1: return k.dotQ4_1(static_cast<const BlockQ4_1*>(w), x, xs, nb);
    case TensorType::Q5_0: return k.dotQ5_0(static_cast<const BlockQ5_0*>(w), x, xs, nb);
    case TensorType::Q5_1: return k.dotQ5_1(static_cast<const BlockQ5_1*>(w), x, xs, nb);
    case TensorType::IQ4_NL: return k.dotIq4Nl(static_cast<const BlockIq4Nl*>(w), x, xs, nb);
    default: return NAN;
    }
}

void gemmOf(const VecKernels& k, TensorType t, const void* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs,
            int64_t ldx, int64_t nb, int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    switch (t) {
    case TensorType::Q4_1: k.gemmQ4_1(static_cast<const BlockQ4_1*>(w), ldw, x, xs, ldx, nb, rows, tokens, y, ldy); break;
    case TensorType::Q5_0: k.gemmQ5_0(static_cast<const BlockQ5_0*>(w), ldw, x, xs, ldx, nb, rows, tokens, y, ldy); break;
    case TensorType::Q5_1: k.gemmQ5_1(static_cast<const BlockQ5_1*>(w), ldw, x, xs, ldx, nb, rows, tokens, y, ldy); break;
    case TensorType::IQ4_NL:
        k.gemmIq4Nl(static_cast<const BlockIq4Nl*>(w), ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
        break;
    default: ADD_FAILURE() << "not a legacy type";
    }
}

// Activations of `tokens` rows of nb blocks, ldx blocks apart, quantised by the table, and their sums.
struct Activations {
    std::vector<BlockQ8_0> q;
    std::vector<Q8Sums> sums;
    Activations(const VecKernels& k, const std::vector<float>& x, int64_t tokens, int64_t nb, int64_t ldx)
        : q(static_cast<size_t>(tokens * ldx)), sums(q.size()) {
        for (int64_t t = 0; t < tokens; ++t) {
            k.quantizeQ8_0(x.data() + t * nb * 32, q.data() + t * ldx, nb * 32);
            activationSums(q.data() + t * ldx, nb, sums.data() + t * ldx);
        }
    }
};

// The dot of one row against one token in double, from the dequantised weights (ggml's bits) and
// activations, and the bound on a float evaluation: every term (dw dx s_b and mw xs_b) rounds
// twice at most and the sum adds nb + 8 roundings, each within 2^-24 of the terms' magnitude,
// which is at most sum_b (maxValue |dw_b| + |mw_b|) sum |x_b|.
struct Reference {
    double value = 0.0, bound = 0.0;
};
Reference reference(TensorType t, const uint8_t* w, const BlockQ8_0* x, int64_t nb) {
    const int64_t cols = nb * 32;
    std::vector<float> wd(static_cast<size_t>(cols)), xd(static_cast<size_t>(cols));
    dequantizeRow(t, w, wd.data(), cols);
    dequantizeRowQ8_0(x, xd.data(), cols);
    Reference r;
    double mag = 0.0;
    for (int64_t b = 0; b < nb; ++b) {
        uint16_t d = 0, m = 0;
        std::memcpy(&d, w + b * static_cast<int64_t>(blockBytes(t)), 2);
        if (hasMin(t)) std::memcpy(&m, w + b * static_cast<int64_t>(blockBytes(t)) + 2, 2);
        double xabs = 0.0;
        for (int64_t i = b * 32; i < (b + 1) * 32; ++i) {
            r.value += static_cast<double>(wd[static_cast<size_t>(i)]) * xd[static_cast<size_t>(i)];
            xabs += std::fabs(xd[static_cast<size_t>(i)]);
        }
        mag += (maxValue(t) * std::fabs(fp16ToFloat(d)) + std::fabs(fp16ToFloat(m))) * xabs;
    }
    r.bound = static_cast<double>(nb + 8) * std::ldexp(1.0, -23) * mag + 1e-30;
    return r;
}

} // namespace

TEST(LegacyDot, EveryTableMatchesADoubleLoopOverTheDequantisedBlocks) {
    for (const VecKernels* k : availableVecKernels())
        for (TensorType t : kTypes)
            for (int64_t cols : {32, 64, 4096 + 32}) {
                const int64_t nb = cols / 32;
                const auto w = randomBlocks(t, 1, cols, static_cast<uint32_t>(cols));
                const Activations x(*k, randomFloats(static_cast<size_t>(cols), 7), 1, nb, nb);
                const Reference ref = reference(t, w.data(), x.q.data(), nb);
                EXPECT_NEAR(dotOf(*k, t, w.data(), x.q.data(), x.sums.data(), nb), ref.value, ref.bound)
                    << k->name << " " << tensorTypeName(t) << " cols " << cols;
            }
}

// Blocks at the edges: the largest and smallest F16 scales and mins, every value at its extreme
// (all nibbles and fifth bits set or clear: Q5_0's -16, IQ4_NL's -127), activations at +-127
// (the products' pair sums at their largest: no saturation may show).
TEST(LegacyDot, ExtremeBlocksMatchTheDoubleLoop) {
    const uint16_t scales[] = {0x7BFF, 0xFBFF, 0x0001, 0x8400, 0x0000}; // +-65504, 2^-24, -2^-14, 0
    for (const VecKernels* k : availableVecKernels())
        for (TensorType t : kTypes)
            for (uint8_t fill : {0x00, 0xFF, 0x0F, 0xA5})
                for (uint16_t d : scales) {
                    const int64_t nb = 3, bb = static_cast<int64_t>(blockBytes(t));
                    std::vector<uint8_t> w(static_cast<size_t>(nb * bb), fill);
                    for (int64_t b = 0; b < nb; ++b) {
                        std::memcpy(w.data() + b * bb, &d, 2);
                        const uint16_t m = scales[(b + d) % 5];
                        if (hasMin(t)) std::memcpy(w.data() + b * bb + 2, &m, 2);
                    }
                    std::vector<float> xf(static_cast<size_t>(nb * 32));
                    for (size_t i = 0; i < xf.size(); ++i) xf[i] = (i % 3 == 0 ? -1.0f : 1.0f) * (i < 32 ? 1e4f : 1e-3f);
                    const Activations x(*k, xf, 1, nb, nb);
                    const Reference ref = reference(t, w.data(), x.q.data(), nb);
                    const float got = dotOf(*k, t, w.data(), x.q.data(), x.sums.data(), nb);
                    EXPECT_NEAR(got, ref.value, ref.bound)
                        << k->name << " " << tensorTypeName(t) << " fill " << int(fill) << " d " << d;
                    float tiled[2];
                    gemmOf(*k, t, w.data(), nb, x.q.data(), x.sums.data(), nb, nb, 1, 1, tiled, 1);
                    EXPECT_EQ(std::memcmp(&tiled[0], &got, sizeof got), 0) << k->name << " " << tensorTypeName(t);
                }
}

// Every tile shape (rows 1..11, tokens 1..13) against the dots, with strides that are not the
// row length; nothing outside the outputs is written.
TEST(LegacyDot, TilesGiveEachOutputTheDotsBits) {
    for (const VecKernels* k : availableVecKernels())
        for (TensorType t : kTypes)
            for (int64_t nb : {1, 3, 24}) {
                const int64_t maxRows = 11, maxTokens = 13, ldw = nb + 1, ldx = nb + 2;
                const auto w = randomBlocks(t, maxRows, ldw * 32, static_cast<uint32_t>(nb));
                const auto xf = randomFloats(static_cast<size_t>(maxTokens * nb * 32), 5);
                const Activations x(*k, xf, maxTokens, nb, ldx);
                const auto bb = static_cast<int64_t>(blockBytes(t));
                for (int64_t rows : {1, 2, 3, 4, 5, 8, 11})
                    for (int64_t tokens : {1, 2, 3, 4, 5, 6, 7, 13}) {
                        const int64_t ldy = rows + 1;
                        std::vector<float> y(static_cast<size_t>(tokens * ldy), -1.0f);
                        gemmOf(*k, t, w.data(), ldw, x.q.data(), x.sums.data(), ldx, nb, rows, tokens, y.data(), ldy);
                        for (int64_t tk = 0; tk < tokens; ++tk) {
                            for (int64_t r = 0; r < rows; ++r)
                                ASSERT_EQ(y[static_cast<size_t>(tk * ldy + r)],
                                          dotOf(*k, t, w.data() + r * ldw * bb, x.q.data() + tk * ldx,
                                                x.sums.data() + tk * ldx, nb))
                                    << k->name << " " << tensorTypeName(t) << " nb " << nb << " rows " << rows
                                    << " tokens " << tokens << " at " << r << ", " << tk;
                            ASSERT_EQ(y[static_cast<size_t>(tk * ldy + rows)], -1.0f);
                        }
                    }
            }
}

// Whole matrices through matmul: the same bits on 1 and 2 threads, for one token alone and
// inside a batch (odd counts: tiles and a remainder); near the portable reference and near
// the F32-activation product (the activations' quantisation error only).
TEST(LegacyMatmul, TheSameBitsForAnyThreadsAndBatch) {
    const int64_t rows = 100;
    for (TensorType t : kTypes)
        for (int64_t cols : {96, 4096 + 32}) {
            const auto w = randomBlocks(t, rows, cols, 3);
            const WeightMatrix m{t, rows, cols, w.data()};
            const int64_t n = 7;
            const auto x = randomFloats(static_cast<size_t>(n * cols), 4);
            std::vector<float> one(static_cast<size_t>(n * rows)), two(one.size()), single(static_cast<size_t>(rows));
            ThreadPool p1(1), p2(2);
            MatmulScratch s1, s2;
            matmul(m, x.data(), n, one.data(), p1, s1);
            matmul(m, x.data(), n, two.data(), p2, s2);
            const std::string at = std::string(tensorTypeName(t)) + " cols " + std::to_string(cols);
            EXPECT_EQ(one, two) << at;
            for (int64_t tk : {0, 3, 6}) {
                matmul(m, x.data() + tk * cols, 1, single.data(), p2, s2);
                EXPECT_TRUE(std::equal(single.begin(), single.end(), one.begin() + tk * rows)) << at << " token " << tk;
            }
            std::vector<float> ref(one.size()), exact(one.size());
            matmulReference(m, x.data(), n, ref.data());
            MatmulScratch f32;
            f32.f32Activations = true;
            matmul(m, x.data(), n, exact.data(), p2, f32);
            double errRef = 0, errExact = 0, norm = 0;
            for (size_t i = 0; i < one.size(); ++i) {
                errRef += (ref[i] - one[i]) * (ref[i] - one[i]);
                errExact += (exact[i] - one[i]) * (exact[i] - one[i]);
                norm += exact[i] * exact[i];
            }
            EXPECT_LT(errRef / norm, 1e-10) << at; // two float summation orders
            EXPECT_LT(errExact / norm, 1e-3) << at; // Q8_0 activations: about 1e-4
        }
}
