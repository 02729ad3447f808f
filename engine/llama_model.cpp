// Loading a LLaMA model from GGUF and checking every tensor against the config.
#include "engine/llama_model.h"

#include "kernels/cpu/quant.h"

namespace mb::engine {

using kernels::WeightMatrix;

LlamaModel::LlamaModel(GgufFile file) : m_file(std::move(file)) {}

std::unique_ptr<LlamaModel> LlamaModel::load(const std::string& path) {
    std::unique_ptr<LlamaModel> m(new LlamaModel(GgufFile::open(path)));
    try {
        m->m_config = LlamaConfig::fromGguf(m->m_file);
        m->m_tokenizer = Tokenizer::create(Vocab::fromGguf(m->m_file));
    } catch (const std::exception& e) {
        throw ModelError(path + ": " + e.what());
    }
    const LlamaConfig& c = m->m_config;
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
        for (int64_t l = 0; l < c.layers; ++l) {
            const std::string p = "blk." + std::to_string(l) + ".";
            LayerWeights& w = m->m_layers[static_cast<size_t>(l)];
            w.attnNorm = m->vector(p + "attn_norm.weight", c.dim);
            w.wq = m->matrix(p + "attn_q.weight", c.qDim(), c.dim);
            w.wk = m->matrix(p + "attn_k.weight", c.kvDim(), c.dim);
            w.wv = m->matrix(p + "attn_v.weight", c.kvDim(), c.dim);
            w.wo = m->matrix(p + "attn_output.weight", c.dim, c.qDim());
            w.ffnNorm = m->vector(p + "ffn_norm.weight", c.dim);
            w.gate = m->matrix(p + "ffn_gate.weight", c.ffnDim, c.dim);
            w.up = m->matrix(p + "ffn_up.weight", c.ffnDim, c.dim);
            w.down = m->matrix(p + "ffn_down.weight", c.dim, c.ffnDim);
        }
    } catch (const ModelError& e) {
        throw ModelError(path + ": " + e.what());
    }
    for (const auto& t : m->m_file.tensors()) {
        m->m_parameters += t.elements();
        m->m_tensorBytes += t.bytes;
    }
    return m;
}

WeightMatrix LlamaModel::matrix(const std::string& name, int64_t rows, int64_t cols) const {
    const GgufTensorInfo* t = m_file.findTensor(name);
    if (!t) throw ModelError("missing tensor '" + name + "'");
    if (t->shape.size() != 2 || t->shape[0] != static_cast<uint64_t>(cols) ||
        t->shape[1] != static_cast<uint64_t>(rows))
        throw ModelError("tensor '" + name + "' should have shape [" + std::to_string(cols) + ", " +
                         std::to_string(rows) + "]");
    return WeightMatrix{t->type, rows, cols, t->data};
}

std::vector<float> LlamaModel::vector(const std::string& name, int64_t n) const {
    const GgufTensorInfo* t = m_file.findTensor(name);
    if (!t) throw ModelError("missing tensor '" + name + "'");
    if (t->elements() != static_cast<uint64_t>(n) || t->rowLength() != static_cast<uint64_t>(n))
        throw ModelError("tensor '" + name + "' should have " + std::to_string(n) + " elements");
    std::vector<float> out(static_cast<size_t>(n));
    kernels::dequantizeRow(t->type, t->data, out.data(), n);
    return out;
}

} // namespace mb::engine
