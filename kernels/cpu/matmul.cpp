// Threaded matrix products over weight rows, dispatching the inner dot product by weight type.
#include "kernels/cpu/matmul.h"

#include "kernels/cpu/vec.h"

#include <algorithm>

namespace mb::kernels {

namespace {

// Rows per scheduling unit: keeps each thread's slice contiguous and cache friendly.
constexpr int64_t kRowGrain = 16;
// Waking a thread costs microseconds; below this many multiply-adds per unit of work the
// product runs on fewer threads (tiny models run on the caller's thread alone).
constexpr int64_t kMinMacsPerUnit = 64 * 1024;

template <class RowDot>
void forRows(const WeightMatrix& w, int64_t n, float* y, ThreadPool* pool, RowDot dot) {
    auto body = [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const uint8_t* wr = w.row(r);
            for (int64_t t = 0; t < n; ++t) y[t * w.rows + r] = dot(wr, t);
        }
    };
    const int64_t macsPerRow = std::max<int64_t>(1, w.cols * n);
    int64_t grain = std::max(kRowGrain, (kMinMacsPerUnit + macsPerRow - 1) / macsPerRow);
    grain = (grain + kRowGrain - 1) / kRowGrain * kRowGrain;
    if (pool) pool->parallelFor(w.rows, body, grain);
    else body(0, w.rows);
}

void run(const VecKernels& k, const WeightMatrix& w, const float* x, int64_t n, float* y,
         ThreadPool* pool, MatmulScratch& scratch) {
    const int64_t K = w.cols;
    switch (w.type) {
    case TensorType::F32:
        forRows(w, n, y, pool, [&](const uint8_t* wr, int64_t t) {
            return k.dotF32(reinterpret_cast<const float*>(wr), x + t * K, K);
        });
        return;
    case TensorType::F16:
        forRows(w, n, y, pool, [&](const uint8_t* wr, int64_t t) {
            return k.dotF16(reinterpret_cast<const uint16_t*>(wr), x + t * K, K);
        });
        return;
    case TensorType::BF16:
        forRows(w, n, y, pool, [&](const uint8_t* wr, int64_t t) {
            return k.dotBF16(reinterpret_cast<const uint16_t*>(wr), x + t * K, K);
        });
        return;
    case TensorType::Q8_0:
    case TensorType::Q4_0: break;
    }
    // Quantised weights: quantise each activation row to Q8_0 once, then integer dots.
    const int64_t nb = K / kQ8_0BlockSize;
    if (scratch.xq.size() < static_cast<size_t>(n * nb)) scratch.xq.resize(static_cast<size_t>(n * nb));
    BlockQ8_0* xq = scratch.xq.data();
    auto quantise = [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) k.quantizeQ8_0(x + t * K, xq + t * nb, K);
    };
    if (pool && n > 1) pool->parallelFor(n, quantise);
    else quantise(0, n);
    if (w.type == TensorType::Q8_0) {
        forRows(w, n, y, pool, [&](const uint8_t* wr, int64_t t) {
            return k.dotQ8_0(reinterpret_cast<const BlockQ8_0*>(wr), xq + t * nb, nb);
        });
    } else {
        forRows(w, n, y, pool, [&](const uint8_t* wr, int64_t t) {
            return k.dotQ4_0(reinterpret_cast<const BlockQ4_0*>(wr), xq + t * nb, nb);
        });
    }
}

} // namespace

void matmul(const WeightMatrix& w, const float* x, int64_t n, float* y, ThreadPool& pool,
            MatmulScratch& scratch) {
    run(vecKernels(), w, x, n, y, &pool, scratch);
}

void matmulReference(const WeightMatrix& w, const float* x, int64_t n, float* y) {
    MatmulScratch scratch;
    run(portableVecKernels(), w, x, n, y, nullptr, scratch);
}

} // namespace mb::kernels
