// CudaForward: the same layer sequence as forward.cpp, as CUDA kernels and cuBLAS products on one stream.
//
// Where the time goes: batch-1 decode reads every weight once per token (the matvec
// kernels), so it is bound by HBM bandwidth; prefill is bound by cuBLAS's F16 tensor-core
// GEMMs (quantised weights are first expanded to F16, one matrix at a time). Attention grows
// with context. Launch overhead (about a dozen kernels per layer) is what the fast profile's
// CUDA graph removes from each decode step.
#include "engine/cuda_forward.h"

#include "kernels/cpu/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace mb::engine {

namespace cu = kernels::cuda;

namespace {

// The device half of a KvCache created with KvStorage::Device: K and V of the same
// geometry, (layers, blocks, blockSize, kvDim) F32 each, zeroed once.
class CudaKvMirror final : public KvMirror {
public:
    CudaKvMirror(const KvCache& cache, cu::Stream stream) {
        const size_t bytes = cache.bytes() / 2;
        keys = cu::DeviceBuffer(bytes);
        values = cu::DeviceBuffer(bytes);
        cu::fillZero(keys.data(), bytes, stream);
        cu::fillZero(values.data(), bytes, stream);
    }
    cu::DeviceBuffer keys, values;
};

struct MetaLayout {
    size_t keys, values, ids, pos, seq, cacheBlocks, tableStart, tables, bytes;
};

MetaLayout metaLayout(size_t tokCap, size_t seqCap, size_t tableCap) {
    MetaLayout m{};
    m.keys = 0;
    m.values = seqCap * sizeof(float*);
    m.ids = 2 * seqCap * sizeof(float*);
    m.pos = m.ids + tokCap * sizeof(int32_t);
    m.seq = m.pos + tokCap * sizeof(int32_t);
    m.cacheBlocks = m.seq + tokCap * sizeof(int32_t);
    m.tableStart = m.cacheBlocks + seqCap * sizeof(int32_t);
    m.tables = m.tableStart + seqCap * sizeof(int32_t);
    m.bytes = m.tables + tableCap * sizeof(int32_t);
    return m;
}

constexpr int32_t kMaxSplits = 32; // attention splits for a single decode token

// What of this model the CUDA pass lacks (it computes llama's layer: NORM RoPE without
// factors, no biases or Q/K norms, SiLU, no soft-caps or sliding windows), or null.
const char* unsupportedOnCuda(const LlamaModel& model) {
    const ModelConfig& c = model.config();
    if (c.ropeKind != RopeKind::Norm) return "NEOX RoPE (qwen2, qwen3, gemma2, phi3)";
    if (!c.ropeFreqFactors.empty() || c.ropePosScale != 1.0f) return "RoPE scaling (rope_freqs.weight, linear)";
    if (c.activation != FfnActivation::Silu) return "the GELU-gated FFN (gemma2)";
    if (c.attnSoftcap > 0 || c.finalSoftcap > 0) return "logit soft-capping (gemma2)";
    if (c.slidingWindow > 0) return "sliding-window attention";
    if (c.embedScale != 1.0f || c.queryScale > 0)
        return "scaled embeddings or queries (gemma2)";
    for (const LayerWeights& w : model.layers())
        if (!w.bq.empty() || !w.bk.empty() || !w.bv.empty() || !w.qNorm.empty() || !w.postAttnNorm.empty())
            return "Q/K/V biases, Q/K norms or post-norms (qwen2, qwen3, gemma2)";
    return nullptr;
}

} // namespace

