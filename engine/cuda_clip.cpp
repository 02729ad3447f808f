// CudaClip: ClipModel::encode's steps as CUDA kernels and cuBLAS F32 products on one stream.
//
// Where the time goes: the products (ViT-L/336: about 0.2 TFLOP per image in the 22 blocks that
// run, most of it the FFN and QKV projections at 577 tokens) on cuBLAS SGEMM; attention's two
// batched products; the LayerNorm, softmax and activation passes are memory-bound and small.
// One image at a time: the tokens of one image are the batch of every product.
#include "engine/cuda_clip.h"

#include "engine/clip_weights.h"
#include "kernels/cuda/cuda_ops.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace mb::engine {

namespace cu = kernels::cuda;

CudaClip::CudaClip(const ClipModel& clip, int deviceIndex) : m_clip(clip), m_deviceIndex(deviceIndex) {
    if (deviceIndex < 0 || deviceIndex >= cu::deviceCount())
        throw std::invalid_argument("cuda:" + std::to_string(deviceIndex) + " does not exist");
    cu::setDevice(deviceIndex);
    m_stream = std::make_unique<cu::StreamOwner>();
    m_blas = std::make_unique<cu::BlasHandle>(m_stream->get());

    const ClipHParams& hp = clip.hparams();
    const ClipWeights& w = clip.weights();
    m_patch = upload(w.patch);
    m_class = upload(w.classEmbd);
    m_pos = upload(w.posEmbd);
    m_preLn = upload(w.preLn);
    if (!w.postLn.w.empty()) m_postLn = upload(w.postLn);
    for (int l = 0; l < hp.blocksRun; ++l) { // the last stored block never runs (clip_model.h)
        const ClipBlock& b = w.blocks[static_cast<size_t>(l)];
        m_blocks.push_back({upload(b.ln1), upload(b.ln2), upload(b.q), upload(b.k), upload(b.v), upload(b.o),
                            upload(b.fc1), upload(b.fc2)});
    }
    m_mm0 = upload(w.mm0);
    m_mm2 = upload(w.mm2);

    const int64_t np = hp.patches(), n = np + 1, h = hp.hidden;
    auto floats = [](int64_t count) { return cu::DeviceBuffer(static_cast<size_t>(count) * sizeof(float)); };
    m_chw = floats(3LL * hp.imageSize * hp.imageSize);
    m_cols = floats(np * 3LL * hp.patchSize * hp.patchSize);
    m_x = floats(n * h);
    m_xb = floats(n * h);
    m_q = floats(n * h);
    m_k = floats(n * h);
    m_v = floats(n * h);
    m_att = floats(n * h);
    m_ff = floats(n * hp.ffn);
    m_scores = floats(static_cast<int64_t>(hp.heads) * n * n);
    m_mid = floats(np * hp.projectorHidden);
    m_out = floats(np * hp.projectionWidth);
    m_stream->synchronize(); // uploads done, errors surface here
}

CudaClip::~CudaClip() = default;

const float* CudaClip::upload(const std::vector<float>& v) {
    if (v.empty()) return nullptr;
    const size_t bytes = v.size() * sizeof(float);
    m_owned.emplace_back(bytes);
    cu::copyToDevice(m_owned.back().data(), v.data(), bytes, m_stream->get());
    m_weightBytes += bytes;
    return m_owned.back().as<float>();
}

CudaClip::Linear CudaClip::upload(const ClipLinear& l) { return {upload(l.w), upload(l.b), l.out, l.in}; }

CudaClip::Norm CudaClip::upload(const ClipNorm& n) { return {upload(n.w), upload(n.b)}; }

void CudaClip::linear(const Linear& l, const float* x, int64_t n, float* y) {
    cu::gemmF32(*m_blas, l.w, l.out, l.in, x, n, y);
    if (l.b) cu::addBias(y, l.b, n, l.out, m_stream->get());
}

// x += o(attention(ln1(x))); x += fc2(act(fc1(ln2(x)))), over n tokens.
void CudaClip::runBlock(const Block& b, int64_t n) {
    const ClipHParams& hp = m_clip.hparams();
    const cu::Stream s = m_stream->get();
    const int64_t h = hp.hidden;
    float *x = m_x.as<float>(), *xb = m_xb.as<float>(), *att = m_att.as<float>(), *ff = m_ff.as<float>();
    float* scores = m_scores.as<float>();
    const float scale = 1.0f / std::sqrt(static_cast<float>(hp.headDim()));

    cu::layerNorm(x, b.ln1.w, b.ln1.b, xb, n, h, hp.eps, s);
    linear(b.q, xb, n, m_q.as<float>());
    linear(b.k, xb, n, m_k.as<float>());
    linear(b.v, xb, n, m_v.as<float>());
    cu::attentionScores(*m_blas, m_q.as<float>(), m_k.as<float>(), n, hp.heads, hp.headDim(), scale, scores);
    cu::softmaxRows(scores, hp.heads * n, n, s);
    cu::attentionValues(*m_blas, scores, m_v.as<float>(), n, hp.heads, hp.headDim(), att);
    linear(b.o, att, n, xb);
    cu::addInPlace(x, xb, n * h, s);

    cu::layerNorm(x, b.ln2.w, b.ln2.b, xb, n, h, hp.eps, s);
    linear(b.fc1, xb, n, ff);
    cu::applyActivation(ff, n * hp.ffn, hp.activation(), s);
    linear(b.fc2, ff, n, xb);
    cu::addInPlace(x, xb, n * h, s);
}

std::vector<float> CudaClip::encode(const float* chw) {
    const ClipHParams& hp = m_clip.hparams();
    cu::setDevice(m_deviceIndex);
    const cu::Stream s = m_stream->get();
    const int64_t np = hp.patches(), n = np + 1, h = hp.hidden;
    float* x = m_x.as<float>();

    // Embeddings: x (n, hidden), row 0 the class token, rows 1.. the patch products; + positions.
    cu::copyToDevice(m_chw.data(), chw, m_chw.bytes(), s);
    cu::patchColumns(m_chw.as<float>(), hp.imageSize, hp.patchSize, m_cols.as<float>(), s);
    cu::gemmF32(*m_blas, m_patch.w, m_patch.out, m_patch.in, m_cols.as<float>(), np, x + h);
    cu::clipEmbeddings(x, m_class, m_patch.b, m_pos, np, h, s);
    cu::layerNorm(x, m_preLn.w, m_preLn.b, x, n, h, hp.eps, s);

    for (const Block& b : m_blocks) runBlock(b, n);
    if (m_postLn.w) cu::layerNorm(x, m_postLn.w, m_postLn.b, x, n, h, hp.eps, s);

    // Drop the class token; projector mm.2(GELU_tanh(mm.0(patches))).
    linear(m_mm0, x + h, np, m_mid.as<float>());
    cu::applyActivation(m_mid.as<float>(), np * hp.projectorHidden, kernels::clip::Activation::GeluTanh, s);
    linear(m_mm2, m_mid.as<float>(), np, m_out.as<float>());

    std::vector<float> out(static_cast<size_t>(np * hp.projectionWidth));
    cu::copyToHost(out.data(), m_out.data(), out.size() * sizeof(float), s);
    m_stream->synchronize();
    return out;
}

} // namespace mb::engine
