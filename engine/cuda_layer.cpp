// CudaForward's pass over a staged chunk: the layer as the same named steps as Forward::layer (forward.cpp), as
// kernels and cuBLAS products on one stream, every architectural variation read from ModelConfig and the weights.
//
// Buffers, all (maxChunk, width) F32 on the device: x (dim) the residual stream; xb (dim) its
// norm, the products' input; delta (dim) a block's output waiting to be added to x (fused into
// the next norm when `fused`); q (qDim), k and v (kvDim); att (qDim) the attention output; hb
// and hb2 (ffnDim) gate and up.
#include "engine/cuda_forward.h"

#include <algorithm>

namespace mb::engine {

namespace cu = kernels::cuda;

void CudaForward::enqueueChunk(int64_t n) {
    m_pendingResidual = false;
    cu::embedRows(embedArgs(), n, m_x.as<float>(), m_stream->get());
    for (size_t l = 0; l < m_layers.size(); ++l) layer(static_cast<int32_t>(l), n);
    normInput(m_outputNorm, n);
    outputLogits(n);
}

void CudaForward::layer(int32_t l, int64_t n) {
    const Layer& w = m_layers[static_cast<size_t>(l)];
    // Attention block: x += [post-norm] wo . attention(q, k, v of norm(x)).
    normInput(w.vec[kVecAttnNorm], n);
    projectQkv(w, n);
    rotateAndWriteKv(l, n);
    attend(l, n);
    product(w.proj[kProjO], m_att.as<float>(), n, m_delta.as<float>());
    residual(w.vec[kVecPostAttnNorm], n);
    // FFN block: x += [post-norm] down(act(gate(norm(x))) * up(norm(x))).
    normInput(w.vec[kVecFfnNorm], n);
    ffn(w, n);
    residual(w.vec[kVecPostFfnNorm], n);
}

// x += delta when a block's output is pending, then xb = norm(x): one kernel when fused.
void CudaForward::normInput(const float* weight, int64_t n) {
    const ModelConfig& c = m_model.config();
    const cu::Stream s = m_stream->get();
    float* x = m_x.as<float>();
    const float* delta = m_delta.as<float>();
    if (m_pendingResidual && !m_options.fused) cu::addInPlace(x, delta, n * c.dim, s);
    cu::addRmsNorm(x, m_pendingResidual && m_options.fused ? delta : nullptr, weight, m_xb.as<float>(), n, c.dim,
                   c.normEps, s);
    m_pendingResidual = false;
}

// delta = [post-norm of] delta (gemma2), added to x by the next normInput.
void CudaForward::residual(const float* postNorm, int64_t n) {
    const ModelConfig& c = m_model.config();
    float* delta = m_delta.as<float>();
    if (postNorm) cu::addRmsNorm(delta, nullptr, postNorm, delta, n, c.dim, c.normEps, m_stream->get());
    m_pendingResidual = true;
}

// q, k, v = norm(x) W^T [+ bias]; [per-head RMSNorm of q and k] (RoPE follows in rotateAndWriteKv).
void CudaForward::projectQkv(const Layer& w, int64_t n) {
    const ModelConfig& c = m_model.config();
    const cu::Stream s = m_stream->get();
    float *xb = m_xb.as<float>(), *q = m_q.as<float>(), *k = m_k.as<float>(), *v = m_v.as<float>();
    product(w.proj[kProjQ], xb, n, q);
    product(w.proj[kProjK], xb, n, k);
    product(w.proj[kProjV], xb, n, v);
    if (w.vec[kVecQBias]) cu::addBiasRows(q, w.vec[kVecQBias], n, c.qDim(), s);
    if (w.vec[kVecKBias]) cu::addBiasRows(k, w.vec[kVecKBias], n, c.kvDim(), s);
    if (w.vec[kVecVBias]) cu::addBiasRows(v, w.vec[kVecVBias], n, c.kvDim(), s);
    // Per-head norms: rows of headDim, in place (n * heads rows of q, n * kvHeads of k).
    if (w.vec[kVecQNorm]) cu::addRmsNorm(q, nullptr, w.vec[kVecQNorm], q, n * c.heads, c.headDim, c.normEps, s);
    if (w.vec[kVecKNorm]) cu::addRmsNorm(k, nullptr, w.vec[kVecKNorm], k, n * c.kvHeads, c.headDim, c.normEps, s);
}

// RoPE on q and k, and each token's k and v into its sequence's cache block (one kernel when fused).
void CudaForward::rotateAndWriteKv(int32_t l, int64_t n) {
    const ModelConfig& c = m_model.config();
    const cu::Stream s = m_stream->get();
    cu::RopeArgs rope;
    rope.q = m_q.as<float>();
    rope.k = m_k.as<float>();
    rope.v = m_v.as<float>();
    rope.n = n;
    rope.heads = static_cast<int32_t>(c.heads);
    rope.kvHeads = static_cast<int32_t>(c.kvHeads);
    rope.headDim = static_cast<int32_t>(c.headDim);
    rope.ropeDim = static_cast<int32_t>(c.ropeDim);
    rope.base = c.ropeBase;
    rope.cosTable = m_ropeCos;
    rope.sinTable = m_ropeSin;
    rope.form = c.ropeKind == RopeKind::Neox ? cu::RopeForm::Neox : cu::RopeForm::Norm;
    rope.posScale = c.ropePosScale;
    rope.factors = m_ropeFactors;
    const cu::PagedKv kv = pagedKv(l);
    cu::ropeAndStore(rope, kv, /*writeKv=*/m_options.fused, s);
    if (!m_options.fused) cu::storeKv(rope.k, rope.v, n, kv, s);
}

// Causal grouped-query attention with the layer's score rule (scale, soft-cap, window).
void CudaForward::attend(int32_t l, int64_t n) {
    const ModelConfig& c = m_model.config();
    const auto heads = static_cast<int32_t>(c.heads), kvHeads = static_cast<int32_t>(c.kvHeads);
    const auto hd = static_cast<int32_t>(c.headDim);
    const cu::AttentionRule rule{c.attentionScale(), c.attnSoftcap, static_cast<int32_t>(c.windowOf(l))};
    const cu::PagedKv kv = pagedKv(l);
    if (n > 1 && m_oneSequence && cu::prefillAttentionSupported(heads, kvHeads, hd)) { // prefill: tiled
        cu::prefillAttention(m_q.as<float>(), kv, n, heads, kvHeads, hd, rule, m_att.as<float>(), m_stream->get());
        return;
    }
    // Decode steps and mixed batches: split over the sequence.
    const auto splits = static_cast<int32_t>(std::clamp<int64_t>(m_partialTokens / n, 1, kMaxSplits));
    cu::attention(m_q.as<float>(), kv, n, heads, kvHeads, hd, rule, splits, m_partial.as<float>(), m_att.as<float>(),
                  m_stream->get());
}

// hb = act(gate . xb) * (up . xb); delta = down . hb.
void CudaForward::ffn(const Layer& w, int64_t n) {
    const ModelConfig& c = m_model.config();
    float *xb = m_xb.as<float>(), *hb = m_hb.as<float>(), *hb2 = m_hb2.as<float>();
    product(w.proj[kProjGate], xb, n, hb);
    product(w.proj[kProjUp], xb, n, hb2);
    if (c.activation == FfnActivation::GeluTanh) cu::geluTanhMul(hb, hb2, n * c.ffnDim, m_stream->get());
    else cu::siluMul(hb, hb2, n * c.ffnDim, m_stream->get());
    product(w.proj[kProjDown], hb, n, m_delta.as<float>());
}

// The output product for the rows that want logits (xb holds the final norm), then the final soft-cap.
void CudaForward::outputLogits(int64_t n) {
    const ModelConfig& c = m_model.config();
    const cu::Stream s = m_stream->get();
    const auto rows = static_cast<int64_t>(m_wantRows.size());
    if (rows == 0) return;
    const float* src = m_xb.as<float>();
    if (rows != n) { // gather the wanted rows (x is free now)
        float* x = m_x.as<float>();
        for (int64_t i = 0; i < rows; ++i)
            cu::copyOnDevice(x + i * c.dim, src + m_wantRows[static_cast<size_t>(i)] * c.dim,
                             static_cast<size_t>(c.dim) * sizeof(float), s);
        src = x;
    }
    product(m_output, src, rows, m_logits.as<float>());
    if (c.finalSoftcap > 0) cu::softcap(m_logits.as<float>(), rows * c.vocabSize, c.finalSoftcap, s);
}

void CudaForward::product(const cu::DeviceMatrix& w, const float* x, int64_t n, float* y) {
    const cu::Stream s = m_stream->get();
    if (n <= cu::kMatvecMaxTokens) {
        cu::matvec(w, x, n, y, s);
        return;
    }
    // Prefill and large batches: F16 tensor-core GEMM with F32 accumulation.
    cu::convertToF16(x, m_xHalf.data(), n * w.cols, s);
    const void* wHalf = w.data;
    if (w.type != kernels::TensorType::F16) {
        if (m_wHalf.empty()) m_wHalf = cu::DeviceBuffer(static_cast<size_t>(m_f16ScratchElems) * 2);
        cu::dequantizeToF16(w, m_wHalf.data(), s);
        wHalf = m_wHalf.data();
    }
    cu::gemmF16(*m_blas, wHalf, w.rows, w.cols, m_xHalf.data(), n, y);
}

} // namespace mb::engine
