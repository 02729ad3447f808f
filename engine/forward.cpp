// The forward pass: embeddings, RMSNorm, attention with RoPE and a paged KV cache, gated FFN, logits,
// with each architecture's variations (biases, Q/K norms, soft-caps, sliding windows, post-norms)
// read from ModelConfig and the layer's weights.
//
// Where the time goes: nearly all of it is the seven weight products per layer plus the
// output product (memory-bound at batch 1, compute-bound for prefill); attention grows
// with context length; everything else is noise.
#include "engine/forward.h"

#include "engine/model_panels.h"

#include "kernels/cpu/ops.h"
#include "kernels/cpu/quant.h"
#include "kernels/cpu/vec.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace mb::engine {

using kernels::matmul;

Forward::Forward(const LlamaModel& model, kernels::ThreadPool& pool, ForwardOptions options)
    : m_model(model), m_pool(pool), m_options(options) {
    const ModelConfig& c = model.config();
    const int64_t maxChunk = std::max<int64_t>(1, options.maxChunk);
    m_options.maxChunk = maxChunk;
    m_mm.f32Activations = options.f32Activations;
    auto sized = [&](int64_t width) { return std::vector<float>(static_cast<size_t>(maxChunk * width)); };
    m_x = sized(c.dim);
    m_xb = sized(c.dim);
    m_q = sized(c.qDim());
    m_k = sized(c.kvDim());
    m_v = sized(c.kvDim());
    m_att = sized(c.qDim());
    m_hb = sized(c.ffnDim);
    m_hb2 = sized(c.ffnDim);
    m_cos = sized(c.ropeDim / 2);
    m_sin = sized(c.ropeDim / 2);
    m_scores.resize(static_cast<size_t>(pool.threads() * kAttentionRun * c.contextLength));
    m_runs.reserve(static_cast<size_t>(maxChunk));
    for (const LayerWeights& l : model.layers()) {
        Matrices& m = m_matrices.emplace_back();
        for (size_t i = 0; i < 7; ++i) m[i] = l.*kProjections[i];
    }
    m_output = model.output();
    const ModelPanels* panels = options.panels ? model.cpuPanels() : nullptr;
    if (panels) {
        for (size_t l = 0; l < m_matrices.size(); ++l)
            for (size_t i = 0; i < 7; ++i) m_matrices[l][i].panels = panels->layers[l][i];
        m_output.panels = panels->output;
        m_panelBytes = panels->bytes;
    }
}

void Forward::run(const ForwardBatch& batch, float* logits) {
    const ModelConfig& c = m_model.config();
    const size_t n = batch.tokens.size();
    validate(batch, m_options.rope);
    for (KvCache* cache : batch.caches)
        if (cache->storage() != KvStorage::Host)
            throw ModelError("the CPU forward pass needs a KV cache in host memory");
    size_t logitRow = 0;
    const auto chunk = static_cast<size_t>(m_options.maxChunk);
    for (size_t begin = 0; begin < n; begin += chunk) {
        const size_t end = std::min(n, begin + chunk);
        runChunk(batch, begin, end, logits + logitRow * static_cast<size_t>(c.vocabSize));
        for (size_t t = begin; t < end; ++t) logitRow += batch.wantLogits[t] ? 1 : 0;
    }
}

