// Quantisation targets as llama.cpp's file types: which tensor of a model gets which type
// (the _S/_M "mixes" are per-tensor choices of the k-quants).
#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mb::engine {

enum class QuantizeTarget {
    F16, Mixed, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, Q3_K_M, Q4_K_S, Q4_K_M, Q5_K_M, Q6_K, IQ4_NL, IQ4_XS
};

struct QuantizeTargetInfo {
    QuantizeTarget target;
    std::string_view name;  // "q4_k_m", as llama-quantize names it (lower case)
    kernels::TensorType base; // the type of most matrices
    uint32_t fileType;      // general.file_type (llama.cpp's LLAMA_FTYPE_*)
};

// Every target, in the order above.
const std::vector<QuantizeTargetInfo>& quantizeTargets();
const QuantizeTargetInfo& targetInfo(QuantizeTarget t);
// The names of the table (also upper case); nullopt otherwise.
std::optional<QuantizeTarget> quantizeTargetFromName(std::string_view name);
// "f16, mixed, q8_0, ... or iq4_xs", for messages and --help.
std::string quantizeTargetNames();

// What the rules read of the model: layers, query and K/V heads (n_gqa = heads / kvHeads), and
// whether it has its own output matrix (else token_embd is also the output).
struct MixModel {
    int64_t layers = 1;
    int64_t heads = 1;
    int64_t kvHeads = 1;
    bool hasOutput = true;
};

// The type tensor `name` (GGUF name, row length `cols`, `dims` dimensions) gets. 1-D tensors keep
// `current`. mixed: Q8_0 except an F16 token_embd; f16: F16. The GGUF file types follow
// llama-quantize (without an importance matrix): the output matrix Q6_K (Q8_0 for q8_0); attn_v,
// ffn_down, attn_output and fused attn_qkv raised as the mix says (Q4_K_M: Q6_K for attn_v and
// ffn_down of the first and last eighth and every third layer between); rows a type cannot cover
// fall back (Q2_K/Q3_K/IQ4_XS -> IQ4_NL, Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0), then to F16.
kernels::TensorType chooseTensorType(QuantizeTarget target, const MixModel& model, const std::string& name,
                                     int64_t cols, size_t dims, kernels::TensorType current);

} // namespace mb::engine
