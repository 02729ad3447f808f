// Loading a model from GGUF through its architecture's tensor table, checking every tensor against the config.
#include "engine/llama_model.h"
#include "engine/quote.h"

#include "engine/model_panels.h"
#include "engine/quant_mix.h"

#include "kernels/cpu/quant.h"

#include <chrono>

namespace mb::engine {

using kernels::WeightMatrix;

LlamaModel::LlamaModel(GgufFile file) : m_file(std::move(file)) {}

LlamaModel::~LlamaModel() = default; // here, where ModelPanels is complete

const ModelPanels* LlamaModel::cpuPanels() const {
    std::call_once(m_panelsOnce, [this] {
        m_panels = makeModelPanels(*this);
        m_panelBytes = m_panels ? m_panels->bytes : 0;
    });
    return m_panels.get();
}

std::unique_ptr<LlamaModel> LlamaModel::load(const std::string& path, const LoadOptions& options) {
    const auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<LlamaModel> m(new LlamaModel(GgufFile::open(path)));
    try {
        m->m_config = ModelConfig::fromGguf(m->m_file);
        m->m_tokenizer = Tokenizer::create(Vocab::fromGguf(m->m_file));
    } catch (const std::exception& e) {
        throw ModelError(path + ": " + e.what());
    }
    const ModelConfig& c = m->m_config;
    if (static_cast<int64_t>(m->m_tokenizer->size()) < c.vocabSize)
        throw ModelError(path + ": token list has " + std::to_string(m->m_tokenizer->size()) +
                         " entries but the model has " + std::to_string(c.vocabSize) + " outputs");
    try {
        m->m_tokenEmbedding = m->matrix("token_embd.weight", c.vocabSize, c.dim);
        m->m_outputNorm = m->vector("output_norm.weight", c.dim);
        if (m->m_file.findTensor("output.weight")) {
            m->m_output = m->matrix("output.weight", c.vocabSize, c.dim);
        } else {
            m->m_output = m->m_tokenEmbedding;
            m->m_tiedOutput = true;
        }
        m->m_layers.resize(static_cast<size_t>(c.layers));
        for (int64_t l = 0; l < c.layers; ++l) m->loadLayer(l);
    } catch (const ModelError& e) {
        throw ModelError(path + ": " + e.what());
    }
    for (const auto& t : m->m_file.tensors()) {
        m->m_parameters += t.elements();
        m->m_tensorBytes += t.bytes;
    }
    m->m_precision = options.precision;
    if (options.precision != Precision::Native) {
        forEachMatrix(*m, [&](const std::string& name, WeightMatrix& w) { m->convert(w, options.precision, name); });
        if (m->m_tiedOutput) m->m_output = m->m_tokenEmbedding;
    }
    if (options.prefault) m->prefaultWeights();
    m->m_loadMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    return m;
}

namespace {
// The llama-quantize mix a precision stands for: the target of the same name (f16, mixed, q4_0
// and the k-quant mixes); f32, int8 and native have none.
std::optional<QuantizeTarget> mixOf(Precision p) { return quantizeTargetFromName(precisionName(p)); }

kernels::TensorType targetType(Precision p, const ModelConfig& c, bool tied, const kernels::WeightMatrix& w,
                               const std::string& name) {
    using kernels::TensorType;
    if (const auto mix = mixOf(p)) {
        const TensorType to = chooseTensorType(*mix, MixModel{c.layers, c.heads, c.kvHeads, !tied}, name, w.cols, 2, w.type);
        // A quantising mix never widens a matrix the file already quantised (mixed's F16
        // embedding over a Q8_0 file): the lost bits do not come back, and the file's bytes
        // stay mapped instead of a wider copy in RAM (1 GB for Llama 3.1 8B's embedding). The
        // f16 precision asks for F16 weights as such and still gets them.
        const bool widens = kernels::rowBytes(to, w.cols) > kernels::rowBytes(w.type, w.cols);
        return *mix != QuantizeTarget::F16 && kernels::isQuantised(w.type) && widens ? w.type : to;
    }
    TensorType want = w.type; // native
    if (p == Precision::F32) want = TensorType::F32;
    if (p == Precision::Int8) want = TensorType::Q8_0;
    // Rows that blocks cannot cover (e.g. stories260K's 172-wide ffn_down) stay F16.
    if (w.cols % kernels::blockSize(want) != 0) want = TensorType::F16;
    return want;
}
} // namespace

void LlamaModel::convert(kernels::WeightMatrix& w, Precision precision, const std::string& name) {
    const kernels::TensorType to = targetType(precision, m_config, m_tiedOutput, w, name);
    if (to == w.type) return;
    std::vector<uint8_t> out(static_cast<size_t>(w.rows) * kernels::rowBytes(to, w.cols));
    std::vector<float> row(static_cast<size_t>(w.cols));
    for (int64_t r = 0; r < w.rows; ++r) {
        kernels::dequantizeRow(w.type, w.row(r), row.data(), w.cols);
        kernels::quantizeRow(to, row.data(), out.data() + static_cast<size_t>(r) * kernels::rowBytes(to, w.cols),
                             w.cols);
    }
    w.type = to;
    w.data = out.data();
    m_owned.push_back(std::move(out));
}

void LlamaModel::prefaultWeights() const {
    // One read per 4 KiB page; the volatile sink keeps the loads.
    volatile uint8_t sink = 0;
    auto touch = [&](const kernels::WeightMatrix& w) {
        const auto* p = static_cast<const uint8_t*>(w.data);
        uint8_t acc = 0;
        for (size_t off = 0; off < w.bytes(); off += 4096) acc ^= p[off];
        sink = sink ^ acc;
    };
    forEachMatrix(*this, [&](const std::string&, const WeightMatrix& w) { touch(w); });
}

uint64_t LlamaModel::weightBytes() const {
    uint64_t b = 0;
    forEachMatrix(*this, [&](const std::string&, const WeightMatrix& w) { b += w.bytes(); });
    return b;
}

namespace {
// Rows [first, first + count) of `m`, in place (a fused tensor's part).
WeightMatrix rowsOf(const WeightMatrix& m, int64_t first, int64_t count) {
    return WeightMatrix{m.type, count, m.cols, m.row(first)};
}
} // namespace

void LlamaModel::loadLayer(int64_t l) {
    const ModelConfig& c = m_config;
    const std::string p = "blk." + std::to_string(l) + ".";
    LayerWeights& w = m_layers[static_cast<size_t>(l)];
    auto set = [&](kernels::WeightMatrix LayerWeights::*proj, const WeightMatrix& m, const char* suffix) {
        w.*proj = m;
        for (size_t i = 0; i < 7; ++i)
            if (kProjections[i] == proj) w.source[i] = suffix;
    };
    for (const ArchTensor& t : c.traits().layerTensors) {
        const std::string name = p + t.suffix;
        if (!t.required && !m_file.findTensor(name)) continue;
        switch (t.role) {
        case LayerRole::AttnNorm: w.attnNorm = vector(name, c.dim); break;
        case LayerRole::Q: set(&LayerWeights::wq, matrix(name, c.qDim(), c.dim), t.suffix); break;
        case LayerRole::K: set(&LayerWeights::wk, matrix(name, c.kvDim(), c.dim), t.suffix); break;
        case LayerRole::V: set(&LayerWeights::wv, matrix(name, c.kvDim(), c.dim), t.suffix); break;
        case LayerRole::Qkv: {
            const WeightMatrix m = matrix(name, c.qDim() + 2 * c.kvDim(), c.dim);
            set(&LayerWeights::wq, rowsOf(m, 0, c.qDim()), t.suffix);
            set(&LayerWeights::wk, rowsOf(m, c.qDim(), c.kvDim()), t.suffix);
            set(&LayerWeights::wv, rowsOf(m, c.qDim() + c.kvDim(), c.kvDim()), t.suffix);
            break;
        }
        case LayerRole::O: set(&LayerWeights::wo, matrix(name, c.dim, c.qDim()), t.suffix); break;
        case LayerRole::QBias: w.bq = vector(name, c.qDim()); break;
        case LayerRole::KBias: w.bk = vector(name, c.kvDim()); break;
        case LayerRole::VBias: w.bv = vector(name, c.kvDim()); break;
        case LayerRole::QNorm: w.qNorm = vector(name, c.headDim); break;
        case LayerRole::KNorm: w.kNorm = vector(name, c.headDim); break;
        case LayerRole::PostAttnNorm: w.postAttnNorm = vector(name, c.dim); break;
        case LayerRole::FfnNorm: w.ffnNorm = vector(name, c.dim); break;
        case LayerRole::Gate: set(&LayerWeights::gate, matrix(name, c.ffnDim, c.dim), t.suffix); break;
        case LayerRole::Up: set(&LayerWeights::up, matrix(name, c.ffnDim, c.dim), t.suffix); break;
        case LayerRole::GateUp: {
            const WeightMatrix m = matrix(name, 2 * c.ffnDim, c.dim);
            set(&LayerWeights::gate, rowsOf(m, 0, c.ffnDim), t.suffix);
            set(&LayerWeights::up, rowsOf(m, c.ffnDim, c.ffnDim), t.suffix);
            break;
        }
        case LayerRole::Down: set(&LayerWeights::down, matrix(name, c.dim, c.ffnDim), t.suffix); break;
        case LayerRole::PostFfnNorm: w.postFfnNorm = vector(name, c.dim); break;
        }
    }
    for (size_t i = 0; i < 7; ++i) // the table must give every projection
        if (!w.source[i]) throw ModelError("layer " + std::to_string(l) + " has no projection " + std::to_string(i));
}

WeightMatrix LlamaModel::matrix(const std::string& name, int64_t rows, int64_t cols) const {
    const GgufTensorInfo* t = m_file.findTensor(name);
    if (!t) throw ModelError("missing tensor " + quoteName(name));
    if (t->shape.size() != 2 || t->shape[0] != static_cast<uint64_t>(cols) ||
        t->shape[1] != static_cast<uint64_t>(rows))
        throw ModelError("tensor '" + name + "' should have shape [" + std::to_string(cols) + ", " +
                         std::to_string(rows) + "]");
    return WeightMatrix{t->type, rows, cols, t->data};
}

std::vector<float> LlamaModel::vector(const std::string& name, int64_t n) const {
    const GgufTensorInfo* t = m_file.findTensor(name);
    if (!t) throw ModelError("missing tensor " + quoteName(name));
    if (t->elements() != static_cast<uint64_t>(n) || t->rowLength() != static_cast<uint64_t>(n))
        throw ModelError("tensor '" + name + "' should have " + std::to_string(n) + " elements");
    std::vector<float> out(static_cast<size_t>(n));
    kernels::dequantizeRow(t->type, t->data, out.data(), n);
    return out;
}

} // namespace mb::engine
