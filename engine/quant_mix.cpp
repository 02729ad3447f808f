// llama-quantize's per-tensor type rules for the file types ModeBench writes (the rules are
// llama.cpp's published behaviour; see docs/GGUF.md, "Quantisation targets").
#include "engine/quant_mix.h"

#include <cctype>
#include <cstdio>

namespace mb::engine {

using kernels::TensorType;

const std::vector<QuantizeTargetInfo>& quantizeTargets() {
    static const std::vector<QuantizeTargetInfo> table = {
        {QuantizeTarget::F16, "f16", TensorType::F16, 1},        {QuantizeTarget::Mixed, "mixed", TensorType::Q8_0, 7},
        {QuantizeTarget::Q8_0, "q8_0", TensorType::Q8_0, 7},     {QuantizeTarget::Q4_0, "q4_0", TensorType::Q4_0, 2},
        {QuantizeTarget::Q4_1, "q4_1", TensorType::Q4_1, 3},     {QuantizeTarget::Q5_0, "q5_0", TensorType::Q5_0, 8},
        {QuantizeTarget::Q5_1, "q5_1", TensorType::Q5_1, 9},     {QuantizeTarget::Q2_K, "q2_k", TensorType::Q2_K, 10},
        {QuantizeTarget::Q3_K_M, "q3_k_m", TensorType::Q3_K, 12}, {QuantizeTarget::Q4_K_S, "q4_k_s", TensorType::Q4_K, 14},
        {QuantizeTarget::Q4_K_M, "q4_k_m", TensorType::Q4_K, 15}, {QuantizeTarget::Q5_K_M, "q5_k_m", TensorType::Q5_K, 17},
        {QuantizeTarget::Q6_K, "q6_k", TensorType::Q6_K, 18},     {QuantizeTarget::IQ4_NL, "iq4_nl", TensorType::IQ4_NL, 25},
        {QuantizeTarget::IQ4_XS, "iq4_xs", TensorType::IQ4_XS, 30},
    };
    return table;
}

const QuantizeTargetInfo& targetInfo(QuantizeTarget t) { return quantizeTargets()[static_cast<size_t>(t)]; }

std::optional<QuantizeTarget> quantizeTargetFromName(std::string_view name) {
    std::string lower(name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& t : quantizeTargets())
        if (t.name == lower) return t.target;
    return std::nullopt;
}

std::string quantizeTargetNames() {
    std::string out;
    const auto& all = quantizeTargets();
    for (size_t i = 0; i < all.size(); ++i)
        out += std::string(i == 0 ? "" : i + 1 == all.size() ? " or " : ", ") + std::string(all[i].name);
    return out;
}

namespace {

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// "blk.N." -> N, else -1.
int64_t layerOf(const std::string& name) {
    long long n = -1;
    return std::sscanf(name.c_str(), "blk.%lld.", &n) == 1 ? n : -1;
}

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third between.
bool moreBits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// The type a matrix gets before the row-length fallback.
TensorType ruleType(QuantizeTarget target, const MixModel& m, const std::string& name) {
    using Q = QuantizeTarget;
    const TensorType base = targetInfo(target).base;
    const int64_t i = layerOf(name), n = m.layers;
    const int64_t gqa = m.kvHeads > 0 ? m.heads / m.kvHeads : 1;
    if (name == "output.weight" || (!m.hasOutput && name == "token_embd.weight"))
        return base == TensorType::Q8_0 ? TensorType::Q8_0 : TensorType::Q6_K;
    if (name == "token_embd.weight") return base;
    if (contains(name, "attn_v.weight")) {
        if (target == Q::Q2_K) return gqa >= 4 ? TensorType::Q4_K : TensorType::Q3_K;
        if (target == Q::Q3_K_M) return i < 2 ? TensorType::Q5_K : TensorType::Q4_K;
        if ((target == Q::IQ4_NL || target == Q::IQ4_XS) && gqa >= 4) return TensorType::Q5_K;
        if ((target == Q::Q4_K_M || target == Q::Q5_K_M) && moreBits(i, n)) return TensorType::Q6_K;
        if (target == Q::Q4_K_S && i < 4) return TensorType::Q5_K;
        return base;
    }
    if (contains(name, "ffn_down")) {
        if (target == Q::Q2_K) return TensorType::Q3_K;
        if (target == Q::Q3_K_M) return i < n / 16 ? TensorType::Q5_K : TensorType::Q4_K;
        if (target == Q::Q4_K_M && moreBits(i, n)) return TensorType::Q6_K;
        if ((target == Q::IQ4_NL || target == Q::IQ4_XS) && i < n / 8) return TensorType::Q5_K;
        if (target == Q::Q5_K_M && moreBits(i, n)) return TensorType::Q6_K;
        if (target == Q::Q4_K_S && i < n / 8) return TensorType::Q5_K;
        return base;
    }
    if (contains(name, "attn_output.weight")) {
        if (target == Q::Q2_K) return TensorType::Q3_K;
        if (target == Q::Q3_K_M) return TensorType::Q4_K;
        return base;
    }
    if (contains(name, "attn_qkv.weight")) {
        if (target == Q::Q3_K_M) return TensorType::Q4_K;
        if (target == Q::Q4_K_M) return TensorType::Q5_K;
        if (target == Q::Q5_K_M) return TensorType::Q6_K;
    }
    return base;
}

// llama.cpp's fallback for rows the chosen type's blocks cannot cover.
TensorType fallback(TensorType t) {
    switch (t) {
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::IQ4_XS: return TensorType::IQ4_NL;
    case TensorType::Q4_K: return TensorType::Q5_0;
    case TensorType::Q5_K: return TensorType::Q5_1;
    case TensorType::Q6_K: return TensorType::Q8_0;
    default: return TensorType::F16; // the 32-element formats: nothing smaller covers the row
    }
}

} // namespace

TensorType chooseTensorType(QuantizeTarget target, const MixModel& model, const std::string& name, int64_t cols,
                            size_t dims, TensorType current) {
    if (dims < 2) return current; // norms and other vectors stay as they are
    TensorType want = TensorType::F16;
    if (target == QuantizeTarget::Mixed) want = name == "token_embd.weight" ? TensorType::F16 : TensorType::Q8_0;
    else if (target != QuantizeTarget::F16) want = ruleType(target, model, name);
    if (cols % kernels::blockSize(want) != 0) want = fallback(want);
    if (cols % kernels::blockSize(want) != 0) want = TensorType::F16;
    return want;
}

} // namespace mb::engine