void Forward::runChunk(const ForwardBatch& batch, size_t begin, size_t end, float* logits) {
    const ModelConfig& c = m_model.config();
    const int64_t n = static_cast<int64_t>(end - begin);
    const int64_t dim = c.dim;
    const kernels::WeightMatrix& emb = m_model.tokenEmbedding();
    for (int64_t t = 0; t < n; ++t) {
        float* x = m_x.data() + t * dim;
        if (const float* row = batch.embeddingAt(begin + static_cast<size_t>(t))) {
            std::copy_n(row, dim, x); // an image position: the projector's output as it is
        } else {
            kernels::dequantizeRow(emb.type, emb.row(batch.tokens[begin + static_cast<size_t>(t)]), x, dim);
            if (c.embedScale != 1.0f)
                for (int64_t i = 0; i < dim; ++i) x[i] *= c.embedScale;
        }
        const int64_t pos = batch.positions[begin + static_cast<size_t>(t)];
        const int64_t half = c.ropeDim / 2;
        if (m_options.rope) { // fast profile: look the angles up
            std::copy_n(m_options.rope->cos(pos), half, m_cos.data() + t * half);
            std::copy_n(m_options.rope->sin(pos), half, m_sin.data() + t * half);
        } else {
            kernels::ropeAngles(pos, c.ropeDim, c.ropeBase, m_cos.data() + t * half, m_sin.data() + t * half,
                                c.ropePosScale, c.ropeFreqFactors.empty() ? nullptr : c.ropeFreqFactors.data());
        }
    }
    // Attention runs: consecutive positions of one sequence (a prefill chunk) attend together.
    m_runs.clear();
    for (int64_t t = 0; t < n; ++t) {
        const size_t bi = begin + static_cast<size_t>(t);
        if (!m_runs.empty()) {
            AttentionRun& last = m_runs.back();
            const size_t prev = begin + static_cast<size_t>(last.first + last.count - 1);
            if (last.count < kAttentionRun && batch.seqIds[prev] == batch.seqIds[bi] &&
                batch.positions[prev] + 1 == batch.positions[bi]) {
                ++last.count;
                continue;
            }
        }
        m_runs.push_back({t, 1});
    }
    for (int64_t l = 0; l < c.layers; ++l) layer(l, batch, begin, n);

    // Final norm and the output product, only for the tokens that want logits.
    int64_t rows = 0;
    for (int64_t t = 0; t < n; ++t) {
        if (!batch.wantLogits[begin + static_cast<size_t>(t)]) continue;
        kernels::rmsNorm(m_x.data() + t * dim, m_model.outputNorm().data(), m_xb.data() + rows * dim, dim,
                         c.normEps);
        ++rows;
    }
    if (rows == 0) return;
    matmul(m_output, m_xb.data(), rows, logits, m_pool, m_mm);
    if (c.finalSoftcap > 0) kernels::softcap(logits, rows * c.vocabSize, c.finalSoftcap);
}

void Forward::normRows(const std::vector<float>& weight, const float* in, float* out, int64_t n) {
    const ModelConfig& c = m_model.config();
    const int64_t dim = c.dim;
    auto body = [&](int64_t t0, int64_t t1) {
        for (int64_t t = t0; t < t1; ++t) kernels::rmsNorm(in + t * dim, weight.data(), out + t * dim, dim, c.normEps);
    };
    m_pool.parallelFor(n, body, std::max<int64_t>(1, 16384 / dim));
}

void Forward::residual(const std::vector<float>& postNorm, int64_t n) {
    if (!postNorm.empty()) normRows(postNorm, m_xb.data(), m_xb.data(), n);
    kernels::addInPlace(m_x.data(), m_xb.data(), n * m_model.config().dim);
}

void Forward::layer(int64_t l, const ForwardBatch& batch, size_t begin, int64_t n) {
    const LayerWeights& lw = m_model.layers()[static_cast<size_t>(l)];
    // Attention block: x += [post-norm] wo . attention(q, k, v of norm(x)).
    normRows(lw.attnNorm, m_x.data(), m_xb.data(), n);
    projectQkv(l, n);
    writeKv(l, batch, begin, n);
    attend(l, batch, begin, n);
    matmul(m_matrices[static_cast<size_t>(l)][kProjO], m_att.data(), n, m_xb.data(), m_pool, m_mm);
    residual(lw.postAttnNorm, n);
    // FFN block: x += [post-norm] down(act(gate(norm(x))) * up(norm(x))).
    normRows(lw.ffnNorm, m_x.data(), m_xb.data(), n);
    ffn(l, n);
    residual(lw.postFfnNorm, n);
}

