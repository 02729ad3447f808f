// Model architectures as data: what each `general.architecture` computes and which tensors it reads.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace mb::engine {

enum class ModelArch : uint8_t { Llama, Qwen2, Qwen3, Gemma2, Phi3 };

// Which pairs of a head's first rotDim values RoPE rotates.
enum class RopeKind : uint8_t {
    Norm, // (x[2i], x[2i+1]): llama
    Neox, // (x[i], x[i + rotDim/2]): qwen2, qwen3, gemma2, phi3
};

// The gated FFN's activation: down(act(gate(x)) * up(x)).
enum class FfnActivation : uint8_t {
    Silu,     // v / (1 + exp(-v))
    GeluTanh, // 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))): gemma2
};

// Which layers use ARCH.attention.sliding_window when the file sets one (> 0).
enum class SlidingLayers : uint8_t {
    None, // the architecture ignores the key (llama, qwen2, qwen3 in llama.cpp)
    All,  // every layer (phi3)
    Even, // layers 0, 2, 4, ... (gemma2; the odd layers attend globally)
};

// What a per-layer tensor is to the forward pass. Fused tensors are split into row views
// at load: Qkv = Q rows | K rows | V rows, GateUp = gate rows | up rows.
enum class LayerRole : uint8_t {
    AttnNorm, Q, K, V, Qkv, O, QBias, KBias, VBias, QNorm, KNorm, PostAttnNorm,
    FfnNorm, Gate, Up, GateUp, Down, PostFfnNorm,
};

// One tensor of a layer: GGUF name "blk.N." + suffix.
struct ArchTensor {
    LayerRole role;
    const char* suffix;
    bool required;
};

// One row of the architecture table (engine/model_arch.cpp). Keys are read under the
// prefix `name` ("qwen2.embedding_length", ...) by ModelConfig::fromGguf.
struct ArchTraits {
    ModelArch arch;
    const char* name; // general.architecture
    RopeKind rope;
    FfnActivation activation;
    bool embedScaleSqrtDim;  // embeddings x sqrt(dim) (gemma2)
    SlidingLayers sliding;
    float attnSoftcapDefault;  // ARCH.attn_logit_softcapping when absent (0 = none)
    float finalSoftcapDefault; // ARCH.final_logit_softcapping when absent (0 = none)
    std::span<const ArchTensor> layerTensors;
};

const ArchTraits& archTraits(ModelArch arch);
// nullptr for a name the engine does not run.
const ArchTraits* findArch(std::string_view name);
// "llama, qwen2, qwen3, gemma2, phi3" (for messages).
std::string supportedArchNames();

} // namespace mb::engine
