// CudaForward's set-up and host side: weight uploads, the staged batch description, graphs and run();
// the layer itself is in engine/cuda_layer.cpp.
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
    size_t keys, values, ids, pos, seq, rowOf, cacheBlocks, tableStart, tables, bytes;
};

MetaLayout metaLayout(size_t tokCap, size_t seqCap, size_t tableCap) {
    MetaLayout m{};
    m.keys = 0;
    m.values = seqCap * sizeof(float*);
    m.ids = 2 * seqCap * sizeof(float*);
    m.pos = m.ids + tokCap * sizeof(int32_t);
    m.seq = m.pos + tokCap * sizeof(int32_t);
    m.rowOf = m.seq + tokCap * sizeof(int32_t);
    m.cacheBlocks = m.rowOf + tokCap * sizeof(int32_t);
    m.tableStart = m.cacheBlocks + seqCap * sizeof(int32_t);
    m.tables = m.tableStart + seqCap * sizeof(int32_t);
    m.bytes = m.tables + tableCap * sizeof(int32_t);
    return m;
}

// What of this model the CUDA pass cannot compute, or null. Every architecture of
// engine/model_arch.cpp runs; what is left is a limit of the attention kernels.
const char* unsupportedOnCuda(const LlamaModel& model) {
    if (model.config().headDim > 256) return "head dimensions above 256";
    return nullptr;
}

} // namespace

CudaForward::CudaForward(const LlamaModel& model, const ForwardOptions& options, int deviceIndex)
    : m_model(model), m_options(options), m_deviceIndex(deviceIndex) {
    const ModelConfig& c = model.config();
    m_options.maxChunk = std::max<int64_t>(1, options.maxChunk);
    if (deviceIndex < 0 || deviceIndex >= cu::deviceCount())
        throw std::invalid_argument("cuda:" + std::to_string(deviceIndex) + " does not exist");
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
        l.proj = uploadProjections(w);
        for (size_t i = 0; i < kLayerVectorCount; ++i) l.vec[i] = uploadFloats(w.*kLayerVectors[i]);
        m_layers.push_back(l);
    }
    m_ropeFactors = uploadFloats(c.ropeFreqFactors);
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
    m_inputRows = floats(c.dim); // fixed, so a captured decode graph can read input rows too
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

// Each GGUF tensor once: the projections read from one fused tensor (attn_qkv, phi3's ffn_up:
// the same LayerWeights::source) are row views of one upload when they still lie back to back
// in it (a requantised model converts each view on its own; those are uploaded one by one).
std::array<cu::DeviceMatrix, 7> CudaForward::uploadProjections(const LayerWeights& w) {
    std::array<cu::DeviceMatrix, 7> out{};
    std::array<bool, 7> done{};
    for (size_t i = 0; i < 7; ++i) {
        if (done[i]) continue;
        const kernels::WeightMatrix& first = w.*kProjections[i];
        std::vector<size_t> views = {i}; // the projections of this tensor, in row order
        for (size_t j = i + 1; j < 7; ++j)
            if (!done[j] && std::strcmp(w.source[j], w.source[i]) == 0) views.push_back(j);
        int64_t rows = 0;
        bool adjacent = true;
        for (size_t j : views) {
            const kernels::WeightMatrix& v = w.*kProjections[j];
            adjacent = adjacent && v.type == first.type && v.cols == first.cols &&
                       static_cast<const uint8_t*>(v.data) == first.row(rows);
            rows += v.rows;
        }
        if (!adjacent) {
            views = {i};
            rows = first.rows;
        }
        const cu::DeviceMatrix whole = upload({first.type, rows, first.cols, first.data});
        int64_t at = 0;
        for (size_t j : views) {
            const kernels::WeightMatrix& v = w.*kProjections[j];
            const auto offset = static_cast<size_t>(at) * kernels::rowBytes(whole.type, whole.cols);
            out[j] = {whole.type, v.rows, v.cols, static_cast<const uint8_t*>(whole.data) + offset};
            done[j] = true;
            at += v.rows;
        }
    }
    return out;
}

const float* CudaForward::uploadFloats(const std::vector<float>& v) {
    if (v.empty()) return nullptr;
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
    kv.blockSize = m_blockSize;
    kv.kvDim = static_cast<int32_t>(m_model.config().kvDim());
    kv.layer = layer;
    return kv;
}

cu::EmbedArgs CudaForward::embedArgs() const {
    const MetaLayout m = metaLayout(m_tokCap, m_seqCap, m_tableCap);
    const auto* base = m_meta.as<unsigned char>();
    cu::EmbedArgs a;
    a.table = m_embedding;
    a.ids = reinterpret_cast<const int32_t*>(base + m.ids);
    a.scale = m_model.config().embedScale;
    a.inputs = m_inputRows.as<float>();
    a.rowOf = reinterpret_cast<const int32_t*>(base + m.rowOf); // always read: a graph may meet rows later
    return a;
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
        if (cache->type() != KvType::F32) throw ModelError("the CUDA forward pass keeps K/V in F32 only");
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
    stageInputRows(batch, begin, end, ints(m.rowOf));
    if (m_blockSize != static_cast<int32_t>(blockSize)) m_graph.reset(); // captured with the old one
    m_blockSize = static_cast<int32_t>(blockSize);
    cu::copyToDevice(m_meta.data(), m_stage.data(), m.bytes, m_stream->get());
}

// The chunk's input embeddings packed into m_inputRows (one copy), rowOf[t] = each one's row or -1.
void CudaForward::stageInputRows(const ForwardBatch& batch, size_t begin, size_t end, int32_t* rowOf) {
    const auto dim = static_cast<size_t>(m_model.config().dim);
    int32_t rows = 0;
    for (size_t t = begin; t < end; ++t) {
        const float* row = batch.embeddingAt(t);
        rowOf[t - begin] = row ? rows : -1;
        if (!row) continue;
        if (m_inputStage.empty()) m_inputStage.resize(static_cast<size_t>(m_options.maxChunk) * dim);
        std::copy_n(row, dim, m_inputStage.data() + static_cast<size_t>(rows) * dim);
        ++rows;
    }
    if (rows > 0)
        cu::copyToDevice(m_inputRows.data(), m_inputStage.data(), static_cast<size_t>(rows) * dim * sizeof(float),
                         m_stream->get());
}

void CudaForward::run(const ForwardBatch& batch, float* logits) {
    validate(batch, m_options.rope);
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