CudaForward::CudaForward(const LlamaModel& model, const ForwardOptions& options, int deviceIndex)
    : m_model(model), m_options(options), m_deviceIndex(deviceIndex) {
    const ModelConfig& c = model.config();
    m_options.maxChunk = std::max<int64_t>(1, options.maxChunk);
    if (deviceIndex < 0 || deviceIndex >= cu::deviceCount())
        throw std::invalid_argument("cuda:" + std::to_string(deviceIndex) + " does not exist");
    if (c.headDim > 256) throw ModelError("the CUDA backend supports head dimensions up to 256");
    if (const char* missing = unsupportedOnCuda(model))
        throw ModelError(std::string("the CUDA backend does not run ") + missing + " yet; use the CPU (--device cpu)");
    cu::setDevice(deviceIndex);
    m_stream = std::make_unique<cu::StreamOwner>();
    m_blas = std::make_unique<cu::BlasHandle>(m_stream->get());

    m_embedding = upload(model.tokenEmbedding());
    m_output = model.tiedOutput() ? m_embedding : upload(model.output());
    m_outputNorm = uploadFloats(model.outputNorm());
    for (const LayerWeights& w : model.layers()) {
        Layer l;
        for (size_t i = 0; i < 7; ++i) l.proj[i] = upload(w.*kProjections[i]);
        l.attnNorm = uploadFloats(w.attnNorm);
        l.ffnNorm = uploadFloats(w.ffnNorm);
        m_layers.push_back(l);
    }
    if (options.rope) { // the fast profile's table, resident like the weights
        const size_t floats = static_cast<size_t>(options.rope->positions() * (c.ropeDim / 2));
        const std::vector<float> cosv(options.rope->cos(0), options.rope->cos(0) + floats);
        const std::vector<float> sinv(options.rope->sin(0), options.rope->sin(0) + floats);
        m_ropeCos = uploadFloats(cosv);
        m_ropeSin = uploadFloats(sinv);
    }

    const int64_t chunk = m_options.maxChunk;
    auto floats = [&](int64_t width) { return cu::DeviceBuffer(static_cast<size_t>(chunk * width) * sizeof(float)); };
    m_x = floats(c.dim);
    m_xb = floats(c.dim);
    m_delta = floats(c.dim);
    m_q = floats(c.qDim());
    m_k = floats(c.kvDim());
    m_v = floats(c.kvDim());
    m_att = floats(c.qDim());
    m_hb = floats(c.ffnDim);
    m_hb2 = floats(c.ffnDim);
    m_logits = floats(c.vocabSize);
    m_partialTokens = std::max<int64_t>(kMaxSplits, chunk);
    m_partial = cu::DeviceBuffer(
        static_cast<size_t>(cu::attentionScratchFloats(m_partialTokens, static_cast<int32_t>(c.heads),
                                                       static_cast<int32_t>(c.headDim), 1)) * sizeof(float));
    if (chunk > cu::kMatvecMaxTokens) {
        const int64_t widest = std::max({c.dim, c.qDim(), c.ffnDim});
        m_xHalf = cu::DeviceBuffer(static_cast<size_t>(chunk * widest) * 2);
    }
    ensureMeta(static_cast<size_t>(chunk), 1, 64);
    m_stream->synchronize(); // uploads done, errors surface here
}

CudaForward::~CudaForward() = default;

cu::DeviceMatrix CudaForward::upload(const kernels::WeightMatrix& w) {
    cu::DeviceMatrix d{w.type, w.rows, w.cols, nullptr};
    std::vector<float> converted;
    const void* src = w.data;
    size_t bytes = w.bytes();
    // Every weight type of the table is uploaded as stored (device memory = the file's bytes) and
    // decoded in the kernels; only a type without a device decoder (Q8_K, activations only) would
    // be dequantised here and computed as F32.
    if (!cu::deviceWeightType(w.type)) {
        converted.resize(static_cast<size_t>(w.rows * w.cols));
        for (int64_t r = 0; r < w.rows; ++r)
            kernels::dequantizeRow(w.type, w.row(r), converted.data() + r * w.cols, w.cols);
        d.type = kernels::TensorType::F32;
        src = converted.data();
        bytes = converted.size() * sizeof(float);
    }
    m_owned.emplace_back(bytes);
    cu::copyToDevice(m_owned.back().data(), src, bytes, m_stream->get());
    if (!converted.empty()) m_stream->synchronize(); // the staging vector dies here
    d.data = m_owned.back().data();
    m_weightBytes += bytes;
    if (d.type != kernels::TensorType::F16) m_f16ScratchElems = std::max(m_f16ScratchElems, w.rows * w.cols);
    return d;
}

const float* CudaForward::uploadFloats(const std::vector<float>& v) {
    m_owned.emplace_back(v.size() * sizeof(float));
    cu::copyToDevice(m_owned.back().data(), v.data(), v.size() * sizeof(float), m_stream->get());
    m_stream->synchronize(); // `v` may be a temporary
    return m_owned.back().as<float>();
}

void CudaForward::ensureMeta(size_t tokens, size_t seqs, size_t tableEntries) {
    if (tokens <= m_tokCap && seqs <= m_seqCap && tableEntries <= m_tableCap) return;
    m_tokCap = std::max(m_tokCap, tokens);
    m_seqCap = std::max(m_seqCap, std::max<size_t>(seqs, 2 * m_seqCap));
    m_tableCap = std::max(m_tableCap, std::max<size_t>(tableEntries, 2 * m_tableCap));
    const MetaLayout m = metaLayout(m_tokCap, m_seqCap, m_tableCap);
    m_stage.assign(m.bytes, 0);
    m_meta = cu::DeviceBuffer(m.bytes);
    m_graph.reset(); // the captured step read the old buffer
}

