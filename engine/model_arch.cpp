// The architecture table: one row per general.architecture, each with the tensors of its layers.
#include "engine/model_arch.h"

#include <iterator>

namespace mb::engine {

namespace {

using R = LayerRole;

// llama: separate Q/K/V; llama.cpp accepts optional Q/K/V biases on llama files too.
constexpr ArchTensor kLlama[] = {
    {R::AttnNorm, "attn_norm.weight", true}, {R::Q, "attn_q.weight", true},
    {R::K, "attn_k.weight", true},           {R::V, "attn_v.weight", true},
    {R::QBias, "attn_q.bias", false},        {R::KBias, "attn_k.bias", false},
    {R::VBias, "attn_v.bias", false},        {R::O, "attn_output.weight", true},
    {R::FfnNorm, "ffn_norm.weight", true},   {R::Gate, "ffn_gate.weight", true},
    {R::Up, "ffn_up.weight", true},          {R::Down, "ffn_down.weight", true},
};

constexpr ArchTensor kQwen2[] = {
    {R::AttnNorm, "attn_norm.weight", true}, {R::Q, "attn_q.weight", true},
    {R::K, "attn_k.weight", true},           {R::V, "attn_v.weight", true},
    {R::QBias, "attn_q.bias", true},         {R::KBias, "attn_k.bias", true},
    {R::VBias, "attn_v.bias", true},         {R::O, "attn_output.weight", true},
    {R::FfnNorm, "ffn_norm.weight", true},   {R::Gate, "ffn_gate.weight", true},
    {R::Up, "ffn_up.weight", true},          {R::Down, "ffn_down.weight", true},
};

// qwen3: per-head RMSNorm on Q and K (before RoPE), no biases.
constexpr ArchTensor kQwen3[] = {
    {R::AttnNorm, "attn_norm.weight", true}, {R::Q, "attn_q.weight", true},
    {R::K, "attn_k.weight", true},           {R::V, "attn_v.weight", true},
    {R::QNorm, "attn_q_norm.weight", true},  {R::KNorm, "attn_k_norm.weight", true},
    {R::O, "attn_output.weight", true},      {R::FfnNorm, "ffn_norm.weight", true},
    {R::Gate, "ffn_gate.weight", true},      {R::Up, "ffn_up.weight", true},
    {R::Down, "ffn_down.weight", true},
};

// gemma2: a norm after attention and after the FFN, each before the residual add.
constexpr ArchTensor kGemma2[] = {
    {R::AttnNorm, "attn_norm.weight", true},
    {R::Q, "attn_q.weight", true},
    {R::K, "attn_k.weight", true},
    {R::V, "attn_v.weight", true},
    {R::O, "attn_output.weight", true},
    {R::PostAttnNorm, "post_attention_norm.weight", true},
    {R::FfnNorm, "ffn_norm.weight", true},
    {R::Gate, "ffn_gate.weight", true},
    {R::Up, "ffn_up.weight", true},
    {R::Down, "ffn_down.weight", true},
    {R::PostFfnNorm, "post_ffw_norm.weight", true},
};

// phi3: fused attn_qkv and a fused ffn_up holding gate then up.
constexpr ArchTensor kPhi3[] = {
    {R::AttnNorm, "attn_norm.weight", true}, {R::Qkv, "attn_qkv.weight", true},
    {R::O, "attn_output.weight", true},      {R::FfnNorm, "ffn_norm.weight", true},
    {R::GateUp, "ffn_up.weight", true},      {R::Down, "ffn_down.weight", true},
};

// Gemma 2's published soft-caps (llama.cpp's defaults when the keys are absent).
constexpr ArchTraits kArchs[] = {
    {ModelArch::Llama, "llama", RopeKind::Norm, FfnActivation::Silu, false, SlidingLayers::None, 0, 0, kLlama},
    {ModelArch::Qwen2, "qwen2", RopeKind::Neox, FfnActivation::Silu, false, SlidingLayers::None, 0, 0, kQwen2},
    {ModelArch::Qwen3, "qwen3", RopeKind::Neox, FfnActivation::Silu, false, SlidingLayers::None, 0, 0, kQwen3},
    {ModelArch::Gemma2, "gemma2", RopeKind::Neox, FfnActivation::GeluTanh, true, SlidingLayers::Even, 50, 30,
     kGemma2},
    {ModelArch::Phi3, "phi3", RopeKind::Neox, FfnActivation::Silu, false, SlidingLayers::All, 0, 0, kPhi3},
};

} // namespace

const ArchTraits& archTraits(ModelArch arch) {
    for (const ArchTraits& a : kArchs)
        if (a.arch == arch) return a;
    return kArchs[0];
}

const ArchTraits* findArch(std::string_view name) {
    for (const ArchTraits& a : kArchs)
        if (name == a.name) return &a;
    return nullptr;
}

std::string supportedArchNames() {
    std::string s;
    for (const ArchTraits& a : kArchs) s += (s.empty() ? "" : ", ") + std::string(a.name);
    return s;
}

} // namespace mb::engine
