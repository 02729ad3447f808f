// Threaded matrix products over weight rows, dispatching the inner dot product by weight type.
#include "kernels/cpu/matmul.h"

#include "kernels/cpu/kquant_dot.h"
#include "kernels/cpu/panels.h"
#include "kernels/cpu/quant_legacy.h"
#include "kernels/cpu/vec.h"

#include <algorithm>

namespace mb::kernels {

namespace {

// Rows per scheduling unit: keeps each thread's slice contiguous and cache friendly; a
// multiple of the tile heights (1 to 8 rows; kernels/cpu/gemm_avx2.cpp, gemm_avx512.cpp) and
// of the 3-panel outer-product tile (48 rows; gemm_panels_avx512.cpp).
constexpr int64_t kRowGrain = 48;
// Waking a thread costs microseconds; below this many multiply-adds per unit of work the
// product runs on fewer threads (tiny models run on the caller's thread alone).
constexpr int64_t kMinMacsPerUnit = 64 * 1024;
// The types whose kernels multiply Q8_0 activations (integer dot products), and those of them
// that also read the activation blocks' Q8Sums (activationSums).
bool takesQ8Activations(TensorType t) {
    return t == TensorType::Q8_0 || t == TensorType::Q4_0 || t == TensorType::Q4_1 || t == TensorType::Q5_0 ||
           t == TensorType::Q5_1 || t == TensorType::IQ4_NL;
}
bool takesQ8Sums(TensorType t) {
    return t == TensorType::Q4_1 || t == TensorType::Q5_0 || t == TensorType::Q5_1 || t == TensorType::IQ4_NL;
}

// The types whose kernels multiply Q8_K activations (kernels/cpu/kquant_dot.h).
bool takesQ8KActivations(TensorType t) {
    return t == TensorType::Q2_K || t == TensorType::Q3_K || t == TensorType::Q4_K || t == TensorType::Q5_K ||
           t == TensorType::Q6_K || t == TensorType::IQ4_XS;
}

// y[t * w.rows + r] = dot(row r, token t) for rows [r0, r1) and every token: one weight row
// (at most a few KB) stays in L1 while the tokens' Q8_K rows stream past it; with a tile,
// kKTileTokens tokens share each unpacked weight block (same bits as the dots).
template <class Block>
using KTile = void (*)(const Block*, const BlockQ8_K*, int64_t, int64_t, float*, int64_t);
template <class Block>
void dotRows(float (*dot)(const Block*, const BlockQ8_K*, int64_t), const WeightMatrix& w, const BlockQ8_K* xk,
             int64_t n, float* y, int64_t r0, int64_t r1, KTile<Block> tile = nullptr) {
    const int64_t nb = w.cols / kSuperBlockSize;
    const auto* rows = reinterpret_cast<const Block*>(w.row(0));
    for (int64_t r = r0; r < r1; ++r) {
        const Block* row = rows + r * nb;
        int64_t t = 0;
        if (tile)
            for (; t + kKTileTokens <= n; t += kKTileTokens) tile(row, xk + t * nb, nb, nb, y + t * w.rows + r, w.rows);
        for (; t < n; ++t) y[t * w.rows + r] = dot(row, xk + t * nb, nb);
    }
}

// A k-quant matrix: from its panels where it has them and the table multiplies them, else dotRows.
using KPanels = void (*)(const uint8_t*, int64_t, int64_t, int64_t, const BlockQ8_K*, int64_t, int64_t, float*,
                         int64_t);
template <class Block>
void kquantRows(KPanels panels, float (*dot)(const Block*, const BlockQ8_K*, int64_t), KTile<Block> tile,
                const WeightMatrix& w, const BlockQ8_K* xk, int64_t n, float* y, int64_t r0, int64_t r1) {
    const int64_t nb = w.cols / kSuperBlockSize;
    if (w.panels && panels) panels(static_cast<const uint8_t*>(w.panels), nb, r0, r1, xk, nb, n, y, w.rows);
    else dotRows(dot, w, xk, n, y, r0, r1, tile);
}

// Any quantised matrix with F32 activations (MatmulScratch::f32Activations), and Q8_K (the
// activations' type, which has no dot as weights): each row is dequantised to F32 once (ggml's
// to_float bits, the table's toFloat) and multiplied by every token with the table's F32 tile of
// one row, so an output is the same bits as a single dotF32 of the dequantised row, whatever the
// thread split or batch.
void dequantisedRows(const VecKernels& k, const WeightMatrix& w, const float* x, int64_t n, float* y, int64_t r0,
                     int64_t r1) {
    thread_local std::vector<float> row;
    const int64_t K = w.cols;
    if (row.size() < static_cast<size_t>(K)) row.resize(static_cast<size_t>(K));
    const auto toFloat = traits(w.type).toFloat;
    for (int64_t r = r0; r < r1; ++r) {
        toFloat(w.row(r), row.data(), K);
        k.gemmF32(row.data(), K, x, K, K, 1, n, y + r, w.rows);
    }
}

// y[t * rows + r] for rows [r0, r1) of one matrix and all n tokens. The gemm kernels pass
// tiles of up to 6 tokens (8 for F32 panels) over the slice's rows, so the slice (kRowGrain
// rows and up: 72 KB of F16 at width 768) stays in L1/L2 while the activations stream once.
// Every output is the same bits whatever the slice (see VecKernels::gemm*, gemmPanelsF32).
// Quantised activations: the Q8_0 blocks, and for Q8_0 and Q4_0 panels their prepareQ8Panels.
struct QuantisedX {
    const BlockQ8_0* blocks = nullptr;
    const int32_t* bias = nullptr;
    const float* scale = nullptr;
    const Q8Sums* sums = nullptr;       // activationSums of the Q8_0 blocks (Q4_1, Q5_0, Q5_1, IQ4_NL)
    const BlockQ8_K* kblocks = nullptr; // Q8_K rows for k-quant weights
    bool f32Activations = false;        // every quantised matrix as dequantised rows
};

void rowsOf(const VecKernels& k, const WeightMatrix& w, const float* x, const QuantisedX& q, int64_t n, float* y,
            int64_t r0, int64_t r1) {
    const BlockQ8_0* xq = q.blocks;
    const int64_t K = w.cols;
    const int64_t nb = K / kQ8_0BlockSize;
    const int64_t rows = r1 - r0;
    float* ys = y + r0;
    if (q.f32Activations && isQuantised(w.type)) {
        dequantisedRows(k, w, x, n, y, r0, r1);
        return;
    }
    switch (w.type) {
    case TensorType::F32:
        if (w.panels && k.gemmPanelsF32) {
            k.gemmPanelsF32(static_cast<const float*>(w.panels), K, r0, r1, x, K, n, y, w.rows);
            break;
        }
        k.gemmF32(reinterpret_cast<const float*>(w.row(r0)), K, x, K, K, rows, n, ys, w.rows);
        break;
    case TensorType::F16:
        if (w.panels && k.gemmPanelsF16) {
            k.gemmPanelsF16(static_cast<const uint16_t*>(w.panels), K, r0, r1, x, K, n, y, w.rows);
            break;
        }
        k.gemmF16(reinterpret_cast<const uint16_t*>(w.row(r0)), K, x, K, K, rows, n, ys, w.rows);
        break;
    case TensorType::BF16:
        for (int64_t t = 0; t < n; ++t)
            for (int64_t r = r0; r < r1; ++r)
                y[t * w.rows + r] = k.dotBF16(reinterpret_cast<const uint16_t*>(w.row(r)), x + t * K, K);
        break;
    case TensorType::Q8_0:
        if (w.panels && k.gemmPanelsQ8_0) {
            k.gemmPanelsQ8_0(static_cast<const uint8_t*>(w.panels), nb, r0, r1, xq, nb, q.bias, q.scale, n, y,
                             w.rows);
            break;
        }
        k.gemmQ8_0(reinterpret_cast<const BlockQ8_0*>(w.row(r0)), nb, xq, nb, nb, rows, n, ys, w.rows);
        break;
    case TensorType::Q4_0:
        if (w.panels && k.gemmPanelsQ4_0) {
            k.gemmPanelsQ4_0(static_cast<const uint8_t*>(w.panels), nb, r0, r1, xq, nb, q.bias, q.scale, n, y,
                             w.rows);
            break;
        }
        k.gemmQ4_0(reinterpret_cast<const BlockQ4_0*>(w.row(r0)), nb, xq, nb, nb, rows, n, ys, w.rows);
        break;
    case TensorType::Q4_1:
        k.gemmQ4_1(reinterpret_cast<const BlockQ4_1*>(w.row(r0)), nb, xq, q.sums, nb, nb, rows, n, ys, w.rows);
        break;
    case TensorType::Q5_0:
        k.gemmQ5_0(reinterpret_cast<const BlockQ5_0*>(w.row(r0)), nb, xq, q.sums, nb, nb, rows, n, ys, w.rows);
        break;
    case TensorType::Q5_1:
        k.gemmQ5_1(reinterpret_cast<const BlockQ5_1*>(w.row(r0)), nb, xq, q.sums, nb, nb, rows, n, ys, w.rows);
        break;
    case TensorType::IQ4_NL:
        k.gemmIq4Nl(reinterpret_cast<const BlockIq4Nl*>(w.row(r0)), nb, xq, q.sums, nb, nb, rows, n, ys, w.rows);
        break;
    case TensorType::Q2_K: dotRows(k.dotQ2_K, w, q.kblocks, n, y, r0, r1, k.tileQ2_K); break;
    case TensorType::Q3_K: dotRows(k.dotQ3_K, w, q.kblocks, n, y, r0, r1, k.tileQ3_K); break;
    case TensorType::Q4_K: kquantRows(k.gemmPanelsQ4_K, k.dotQ4_K, k.tileQ4_K, w, q.kblocks, n, y, r0, r1); break;
    case TensorType::Q5_K: dotRows(k.dotQ5_K, w, q.kblocks, n, y, r0, r1, k.tileQ5_K); break;
    case TensorType::Q6_K: kquantRows(k.gemmPanelsQ6_K, k.dotQ6_K, k.tileQ6_K, w, q.kblocks, n, y, r0, r1); break;
    case TensorType::IQ4_XS: dotRows(k.dotIq4Xs, w, q.kblocks, n, y, r0, r1, k.tileIq4Xs); break;
    case TensorType::Q8_K: dequantisedRows(k, w, x, n, y, r0, r1); break; // activations' type, not in files
    }
}

// Quantised weights multiply activations quantised once for all matrices of the call: to Q8_0
// (with the Q8_0 panels' block sums and scales and the other 32-element formats' activationSums,
// made in the same pass) and, for k-quant weights, to Q8_K. Nothing when the caller asked for
// F32 activations.
QuantisedX quantiseActivations(const VecKernels& k, std::span<const WeightMatrix> ws, const float* x, int64_t n,
                               ThreadPool* pool, MatmulScratch& scratch) {
    QuantisedX q;
    q.f32Activations = scratch.f32Activations;
    if (scratch.f32Activations) return q;
    const int64_t K = ws[0].cols;
    auto any = [&](auto pred) { return std::any_of(ws.begin(), ws.end(), pred); };
    auto perToken = [&](auto fn) {
        if (pool && n > 1) pool->parallelFor(n, fn);
        else fn(0, n);
    };
    if (any([](const WeightMatrix& w) { return takesQ8Activations(w.type); })) {
        const int64_t nb = K / kQ8_0BlockSize;
        const auto size = static_cast<size_t>(n * nb);
        if (scratch.xq.size() < size) scratch.xq.resize(size);
        const bool prepare = any([&](const WeightMatrix& w) {
            return w.panels && ((w.type == TensorType::Q8_0 && k.gemmPanelsQ8_0) ||
                                (w.type == TensorType::Q4_0 && k.gemmPanelsQ4_0));
        });
        if (prepare && scratch.xbias.size() < size) scratch.xbias.resize(size), scratch.xscale.resize(size);
        const bool sums = any([](const WeightMatrix& w) { return takesQ8Sums(w.type); });
        if (sums && scratch.xsum.size() < size) scratch.xsum.resize(size);
        BlockQ8_0* out = scratch.xq.data();
        perToken([&](int64_t t0, int64_t t1) {
            for (int64_t t = t0; t < t1; ++t) k.quantizeQ8_0(x + t * K, out + t * nb, K);
            if (prepare)
                prepareQ8Panels(out + t0 * nb, nb, t1 - t0, nb, scratch.xbias.data() + t0 * nb,
                                scratch.xscale.data() + t0 * nb);
            if (sums) activationSums(out + t0 * nb, (t1 - t0) * nb, scratch.xsum.data() + t0 * nb);
        });
        q.blocks = out;
        if (sums) q.sums = scratch.xsum.data();
        if (prepare) {
            q.bias = scratch.xbias.data();
            q.scale = scratch.xscale.data();
        }
    }
    if (any([](const WeightMatrix& w) { return takesQ8KActivations(w.type); })) {
        const int64_t nb = K / kSuperBlockSize;
        if (scratch.xk.size() < static_cast<size_t>(n * nb)) scratch.xk.resize(static_cast<size_t>(n * nb));
        BlockQ8_K* out = scratch.xk.data();
        perToken([&](int64_t t0, int64_t t1) {
            for (int64_t t = t0; t < t1; ++t) k.quantizeQ8_K(x + t * K, out + t * nb, K);
        });
        q.kblocks = out;
    }
    return q;
}

void run(const VecKernels& k, std::span<const WeightMatrix> ws, const float* x, int64_t n, std::span<float* const> ys,
         ThreadPool* pool, MatmulScratch& scratch) {
    if (ws.empty()) return;
    const int64_t K = ws[0].cols;
    const QuantisedX q = quantiseActivations(k, ws, x, n, pool, scratch);
    int64_t totalRows = 0;
    for (const auto& w : ws) totalRows += w.rows;
    // Global row index g walks the matrices in order.
    auto body = [&](int64_t g0, int64_t g1) {
        int64_t base = 0;
        for (size_t i = 0; i < ws.size() && base < g1; base += ws[i].rows, ++i) {
            const int64_t r0 = std::max<int64_t>(g0 - base, 0);
            const int64_t r1 = std::min<int64_t>(g1 - base, ws[i].rows);
            if (r0 < r1) rowsOf(k, ws[i], x, q, n, ys[i], r0, r1);
        }
    };
    const int64_t macsPerRow = std::max<int64_t>(1, K * n);
    int64_t grain = std::max(kRowGrain, (kMinMacsPerUnit + macsPerRow - 1) / macsPerRow);
    grain = (grain + kRowGrain - 1) / kRowGrain * kRowGrain;
    if (pool) pool->parallelFor(totalRows, body, grain);
    else body(0, totalRows);
}

} // namespace

void matmul(const WeightMatrix& w, const float* x, int64_t n, float* y, ThreadPool& pool, MatmulScratch& scratch) {
    float* const ys[1] = {y};
    run(vecKernels(), std::span(&w, 1), x, n, ys, &pool, scratch);
}

void matmulGroup(std::span<const WeightMatrix> ws, const float* x, int64_t n, std::span<float* const> ys,
                 ThreadPool& pool, MatmulScratch& scratch) {
    run(vecKernels(), ws, x, n, ys, &pool, scratch);
}

void matmulReference(const WeightMatrix& w, const float* x, int64_t n, float* y) {
    MatmulScratch scratch;
    float* const ys[1] = {y};
    run(portableVecKernels(), std::span(&w, 1), x, n, ys, nullptr, scratch);
}

} // namespace mb::kernels