cu::PagedKv CudaForward::pagedKv(int32_t layer) const {
    const MetaLayout m = metaLayout(m_tokCap, m_seqCap, m_tableCap);
    const auto* base = m_meta.as<unsigned char>();
    cu::PagedKv kv;
    kv.keys = reinterpret_cast<float* const*>(base + m.keys);
    kv.values = reinterpret_cast<float* const*>(base + m.values);
    kv.cacheBlocks = reinterpret_cast<const int32_t*>(base + m.cacheBlocks);
    kv.tables = reinterpret_cast<const int32_t*>(base + m.tables);
    kv.tableStart = reinterpret_cast<const int32_t*>(base + m.tableStart);
    kv.seqOfToken = reinterpret_cast<const int32_t*>(base + m.seq);
    kv.posOfToken = reinterpret_cast<const int32_t*>(base + m.pos);
    kv.kvDim = static_cast<int32_t>(m_model.config().kvDim());
    kv.layer = layer;
    return kv;
}

void CudaForward::stageChunk(const ForwardBatch& batch, size_t begin, size_t end) {
    const ModelConfig& c = m_model.config();
    const size_t n = end - begin, seqs = batch.caches.size();
    size_t tableEntries = 0;
    for (const auto& t : batch.blockTables) tableEntries += t.size();
    int64_t blockSize = 0;
    for (KvCache* cache : batch.caches) {
        if (cache->storage() != KvStorage::Device)
            throw ModelError("the CUDA forward pass needs a KV cache created with KvStorage::Device");
        if (cache->layers() != c.layers || cache->kvDim() != c.kvDim())
            throw ModelError("KV cache geometry does not match the model");
        if (blockSize != 0 && cache->blockSize() != blockSize)
            throw ModelError("the CUDA forward pass needs one block size for all caches of a batch");
        blockSize = cache->blockSize();
        if (!dynamic_cast<CudaKvMirror*>(cache->mirror()))
            cache->setMirror(std::make_unique<CudaKvMirror>(*cache, m_stream->get()));
    }
    ensureMeta(n, seqs, tableEntries);
    const MetaLayout m = metaLayout(m_tokCap, m_seqCap, m_tableCap);
    unsigned char* st = m_stage.data();
    auto ints = [&](size_t offset) { return reinterpret_cast<int32_t*>(st + offset); };
    auto ptrs = [&](size_t offset) { return reinterpret_cast<float**>(st + offset); };
    int32_t tableAt = 0;
    for (size_t s = 0; s < seqs; ++s) {
        auto* mirror = static_cast<CudaKvMirror*>(batch.caches[s]->mirror());
        ptrs(m.keys)[s] = mirror->keys.as<float>();
        ptrs(m.values)[s] = mirror->values.as<float>();
        ints(m.cacheBlocks)[s] = static_cast<int32_t>(batch.caches[s]->blocks());
        ints(m.tableStart)[s] = tableAt;
        std::memcpy(ints(m.tables) + tableAt, batch.blockTables[s].data(), batch.blockTables[s].size_bytes());
        tableAt += static_cast<int32_t>(batch.blockTables[s].size());
    }
    m_wantRows.clear();
    m_oneSequence = true;
    for (size_t t = 0; t < n; ++t) {
        if (t > 0 && (batch.seqIds[begin + t] != batch.seqIds[begin] ||
                      batch.positions[begin + t] != batch.positions[begin + t - 1] + 1))
            m_oneSequence = false;
        ints(m.ids)[t] = batch.tokens[begin + t];
        ints(m.pos)[t] = static_cast<int32_t>(batch.positions[begin + t]);
        ints(m.seq)[t] = batch.seqIds[begin + t];
        if (batch.wantLogits[begin + t]) m_wantRows.push_back(static_cast<int64_t>(t));
    }
    if (m_blockSize != static_cast<int32_t>(blockSize)) m_graph.reset(); // captured with the old one
    m_blockSize = static_cast<int32_t>(blockSize);
    cu::copyToDevice(m_meta.data(), m_stage.data(), m.bytes, m_stream->get());
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

void CudaForward::enqueueChunk(int64_t n) {
    const ModelConfig& c = m_model.config();
    const cu::Stream s = m_stream->get();
    const MetaLayout m = metaLayout(m_tokCap, m_seqCap, m_tableCap);
    const auto* ids = reinterpret_cast<const int32_t*>(m_meta.as<unsigned char>() + m.ids);
    float *x = m_x.as<float>(), *xb = m_xb.as<float>(), *delta = m_delta.as<float>();
    float *q = m_q.as<float>(), *k = m_k.as<float>(), *v = m_v.as<float>(), *att = m_att.as<float>();
    float *hb = m_hb.as<float>(), *hb2 = m_hb2.as<float>();
    const float eps = c.normEps;
    const auto heads = static_cast<int32_t>(c.heads), kvHeads = static_cast<int32_t>(c.kvHeads);
    const auto hd = static_cast<int32_t>(c.headDim);
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.headDim));
    const auto splits = static_cast<int32_t>(std::clamp<int64_t>(m_partialTokens / n, 1, kMaxSplits));

    // x += delta (the pending residual) and xb = norm(x): one kernel when fused.
    bool pending = false;
    auto norm = [&](const float* weight) {
        if (pending && !m_options.fused) cu::addInPlace(x, delta, n * c.dim, s);
        cu::addRmsNorm(x, pending && m_options.fused ? delta : nullptr, weight, xb, n, c.dim, eps, s);
        pending = false;
    };

    cu::embedRows(m_embedding, ids, n, x, s);
    for (size_t l = 0; l < m_layers.size(); ++l) {
        const Layer& w = m_layers[l];
        norm(w.attnNorm);
        product(w.proj[kProjQ], xb, n, q);
        product(w.proj[kProjK], xb, n, k);
        product(w.proj[kProjV], xb, n, v);
        cu::PagedKv kv = pagedKv(static_cast<int32_t>(l));
        kv.blockSize = m_blockSize;
        const cu::RopeArgs rope{q, k, v, n, heads, kvHeads, hd, static_cast<int32_t>(c.ropeDim), c.ropeBase,
                                m_ropeCos, m_ropeSin};
        cu::ropeAndStore(rope, kv, /*writeKv=*/m_options.fused, s);
        if (!m_options.fused) cu::storeKv(k, v, n, kv, s);
        if (n > 1 && m_oneSequence && cu::prefillAttentionSupported(heads, kvHeads, hd)) // prefill: tiled
            cu::prefillAttention(q, kv, n, heads, kvHeads, hd, scale, att, s);
        else // decode steps and mixed batches: split over the sequence
            cu::attention(q, kv, n, heads, kvHeads, hd, scale, splits, m_partial.as<float>(), att, s);
        product(w.proj[kProjO], att, n, delta);
        pending = true;
        norm(w.ffnNorm);
        product(w.proj[kProjGate], xb, n, hb);
        product(w.proj[kProjUp], xb, n, hb2);
        cu::siluMul(hb, hb2, n * c.ffnDim, s);
        product(w.proj[kProjDown], hb, n, delta);
        pending = true;
    }
    norm(m_outputNorm);

    const auto rows = static_cast<int64_t>(m_wantRows.size());
    if (rows == 0) return;
    const float* src = xb;
    if (rows != n) { // gather the wanted rows (x is free now)
        for (int64_t i = 0; i < rows; ++i)
            cu::copyOnDevice(x + i * c.dim, xb + m_wantRows[static_cast<size_t>(i)] * c.dim,
                             static_cast<size_t>(c.dim) * sizeof(float), s);
        src = x;
    }
    product(m_output, src, rows, m_logits.as<float>());
}

