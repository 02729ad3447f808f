// A loaded model of any supported architecture: config, tokenizer and weight views into the mapped GGUF file.
#pragma once

#include "engine/gguf.h"
#include "engine/model_config.h"
#include "engine/profile.h"
#include "engine/tokenizer.h"
#include "kernels/cpu/matmul.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace mb::engine {

// Weights of one transformer block, whatever the architecture (engine/model_arch.h says which
// a file has). Matrices are row-major (out_features, in_features), in the file's own type,
// pointing into the mapping (a fused tensor gives row views: attn_qkv -> wq, wk, wv and phi3's
// ffn_up -> gate, up); vectors are converted to F32 and empty when the architecture has none.
struct LayerWeights {
    std::vector<float> attnNorm; // (dim)
    kernels::WeightMatrix wq;    // (heads * headDim, dim)
    kernels::WeightMatrix wk;    // (kvHeads * headDim, dim)
    kernels::WeightMatrix wv;    // (kvHeads * headDim, dim)
    std::vector<float> bq, bk, bv;   // (qDim), (kvDim), (kvDim): Q/K/V biases (qwen2)
    std::vector<float> qNorm, kNorm; // (headDim): per-head RMSNorm of q and k before RoPE (qwen3)
    kernels::WeightMatrix wo;        // (dim, heads * headDim)
    std::vector<float> postAttnNorm; // (dim): norm of the attention output before the residual (gemma2)
    std::vector<float> ffnNorm;      // (dim)
    kernels::WeightMatrix gate;      // (ffnDim, dim)   ffn_gate
    kernels::WeightMatrix up;        // (ffnDim, dim)   ffn_up
    kernels::WeightMatrix down;      // (dim, ffnDim)   ffn_down
    std::vector<float> postFfnNorm;  // (dim): norm of the FFN output before the residual (gemma2)
    // The GGUF tensor (name after "blk.N.") each of the seven projections was read from.
    std::array<const char*, 7> source{};
};

// Index of a projection in kProjections (and in every per-layer array kept in its order).
enum Projection : size_t { kProjQ, kProjK, kProjV, kProjO, kProjGate, kProjUp, kProjDown };

// The seven products of every layer, in the one order the panels, the CUDA uploads and
// the load-time conversions use.
inline constexpr kernels::WeightMatrix LayerWeights::*kProjections[7] = {
    &LayerWeights::wq, &LayerWeights::wk, &LayerWeights::wv, &LayerWeights::wo,
    &LayerWeights::gate, &LayerWeights::up, &LayerWeights::down};

// Index of a per-layer vector (norm weights, biases) in kLayerVectors.
enum LayerVector : size_t {
    kVecAttnNorm, kVecQBias, kVecKBias, kVecVBias, kVecQNorm, kVecKNorm, kVecPostAttnNorm, kVecFfnNorm, kVecPostFfnNorm,
    kLayerVectorCount
};

// Every per-layer vector, in LayerVector order: what a backend that copies the weights
// (CudaForward) copies, so a vector added to LayerWeights is one more entry here.
inline constexpr std::vector<float> LayerWeights::*kLayerVectors[kLayerVectorCount] = {
    &LayerWeights::attnNorm, &LayerWeights::bq,           &LayerWeights::bk,
    &LayerWeights::bv,       &LayerWeights::qNorm,        &LayerWeights::kNorm,
    &LayerWeights::postAttnNorm, &LayerWeights::ffnNorm, &LayerWeights::postFfnNorm};

struct LoadOptions {
    // Weight types to compute with. Native keeps the file's types (zero copy, views into
    // the mapping); otherwise 2-D weights are requantised into owned buffers at load:
    // f32/f16 -> that type; mixed -> Q8_0 for every projection and the output matrix,
    // F16 for the embedding; int8 -> Q8_0 everywhere (a matrix whose rows blocks cannot cover
    // stays F16); q4_0 and the k-quant mixes (q4_k_m, ...) -> the types llama-quantize would
    // write for that file type (engine/quant_mix.h: output Q6_K, attn_v/ffn_down raised, its
    // fallbacks for short rows).
    Precision precision = Precision::Native;
    // Touch every page of the weights now, so the first request does not pay for page
    // faults (the fast profile's preload).
    bool prefault = false;
};

struct ModelPanels; // engine/model_panels.h

// Immutable after load (but for the weight panels, made once on demand and thread-safely) and
// safe to share between threads and sessions. Owns the file mapping and any requantised
// buffers, so the weight views stay valid for the model's lifetime.

class LlamaModel {
public:
    ~LlamaModel();
    // Opens and validates `path`: GGUF structure, a supported architecture, every tensor its
    // table names present with the shape the config implies, a usable tokenizer. Throws
    // GgufError/ModelError.
    static std::unique_ptr<LlamaModel> load(const std::string& path, const LoadOptions& options = {});

    const ModelConfig& config() const { return m_config; }
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
    // Bytes of the weights as computed with (after any requantisation).
    uint64_t weightBytes() const;
    Precision precision() const { return m_precision; }
    double loadMs() const { return m_loadMs; } // parse + requantise + prefault

    // The F32 and Q8_0 matrices as 16-row panels for the CPU's outer-product products
    // (engine/model_panels.h), made by the first call from any thread and kept for the
    // model's lifetime, so every Forward over this model shares one copy; null when they are
    // not made (no AVX-512 table, no such matrix, or too big: makeModelPanels). Throws
    // std::bad_alloc when the copy does not fit (a later call tries again).
    const ModelPanels* cpuPanels() const;
    // Bytes of those panels; 0 until cpuPanels() has made them.
    uint64_t panelBytes() const { return m_panelBytes.load(); }

private:
    explicit LlamaModel(GgufFile file);
    kernels::WeightMatrix matrix(const std::string& name, int64_t rows, int64_t cols) const;
    std::vector<float> vector(const std::string& name, int64_t n) const;
    // Requantises `w` to the type the precision asks for, into an owned buffer.
    void convert(kernels::WeightMatrix& w, Precision precision, const std::string& name);
    void loadLayer(int64_t l);
    // fn(GGUF tensor name, matrix) for the embedding, the output (unless tied) and each layer's
    // seven projections (kProjections; the views of a fused tensor share its name).
    template <class Self, class Fn>
    static void forEachMatrix(Self& self, Fn&& fn) {
        fn(std::string("token_embd.weight"), self.m_tokenEmbedding);
        if (!self.m_tiedOutput) fn(std::string("output.weight"), self.m_output);
        for (size_t l = 0; l < self.m_layers.size(); ++l) {
            auto& w = self.m_layers[l];
            const std::string p = "blk." + std::to_string(l) + ".";
            for (size_t i = 0; i < 7; ++i) fn(p + w.source[i], w.*kProjections[i]);
        }
    }
    void prefaultWeights() const;

    GgufFile m_file;
    ModelConfig m_config;
    std::unique_ptr<Tokenizer> m_tokenizer;
    kernels::WeightMatrix m_tokenEmbedding;
    std::vector<float> m_outputNorm;
    kernels::WeightMatrix m_output;
    bool m_tiedOutput = false;
    std::vector<LayerWeights> m_layers;
    uint64_t m_parameters = 0;
    uint64_t m_tensorBytes = 0;
    Precision m_precision = Precision::Native;
    double m_loadMs = 0;
    std::vector<std::vector<uint8_t>> m_owned; // requantised weights
    mutable std::once_flag m_panelsOnce;
    mutable std::unique_ptr<ModelPanels> m_panels; // written once, under m_panelsOnce
    mutable std::atomic<uint64_t> m_panelBytes{0};
};

} // namespace mb::engine
