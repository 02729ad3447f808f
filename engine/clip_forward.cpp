// The CLIP ViT forward pass and the llava MLP projector on the CPU, in F32 (clip.cpp's graph).
//
// Per image: patch conv as im2col + matmul, [class, patches] + positions, pre-LN, then
// hp.blocksRun pre-norm blocks (MHA, FFN), optional post-LN, drop the class token, and
// mm.2(GELU_tanh(mm.0(x))). Activations are exact (not ggml's fp16 tables); LayerNorm and
// softmax accumulate in double. The matmuls are kernels::matmul on F32 weights.
#include "engine/clip_model.h"

#include "engine/clip_weights.h"
#include "kernels/clip_math.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/thread_pool.h"

#include <algorithm>
#include <cmath>

namespace mb::engine {
namespace {

// y (n, l.out) = x (n, l.in) · W^T + b.
void linear(const ClipLinear& l, const float* x, int64_t n, float* y, kernels::ThreadPool& pool,
            kernels::MatmulScratch& mm) {
    const kernels::WeightMatrix w{kernels::TensorType::F32, l.out, l.in, l.w.data(), nullptr};
    kernels::matmul(w, x, n, y, pool, mm);
    if (l.b.empty()) return;
    for (int64_t t = 0; t < n; ++t)
        for (int64_t o = 0; o < l.out; ++o) y[t * l.out + o] += l.b[static_cast<size_t>(o)];
}

// ggml_norm then ×w + b, over rows of `width`, in place-safe (y may equal x). Statistics in
// double; each element as kernels/clip_math.h's layerNormValue (the CUDA kernel's too).
void layerNorm(const ClipNorm& nrm, const float* x, int64_t n, int64_t width, float eps, float* y) {
    for (int64_t t = 0; t < n; ++t) {
        const float* xr = x + t * width;
        double mean = 0.0;
        for (int64_t i = 0; i < width; ++i) mean += xr[i];
        mean /= static_cast<double>(width);
        double var = 0.0;
        for (int64_t i = 0; i < width; ++i) var += (xr[i] - mean) * (xr[i] - mean);
        var /= static_cast<double>(width);
        const double inv = 1.0 / std::sqrt(var + eps);
        float* yr = y + t * width;
        for (int64_t i = 0; i < width; ++i)
            yr[i] = kernels::clip::layerNormValue(xr[i], mean, inv, nrm.w[static_cast<size_t>(i)],
                                                  nrm.b[static_cast<size_t>(i)]);
    }
}

// Multi-head self-attention over all n tokens (no mask). q, k, v, out: (n, hidden);
// feature h*dh + d belongs to head h. q is scaled by 1/sqrt(dh) before QK^T, as clip.cpp.
// The (head, query) rows are spread over the pool; each row's scores, max and exponentials
// are float, their sum double; P·V accumulates along V's rows (contiguous features), so the
// inner loops vectorise. ViT-L/336: 16 heads x 577 queries per block.
void attention(const float* q, const float* k, const float* v, int64_t n, int heads, int dh, float* out,
               kernels::ThreadPool& pool) {
    const int64_t width = static_cast<int64_t>(heads) * dh;
    const float scale = 1.0f / std::sqrt(static_cast<float>(dh));
    std::vector<float> scratch(static_cast<size_t>(pool.threads()) * static_cast<size_t>(n + dh));
    auto rows = [&](int64_t begin, int64_t end, int worker) {
        float* p = scratch.data() + static_cast<size_t>(worker) * static_cast<size_t>(n + dh);
        float* qs = p + n; // the query row, scaled
        for (int64_t r = begin; r < end; ++r) {
            const int64_t h = r / n, i = r % n;
            const float* qi = q + i * width + h * dh;
            for (int d = 0; d < dh; ++d) qs[d] = qi[d] * scale;
            float mx = -INFINITY;
            for (int64_t j = 0; j < n; ++j) {
                const float* kj = k + j * width + h * dh;
                float s = 0.0f;
                for (int d = 0; d < dh; ++d) s += qs[d] * kj[d];
                p[j] = s;
                mx = std::max(mx, s);
            }
            double sum = 0.0;
            for (int64_t j = 0; j < n; ++j) sum += (p[j] = std::exp(p[j] - mx));
            float* oi = out + i * width + h * dh;
            std::fill(oi, oi + dh, 0.0f);
            for (int64_t j = 0; j < n; ++j) {
                const float* vj = v + j * width + h * dh;
                const float pj = p[j];
                for (int d = 0; d < dh; ++d) oi[d] += pj * vj[d];
            }
            const auto inv = static_cast<float>(1.0 / sum);
            for (int d = 0; d < dh; ++d) oi[d] *= inv;
        }
    };
    pool.parallelFor(static_cast<int64_t>(heads) * n, rows, 8);
}

// im2col of the image: (patches, 3*P*P), column c*P*P + kh*P + kw, patch index py*G + px.
std::vector<float> patchColumns(const float* chw, const ClipHParams& hp) {
    const int s = hp.imageSize, p = hp.patchSize, g = hp.gridSide();
    const size_t cols = static_cast<size_t>(3) * p * p;
    std::vector<float> out(static_cast<size_t>(hp.patches()) * cols);
    for (int py = 0; py < g; ++py)
        for (int px = 0; px < g; ++px) {
            float* row = out.data() + static_cast<size_t>(py * g + px) * cols;
            for (int c = 0; c < 3; ++c)
                for (int kh = 0; kh < p; ++kh)
                    for (int kw = 0; kw < p; ++kw)
                        row[(static_cast<size_t>(c) * p + kh) * p + kw] =
                            chw[(static_cast<size_t>(c) * s + py * p + kh) * s + px * p + kw];
        }
    return out;
}

} // namespace

std::vector<float> ClipModel::encode(const float* chw, kernels::ThreadPool& pool) const {
    const ClipHParams& hp = m_hp;
    const ClipWeights& w = *m_w;
    const int64_t np = hp.patches(), n = np + 1, h = hp.hidden;
    kernels::MatmulScratch mm;

    // Embeddings: x (n, hidden), row 0 the class token, rows 1.. the patches; + positions.
    std::vector<float> x(static_cast<size_t>(n * h));
    std::copy(w.classEmbd.begin(), w.classEmbd.end(), x.begin());
    const std::vector<float> cols = patchColumns(chw, hp);
    linear(w.patch, cols.data(), np, x.data() + h, pool, mm);
    for (size_t i = 0; i < x.size(); ++i) x[i] += w.posEmbd[i];
    layerNorm(w.preLn, x.data(), n, h, hp.eps, x.data());

    std::vector<float> xb(x.size()), q(x.size()), k(x.size()), v(x.size()), att(x.size());
    std::vector<float> ff(static_cast<size_t>(n * hp.ffn));
    // Only blocksRun = blockCount - 1 blocks: llama.cpp c392e509's convention (clip_model.h).
    for (int l = 0; l < hp.blocksRun; ++l) {
        const ClipBlock& b = w.blocks[static_cast<size_t>(l)];
        layerNorm(b.ln1, x.data(), n, h, hp.eps, xb.data());
        linear(b.q, xb.data(), n, q.data(), pool, mm);
        linear(b.k, xb.data(), n, k.data(), pool, mm);
        linear(b.v, xb.data(), n, v.data(), pool, mm);
        attention(q.data(), k.data(), v.data(), n, hp.heads, hp.headDim(), att.data(), pool);
        linear(b.o, att.data(), n, xb.data(), pool, mm);
        for (size_t i = 0; i < x.size(); ++i) x[i] += xb[i];

        layerNorm(b.ln2, x.data(), n, h, hp.eps, xb.data());
        linear(b.fc1, xb.data(), n, ff.data(), pool, mm);
        for (float& e : ff) e = kernels::clip::activate(hp.activation(), e);
        linear(b.fc2, ff.data(), n, xb.data(), pool, mm);
        for (size_t i = 0; i < x.size(); ++i) x[i] += xb[i];
    }
    if (!w.postLn.w.empty()) layerNorm(w.postLn, x.data(), n, h, hp.eps, x.data());

    // Drop the class token; projector mm.2(GELU_tanh(mm.0(patches))).
    std::vector<float> mid(static_cast<size_t>(np * hp.projectorHidden));
    linear(w.mm0, x.data() + h, np, mid.data(), pool, mm);
    for (float& e : mid) e = kernels::clip::geluTanh(e);
    std::vector<float> out(static_cast<size_t>(np * hp.projectionWidth));
    linear(w.mm2, mid.data(), np, out.data(), pool, mm);
    return out;
}

std::vector<float> ClipModel::encode(const float* chw) const {
    kernels::ThreadPool pool(1);
    return encode(chw, pool);
}

std::vector<float> ClipModel::encodeImage(const RgbImage& img, kernels::ThreadPool& pool) const {
    const std::vector<float> chw = clipPreprocess(img, preprocessParams());
    return encode(chw.data(), pool);
}

} // namespace mb::engine
