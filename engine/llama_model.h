// A loaded LLaMA-architecture model: config, tokenizer and weight views into the mapped GGUF file.
#pragma once

#include "engine/gguf.h"
#include "engine/model_config.h"
#include "engine/tokenizer.h"
#include "kernels/cpu/matmul.h"

#include <memory>
#include <string>
#include <vector>

namespace mb::engine {

// Weights of one transformer block. Matrices are row-major (out_features, in_features),
// in the file's own type, pointing into the mapping; norm vectors are converted to F32.
struct LayerWeights {
    std::vector<float> attnNorm; // (dim)
    kernels::WeightMatrix wq;    // (heads * headDim, dim)
    kernels::WeightMatrix wk;    // (kvHeads * headDim, dim)
    kernels::WeightMatrix wv;    // (kvHeads * headDim, dim)
    kernels::WeightMatrix wo;    // (dim, heads * headDim)
    std::vector<float> ffnNorm;  // (dim)
    kernels::WeightMatrix gate;  // (ffnDim, dim)   ffn_gate
    kernels::WeightMatrix up;    // (ffnDim, dim)   ffn_up
    kernels::WeightMatrix down;  // (dim, ffnDim)   ffn_down
};

// Immutable after load and safe to share between threads and sessions. Owns the file
// mapping, so the weight views stay valid for the model's lifetime.
class LlamaModel {
public:
    // Opens and validates `path`: GGUF structure, llama architecture, every tensor present
    // with the shape the config implies, a usable tokenizer. Throws GgufError/ModelError.
    static std::unique_ptr<LlamaModel> load(const std::string& path);

    const LlamaConfig& config() const { return m_config; }
    const GgufFile& file() const { return m_file; }
    const Tokenizer& tokenizer() const { return *m_tokenizer; }
    const std::string& path() const { return m_file.path(); }

    const kernels::WeightMatrix& tokenEmbedding() const { return m_tokenEmbedding; } // (vocab, dim)
    const std::vector<float>& outputNorm() const { return m_outputNorm; }           // (dim)
    const kernels::WeightMatrix& output() const { return m_output; } // (vocab, dim); tied = embedding
    bool tiedOutput() const { return m_tiedOutput; }
    const std::vector<LayerWeights>& layers() const { return m_layers; }

    uint64_t parameterCount() const { return m_parameters; }
    uint64_t tensorBytes() const { return m_tensorBytes; } // bytes of all tensor data in the file

private:
    explicit LlamaModel(GgufFile file);
    kernels::WeightMatrix matrix(const std::string& name, int64_t rows, int64_t cols) const;
    std::vector<float> vector(const std::string& name, int64_t n) const;

    GgufFile m_file;
    LlamaConfig m_config;
    std::unique_ptr<Tokenizer> m_tokenizer;
    kernels::WeightMatrix m_tokenEmbedding;
    std::vector<float> m_outputNorm;
    kernels::WeightMatrix m_output;
    bool m_tiedOutput = false;
    std::vector<LayerWeights> m_layers;
    uint64_t m_parameters = 0;
    uint64_t m_tensorBytes = 0;
};

} // namespace mb::engine