void CudaForward::run(const ForwardBatch& batch, float* logits) {
    validate(batch, m_options.rope);
    for (size_t t = 0; t < batch.embeddings.size(); ++t)
        if (batch.embeddings[t])
            throw ModelError("input embeddings (image positions) run on the CPU backend only in this build");
    cu::setDevice(m_deviceIndex);
    const size_t n = batch.tokens.size();
    const auto vocab = static_cast<size_t>(m_model.config().vocabSize);
    const cu::Stream s = m_stream->get();

    if (m_options.graphs && n == 1 && batch.wantLogits[0]) {
        // Fast profile decode: inputs go to fixed device buffers, then one graph launch.
        stageChunk(batch, 0, 1);
        if (!m_graph.ready()) {
            m_graph.begin(s);
            try {
                enqueueChunk(1);
            } catch (...) {
                m_graph.abort(s);
                throw;
            }
            m_graph.end(s);
            ++m_graphCaptures;
        }
        m_graph.launch(s);
        ++m_graphReplays;
        cu::copyToHost(logits, m_logits.data(), vocab * sizeof(float), s);
        m_stream->synchronize();
        return;
    }

    size_t logitRow = 0;
    const auto chunk = static_cast<size_t>(m_options.maxChunk);
    for (size_t begin = 0; begin < n; begin += chunk) {
        const size_t end = std::min(n, begin + chunk);
        stageChunk(batch, begin, end);
        enqueueChunk(static_cast<int64_t>(end - begin));
        cu::copyToHost(logits + logitRow * vocab, m_logits.data(), m_wantRows.size() * vocab * sizeof(float), s);
        logitRow += m_wantRows.size();
        // The staging area and the next chunk's inputs are reused: finish this chunk first.
        m_stream->synchronize();
    }
}

} // namespace mb::engine
