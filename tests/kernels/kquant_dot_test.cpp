// K-quant x Q8_K dots in every kernel table against a double-precision loop over the dequantised
// blocks, and k-quant matmuls independent of threads and batching.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/kquant_dot.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/vec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

using namespace mb::kernels;

namespace {

// Random bytes for every block (all bit patterns of scales, mins and values), then finite F16
// block scales so products stay comparable. The F16 fields sit at fixed offsets per type.
std::vector<uint8_t> randomBlocks(TensorType t, int64_t rows, int64_t cols, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> bytes(rowBytes(t, cols) * static_cast<size_t>(rows));
    for (auto& b : bytes) b = static_cast<uint8_t>(rng());
    std::uniform_real_distribution<float> scale(-0.02f, 0.02f);
    const size_t bb = blockBytes(t);
    size_t dOff = 0;
    int fields = 2; // d and dmin, adjacent
    switch (t) {
    case TensorType::Q2_K: dOff = offsetof(BlockQ2_K, d); break;
    case TensorType::Q3_K: dOff = offsetof(BlockQ3_K, d), fields = 1; break;
    case TensorType::Q4_K: dOff = offsetof(BlockQ4_K, d); break;
    case TensorType::Q5_K: dOff = offsetof(BlockQ5_K, d); break;
    case TensorType::Q6_K: dOff = offsetof(BlockQ6_K, d), fields = 1; break;
    case TensorType::IQ4_XS: dOff = offsetof(BlockIq4Xs, d), fields = 1; break;
    default: ADD_FAILURE() << "not a k-quant"; break;
    }
    for (size_t b = 0; b < bytes.size(); b += bb)
        for (int f = 0; f < fields; ++f) {
            const uint16_t h = floatToFp16(scale(rng));
            std::memcpy(bytes.data() + b + dOff + 2 * f, &h, 2);
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

constexpr int64_t kTileTokensForTest = kKTileTokens;

const TensorType kTypes[] = {TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K,
                             TensorType::Q5_K, TensorType::Q6_K, TensorType::IQ4_XS};

float dotOf(const VecKernels& k, TensorType t, const void* w, const BlockQ8_K* x, int64_t nb) {
    switch (t) {
    case TensorType::Q2_K: return k.dotQ2_K(static_cast<const BlockQ2_K*>(w), x, nb);
    case TensorType::Q3_K: return k.dotQ3_K(static_cast<const BlockQ3_K*>(w), x, nb);
    case TensorType::Q4_K: return k.dotQ4_K(static_cast<const BlockQ4_K*>(w), x, nb);
    case TensorType::Q5_K: return k.dotQ5_K(static_cast<const BlockQ5_K*>(w), x, nb);
    case TensorType::Q6_K: return k.dotQ6_K(static_cast<const BlockQ6_K*>(w), x, nb);
    case TensorType::IQ4_XS: return k.dotIq4Xs(static_cast<const BlockIq4Xs*>(w), x, nb);
    default: return NAN;
    }
}

// Runs `tile` (outputs 2 apart) where the table has it; false where it is nullptr.
template <class Block>
bool tileWith(void (*tile)(const Block*, const BlockQ8_K*, int64_t, int64_t, float*, int64_t), const void* w,
              const BlockQ8_K* x, int64_t ldx, int64_t nb, float* y) {
    if (!tile) return false;
    tile(static_cast<const Block*>(w), x, ldx, nb, y, 2);
    return true;
}

} // namespace

TEST(KQuantDot, EveryTableMatchesADoubleLoopOverTheDequantisedBlocks) {
    for (const VecKernels* k : availableVecKernels()) {
        for (TensorType t : kTypes) {
            for (int64_t cols : {256, 512, 4096 + 256}) {
                const int64_t nb = cols / 256;
                const auto w = randomBlocks(t, 1, cols, static_cast<uint32_t>(cols));
                const auto xf = randomFloats(static_cast<size_t>(cols), 7);
                std::vector<BlockQ8_K> x(static_cast<size_t>(nb));
                k->quantizeQ8_K(xf.data(), x.data(), cols);
                // The table's quantisation is quantizeRowQ8_K's, bit for bit.
                std::vector<BlockQ8_K> xr(x.size());
                quantizeRowQ8_K(xf.data(), xr.data(), cols);
                ASSERT_EQ(std::memcmp(x.data(), xr.data(), x.size() * sizeof(BlockQ8_K)), 0) << k->name;
                std::vector<float> wd(static_cast<size_t>(cols)), xd(static_cast<size_t>(cols));
                dequantizeRow(t, w.data(), wd.data(), cols);
                dequantizeRow(TensorType::Q8_K, x.data(), xd.data(), cols);
                double ref = 0.0, mag = 0.0;
                for (int64_t i = 0; i < cols; ++i) {
                    ref += static_cast<double>(wd[static_cast<size_t>(i)]) * xd[static_cast<size_t>(i)];
                    mag += std::fabs(static_cast<double>(wd[static_cast<size_t>(i)]) * xd[static_cast<size_t>(i)]);
                }
                const float got = dotOf(*k, t, w.data(), x.data(), nb);
                EXPECT_NEAR(got, ref, 2e-6 * mag + 1e-6)
                    << k->name << " " << tensorTypeName(t) << " cols " << cols;
            }
        }
    }
}

TEST(KQuantDot, MatmulIsTheSameBitsForAnyThreadsAndBatch) {
    const int64_t rows = 100, cols = 512;
    for (TensorType t : kTypes) {
        const auto w = randomBlocks(t, rows, cols, 3);
        const WeightMatrix m{t, rows, cols, w.data()};
        const int64_t n = 9; // two tiles and one token alone
        const auto x = randomFloats(static_cast<size_t>(n * cols), 4);
        std::vector<float> one(static_cast<size_t>(n * rows)), two(one.size()), single(static_cast<size_t>(rows));
        ThreadPool p1(1), p2(2);
        MatmulScratch s1, s2;
        matmul(m, x.data(), n, one.data(), p1, s1);
        matmul(m, x.data(), n, two.data(), p2, s2);
        EXPECT_EQ(one, two) << tensorTypeName(t);
        for (int64_t tk : {0, 3, 8}) {
            matmul(m, x.data() + tk * cols, 1, single.data(), p2, s2);
            EXPECT_TRUE(std::equal(single.begin(), single.end(), one.begin() + tk * rows))
                << tensorTypeName(t) << " token " << tk;
        }
        // F32 activations: the dequantised rows times the unquantised x, close to the integer path.
        MatmulScratch exact;
        exact.f32Activations = true;
        std::vector<float> e(one.size());
        matmul(m, x.data(), n, e.data(), p2, exact);
        double err = 0, norm = 0;
        for (size_t i = 0; i < e.size(); ++i) err += (e[i] - one[i]) * (e[i] - one[i]), norm += e[i] * e[i];
        EXPECT_LT(err / norm, 1e-3) << tensorTypeName(t);
    }
}

// Every table's tiles (kKTileTokens tokens, x rows and outputs at strides that are not the row's)
// give each token the bits of that table's dot, for every type that has one.
TEST(KQuantDot, TilesGiveEachTokenTheDotsBits) {
    for (const VecKernels* k : availableVecKernels()) {
        for (int64_t cols : {256, 768, 4096 + 256}) {
            const int64_t nb = cols / 256, ldx = nb + 1, tokens = kTileTokensForTest;
            const auto xf = randomFloats(static_cast<size_t>(tokens * cols), 9);
            std::vector<BlockQ8_K> x(static_cast<size_t>(tokens * ldx));
            for (int64_t t = 0; t < tokens; ++t) k->quantizeQ8_K(xf.data() + t * cols, x.data() + t * ldx, cols);
            for (TensorType t : kTypes) {
                const auto w = randomBlocks(t, 1, cols, 11);
                float y[2 * kTileTokensForTest];
                const void* wp = w.data();
                bool tiled = true;
                switch (t) {
                case TensorType::Q2_K: tiled = tileWith(k->tileQ2_K, wp, x.data(), ldx, nb, y); break;
                case TensorType::Q3_K: tiled = tileWith(k->tileQ3_K, wp, x.data(), ldx, nb, y); break;
                case TensorType::Q4_K: tiled = tileWith(k->tileQ4_K, wp, x.data(), ldx, nb, y); break;
                case TensorType::Q5_K: tiled = tileWith(k->tileQ5_K, wp, x.data(), ldx, nb, y); break;
                case TensorType::Q6_K: tiled = tileWith(k->tileQ6_K, wp, x.data(), ldx, nb, y); break;
                case TensorType::IQ4_XS: tiled = tileWith(k->tileIq4Xs, wp, x.data(), ldx, nb, y); break;
                default: FAIL();
                }
                if (!tiled) continue; // the portable table loops over its dots
                for (int64_t i = 0; i < tokens; ++i)
                    EXPECT_EQ(y[2 * i], dotOf(*k, t, w.data(), x.data() + i * ldx, nb))
                        << k->name << " " << tensorTypeName(t) << " cols " << cols << " token " << i;
            }
        }
    }
}
