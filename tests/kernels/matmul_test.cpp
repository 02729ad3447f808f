// Threaded matmul for every weight type against a double-precision reference.
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/quant.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using namespace mb::kernels;

namespace {

struct Case {
    TensorType type;
    double nmseBound; // normalised MSE against the exact product of the unquantised weights
};

std::vector<float> randomFloats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> x(n);
    for (auto& v : x) v = d(rng);
    return x;
}

double nmse(const std::vector<float>& got, const std::vector<double>& ref) {
    double err = 0, norm = 0;
    for (size_t i = 0; i < ref.size(); ++i) {
        err += (got[i] - ref[i]) * (got[i] - ref[i]);
        norm += ref[i] * ref[i];
    }
    return err / norm;
}

} // namespace

TEST(Matmul, EveryTypeMatchesDoubleReference) {
    const Case cases[] = {{TensorType::F32, 1e-12}, {TensorType::F16, 1e-6}, {TensorType::BF16, 1e-4},
                          {TensorType::Q8_0, 1e-3}, {TensorType::Q4_0, 2e-2}};
    ThreadPool pool(3);
    for (const Case& c : cases) {
        for (int64_t n : {1, 3, 17}) {
            const int64_t rows = 37, cols = 96;
            const auto wf = randomFloats(static_cast<size_t>(rows * cols), 1);
            const auto x = randomFloats(static_cast<size_t>(n * cols), 2);
            std::vector<uint8_t> packed(rowBytes(c.type, cols) * static_cast<size_t>(rows));
            for (int64_t r = 0; r < rows; ++r)
                quantizeRow(c.type, wf.data() + r * cols, packed.data() + r * rowBytes(c.type, cols), cols);
            const WeightMatrix w{c.type, rows, cols, packed.data()};
            std::vector<double> ref(static_cast<size_t>(n * rows));
            for (int64_t t = 0; t < n; ++t)
                for (int64_t r = 0; r < rows; ++r) {
                    double s = 0;
                    for (int64_t k = 0; k < cols; ++k) s += static_cast<double>(wf[static_cast<size_t>(r * cols + k)]) * x[static_cast<size_t>(t * cols + k)];
                    ref[static_cast<size_t>(t * rows + r)] = s;
                }
            std::vector<float> y(static_cast<size_t>(n * rows)), yRef(y.size());
            MatmulScratch scratch;
            matmul(w, x.data(), n, y.data(), pool, scratch);
            matmulReference(w, x.data(), n, yRef.data());
            EXPECT_LT(nmse(y, ref), c.nmseBound) << tensorTypeName(c.type) << " n=" << n;
            EXPECT_LT(nmse(yRef, ref), c.nmseBound) << tensorTypeName(c.type) << " reference n=" << n;
        }
    }
}

TEST(Matmul, ResultIndependentOfThreadCount) {
    // Each output is one dot product computed by one thread, so results are bitwise equal.
    const int64_t rows = 300, cols = 256, n = 5;
    const auto wf = randomFloats(static_cast<size_t>(rows * cols), 3);
    const auto x = randomFloats(static_cast<size_t>(n * cols), 4);
    for (TensorType t : {TensorType::F16, TensorType::Q8_0, TensorType::Q4_0}) {
        std::vector<uint8_t> packed(rowBytes(t, cols) * static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r)
            quantizeRow(t, wf.data() + r * cols, packed.data() + r * rowBytes(t, cols), cols);
        const WeightMatrix w{t, rows, cols, packed.data()};
        std::vector<float> y1(static_cast<size_t>(n * rows)), y4(y1.size());
        MatmulScratch s1, s4;
        ThreadPool p1(1), p4(4);
        matmul(w, x.data(), n, y1.data(), p1, s1);
        matmul(w, x.data(), n, y4.data(), p4, s4);
        EXPECT_EQ(y1, y4) << tensorTypeName(t);
    }
}

TEST(Matmul, GroupEqualsSeparateProducts) {
    const int64_t cols = 64, n = 3;
    const auto x = randomFloats(static_cast<size_t>(n * cols), 9);
    std::vector<std::vector<uint8_t>> store;
    std::vector<WeightMatrix> ws;
    const TensorType types[] = {TensorType::Q8_0, TensorType::F16, TensorType::Q4_0};
    const int64_t rows[] = {40, 17, 33};
    for (int i = 0; i < 3; ++i) {
        const auto wf = randomFloats(static_cast<size_t>(rows[i] * cols), static_cast<uint32_t>(20 + i));
        store.emplace_back(rowBytes(types[i], cols) * static_cast<size_t>(rows[i]));
        for (int64_t r = 0; r < rows[i]; ++r)
            quantizeRow(types[i], wf.data() + r * cols, store.back().data() + r * rowBytes(types[i], cols), cols);
    }
    for (int i = 0; i < 3; ++i) ws.push_back({types[i], rows[i], cols, store[static_cast<size_t>(i)].data()});
    ThreadPool pool(3);
    MatmulScratch scratch;
    std::vector<std::vector<float>> grouped(3), separate(3);
    std::vector<float*> outs;
    for (int i = 0; i < 3; ++i) {
        grouped[static_cast<size_t>(i)].resize(static_cast<size_t>(n * rows[i]));
        separate[static_cast<size_t>(i)].resize(static_cast<size_t>(n * rows[i]));
        outs.push_back(grouped[static_cast<size_t>(i)].data());
    }
    matmulGroup(ws, x.data(), n, outs, pool, scratch);
    for (int i = 0; i < 3; ++i) {
        matmul(ws[static_cast<size_t>(i)], x.data(), n, separate[static_cast<size_t>(i)].data(), pool, scratch);
        EXPECT_EQ(grouped[static_cast<size_t>(i)], separate[static_cast<size_t>(i)]) << i;
    }
}

TEST(Matmul, TokenResultIndependentOfBatch) {
    // The tiles compute every output in the same order, so a token alone and the same token
    // inside a batch (any position, any tile edge) give the same bits: batching and chunked
    // prefill cannot change a sequence's logits.
    const int64_t rows = 53, cols = 160, n = 11;
    const auto wf = randomFloats(static_cast<size_t>(rows * cols), 5);
    const auto x = randomFloats(static_cast<size_t>(n * cols), 6);
    ThreadPool pool(2);
    MatmulScratch scratch;
    for (TensorType t : {TensorType::F32, TensorType::F16, TensorType::Q8_0, TensorType::Q4_0}) {
        std::vector<uint8_t> packed(rowBytes(t, cols) * static_cast<size_t>(rows));
        for (int64_t r = 0; r < rows; ++r)
            quantizeRow(t, wf.data() + r * cols, packed.data() + r * rowBytes(t, cols), cols);
        const WeightMatrix w{t, rows, cols, packed.data()};
        std::vector<float> batch(static_cast<size_t>(n * rows)), one(static_cast<size_t>(rows));
        matmul(w, x.data(), n, batch.data(), pool, scratch);
        for (int64_t i = 0; i < n; ++i) {
            matmul(w, x.data() + i * cols, 1, one.data(), pool, scratch);
            EXPECT_TRUE(std::equal(one.begin(), one.end(), batch.begin() + i * rows))
                << tensorTypeName(t) << " token " << i;
        }
    }
}