// q, k, v = norm(x) W^T [+ bias]; [per-head RMSNorm of q and k]; RoPE on q and k.
void Forward::projectQkv(int64_t l, int64_t n) {
    const ModelConfig& c = m_model.config();
    const LayerWeights& lw = m_model.layers()[static_cast<size_t>(l)];
    const Matrices& w = m_matrices[static_cast<size_t>(l)];
    const int64_t qDim = c.qDim(), kvDim = c.kvDim(), hd = c.headDim, half = c.ropeDim / 2;
    if (m_options.fused) {
        const kernels::WeightMatrix qkv[3] = {w[kProjQ], w[kProjK], w[kProjV]};
        float* const outs[3] = {m_q.data(), m_k.data(), m_v.data()};
        kernels::matmulGroup(qkv, m_xb.data(), n, outs, m_pool, m_mm);
    } else {
        matmul(w[kProjQ], m_xb.data(), n, m_q.data(), m_pool, m_mm);
        matmul(w[kProjK], m_xb.data(), n, m_k.data(), m_pool, m_mm);
        matmul(w[kProjV], m_xb.data(), n, m_v.data(), m_pool, m_mm);
    }
    if (!lw.bq.empty()) kernels::addBiasRows(m_q.data(), lw.bq.data(), n, qDim);
    if (!lw.bk.empty()) kernels::addBiasRows(m_k.data(), lw.bk.data(), n, kvDim);
    if (!lw.bv.empty()) kernels::addBiasRows(m_v.data(), lw.bv.data(), n, kvDim);
    const auto rope = c.ropeKind == RopeKind::Neox ? kernels::ropeApplyNeox : kernels::ropeApply;
    for (int64_t t = 0; t < n; ++t) {
        float* q = m_q.data() + t * qDim;
        float* k = m_k.data() + t * kvDim;
        if (!lw.qNorm.empty())
            for (int64_t h = 0; h < c.heads; ++h) kernels::rmsNorm(q + h * hd, lw.qNorm.data(), q + h * hd, hd, c.normEps);
        if (!lw.kNorm.empty())
            for (int64_t h = 0; h < c.kvHeads; ++h)
                kernels::rmsNorm(k + h * hd, lw.kNorm.data(), k + h * hd, hd, c.normEps);
        rope(q, c.heads, hd, c.ropeDim, m_cos.data() + t * half, m_sin.data() + t * half);
        rope(k, c.kvHeads, hd, c.ropeDim, m_cos.data() + t * half, m_sin.data() + t * half);
    }
}

// Each token's k and v into its sequence's cache block, in the cache's type.
void Forward::writeKv(int64_t l, const ForwardBatch& batch, size_t begin, int64_t n) {
    const int64_t kvDim = m_model.config().kvDim();
    for (int64_t t = 0; t < n; ++t) {
        const size_t bi = begin + static_cast<size_t>(t);
        const int64_t pos = batch.positions[bi];
        const auto seq = static_cast<size_t>(batch.seqIds[bi]);
        const auto& table = batch.blockTables[seq];
        KvCache& cache = *batch.caches[seq];
        const int64_t block = table[static_cast<size_t>(pos / cache.blockSize())];
        const int64_t slot = pos % cache.blockSize();
        if (cache.type() == KvType::F16) {
            const kernels::VecKernels& vk = kernels::vecKernels();
            vk.toF16(m_k.data() + t * kvDim, cache.keysF16(l, block) + slot * kvDim, kvDim);
            vk.toF16(m_v.data() + t * kvDim, cache.valuesF16(l, block) + slot * kvDim, kvDim);
        } else {
            std::copy_n(m_k.data() + t * kvDim, kvDim, cache.keys(l, block) + slot * kvDim);
            std::copy_n(m_v.data() + t * kvDim, kvDim, cache.values(l, block) + slot * kvDim);
        }
    }
}

void Forward::attend(int64_t l, const ForwardBatch& batch, size_t begin, int64_t n) {
    const ModelConfig& c = m_model.config();
    const int64_t qDim = c.qDim(), kvDim = c.kvDim(), hd = c.headDim;
    // Block pointers of this layer for every sequence in the batch, in the list of the
    // sequence's KV type (null in the other, so both lists share the offsets).
    m_kPtrs.clear();
    m_vPtrs.clear();
    m_kPtrs16.clear();
    m_vPtrs16.clear();
    m_seqPtrStart.clear();
    for (size_t s = 0; s < batch.blockTables.size(); ++s) {
        m_seqPtrStart.push_back(m_kPtrs.size());
        KvCache& cache = *batch.caches[s];
        const bool half = cache.type() == KvType::F16;
        for (int32_t b : batch.blockTables[s]) {
            m_kPtrs.push_back(half ? nullptr : cache.keys(l, b));
            m_vPtrs.push_back(half ? nullptr : cache.values(l, b));
            m_kPtrs16.push_back(half ? cache.keysF16(l, b) : nullptr);
            m_vPtrs16.push_back(half ? cache.valuesF16(l, b) : nullptr);
        }
    }

    // Causal grouped-query attention: one unit per (run of positions, query head). Runs are
    // taken alternately from both ends of the list, so that the contiguous ranges of units
    // the pool hands out mix a prompt's cheap early runs with its costly late ones.
    const kernels::ScoreRule rule(c.attentionScale(), c.attnSoftcap, c.windowOf(l));
    const int64_t group = c.heads / c.kvHeads;
    const auto runs = static_cast<int64_t>(m_runs.size());
    const auto contextLength = static_cast<int64_t>(c.contextLength);
    // A decode token reads whole positions for up to kAttentionRun heads at once when every
    // thread has a run of its own (a batch: the prefetchers follow whole rows, not one head's
    // slice of each); with fewer runs than threads (a lone sequence's decode) one unit per
    // head lets all threads share the work, which measured faster there.
    const bool wholeRows = runs >= m_pool.threads();
    auto attend = [&](int64_t u0, int64_t u1, int worker) {
        float* scores = m_scores.data() + static_cast<size_t>(worker * kAttentionRun * contextLength);
        for (int64_t u = u0; u < u1; ++u) {
            const int64_t i = u / c.heads, h = u % c.heads;
            const AttentionRun& run = m_runs[static_cast<size_t>(i % 2 == 0 ? i / 2 : runs - 1 - i / 2)];
            const int64_t t = run.first;
            const size_t bi = begin + static_cast<size_t>(t);
            const size_t start = m_seqPtrStart[static_cast<size_t>(batch.seqIds[bi])];
            const KvCache& cache = *batch.caches[static_cast<size_t>(batch.seqIds[bi])];
            const float* q = m_q.data() + t * qDim + h * hd;
            float* out = m_att.data() + t * qDim + h * hd;
            const int64_t len = batch.positions[bi] + 1;
            auto attendWith = [&](const auto& kPtrs, const auto& vPtrs) {
                if (run.count > 1 || !wholeRows) {
                    kernels::attendPagedRun(q, qDim, run.count, kPtrs.data() + start, vPtrs.data() + start,
                                            cache.blockSize(), len, kvDim, (h / group) * hd, hd, rule, scores,
                                            contextLength, out, qDim);
                } else if (h % kAttentionRun == 0) {
                    // The first unit of each group of heads does the whole group, the
                    // group's other units have nothing left to do.
                    kernels::attendPagedHeads(q, std::min<int64_t>(kAttentionRun, c.heads - h), h, group,
                                              kPtrs.data() + start, vPtrs.data() + start, cache.blockSize(), len,
                                              kvDim, hd, rule, scores, contextLength, out);
                }
            };
            if (cache.type() == KvType::F32) attendWith(m_kPtrs, m_vPtrs);
            else attendWith(m_kPtrs16, m_vPtrs16);
        }
    };
    // A unit costs about (position * headDim * run length) multiply-adds; keep each thread's
    // share large enough to be worth a wake-up.
    const int64_t unitCost = std::max<int64_t>(1, (batch.positions[begin] + 1) * hd * (n / runs));
    m_pool.parallelFor(runs * c.heads, attend, std::max<int64_t>(1, 16384 / unitCost));
}

void Forward::ffn(int64_t l, int64_t n) {
    const ModelConfig& c = m_model.config();
    const Matrices& w = m_matrices[static_cast<size_t>(l)];
    if (m_options.fused) {
        const kernels::WeightMatrix gateUp[2] = {w[kProjGate], w[kProjUp]};
        float* const outs[2] = {m_hb.data(), m_hb2.data()};
        kernels::matmulGroup(gateUp, m_xb.data(), n, outs, m_pool, m_mm);
    } else {
        matmul(w[kProjGate], m_xb.data(), n, m_hb.data(), m_pool, m_mm);
        matmul(w[kProjUp], m_xb.data(), n, m_hb2.data(), m_pool, m_mm);
    }
    const bool gelu = c.activation == FfnActivation::GeluTanh;
    auto gateBody = [&](int64_t t0, int64_t t1) {
        float* g = m_hb.data() + t0 * c.ffnDim;
        const float* u = m_hb2.data() + t0 * c.ffnDim;
        if (gelu) kernels::geluTanhMul(g, u, (t1 - t0) * c.ffnDim);
        else kernels::siluMul(g, u, (t1 - t0) * c.ffnDim);
    };
    m_pool.parallelFor(n, gateBody, std::max<int64_t>(1, 8192 / c.ffnDim));
    matmul(w[kProjDown], m_hb.data(), n, m_xb.data(), m_pool, m_mm);
}

} // namespace mb::engine
