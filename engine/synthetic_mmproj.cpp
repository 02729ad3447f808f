// Writing synthetic mmproj files: the clip.* keys and the v.*/mm.* tensors of llava's converter, seeded.
#include "engine/synthetic_mmproj.h"

#include "engine/gguf.h"
#include "engine/seeded_random.h"
#include "kernels/cpu/quant.h"

#include <cmath>
#include <stdexcept>

namespace mb::engine {

using kernels::TensorType;

namespace {

// How a tensor is filled: uniform with this standard deviation around `mean`.
struct Plan {
    std::string name;
    std::vector<uint64_t> shape; // ggml order: the row length first
    double std = 0, mean = 0;
    bool matrix = false;         // written in the file's weight type (else F32)
};

std::vector<Plan> planTensors(const MmprojPreset& p) {
    const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    const double bias = 0.02;
    const auto lin = [&](const std::string& n, int64_t in, int64_t out) {
        return std::vector<Plan>{{n + ".weight", {u(in), u(out)}, 1.0 / std::sqrt(double(in)), 0, true},
                                 {n + ".bias", {u(out)}, bias, 0, false}};
    };
    const auto norm = [&](const std::string& n) {
        return std::vector<Plan>{{n + ".weight", {u(p.hidden)}, 0, 1, false}, {n + ".bias", {u(p.hidden)}, 0, 0, false}};
    };
    std::vector<Plan> out;
    const auto add = [&](std::vector<Plan> v) { out.insert(out.end(), v.begin(), v.end()); };
    add(lin("mm.0", p.hidden, p.lmWidth));
    add(lin("mm.2", p.lmWidth, p.lmWidth));
    const int64_t fanIn = 3 * p.patchSize * p.patchSize;
    out.push_back({"v.class_embd", {u(p.hidden)}, 1.0, 0, false});
    out.push_back({"v.patch_embd.weight", {u(p.patchSize), u(p.patchSize), 3, u(p.hidden)},
                   1.0 / std::sqrt(double(fanIn)), 0, true});
    out.push_back({"v.position_embd.weight", {u(p.hidden), u(p.imageTokens() + 1)}, 0.5, 0, true});
    add(norm("v.pre_ln"));
    for (int64_t b = 0; b < p.blocks; ++b) {
        const std::string blk = "v.blk." + std::to_string(b) + ".";
        for (const char* n : {"attn_q", "attn_k", "attn_v", "attn_out"}) add(lin(blk + n, p.hidden, p.hidden));
        add(norm(blk + "ln1"));
        add(lin(blk + "ffn_down", p.hidden, p.ffn)); // mlp.fc1: the converter's names are inverted
        add(lin(blk + "ffn_up", p.ffn, p.hidden));   // mlp.fc2
        add(norm(blk + "ln2"));
    }
    return out;
}

void writeKeys(GgufWriter& w, const MmprojPreset& p, TensorType type) {
    const auto u32 = [&](const std::string& k, int64_t v) { w.set(k, GgufValue::u32(static_cast<uint32_t>(v))); };
    w.set("general.architecture", GgufValue::string("clip"));
    w.set("clip.has_text_encoder", GgufValue::boolean(false));
    w.set("clip.has_vision_encoder", GgufValue::boolean(true));
    w.set("clip.has_llava_projector", GgufValue::boolean(true));
    u32("general.file_type", type == TensorType::F32 ? 0 : 1);
    w.set("general.name", GgufValue::string("synthetic-" + p.name));
    w.set("general.description", GgufValue::string("image encoder for LLaVA (ModeBench synthetic: random weights, real shapes)"));
    w.set("clip.projector_type", GgufValue::string("mlp"));
    u32("clip.vision.image_size", p.imageSize);
    u32("clip.vision.patch_size", p.patchSize);
    u32("clip.vision.embedding_length", p.hidden);
    u32("clip.vision.feed_forward_length", p.ffn);
    u32("clip.vision.projection_dim", p.projection);
    u32("clip.vision.attention.head_count", p.heads);
    w.set("clip.vision.attention.layer_norm_epsilon", GgufValue::f32(1e-5f));
    u32("clip.vision.block_count", p.blocks);
    w.set("clip.vision.image_mean", GgufValue::f32Array({0.48145466f, 0.4578275f, 0.40821073f}));
    w.set("clip.vision.image_std", GgufValue::f32Array({0.26862954f, 0.26130258f, 0.27577711f}));
    w.set("clip.use_gelu", GgufValue::boolean(p.useGelu));
}

} // namespace

const std::vector<MmprojPreset>& mmprojPresets() {
    static const std::vector<MmprojPreset> presets = {
        {"clip-vit-l-336", 336, 14, 1024, 4096, 16, 23, 768, 4096, false},
        {"tiny-clip", 64, 16, 128, 256, 4, 3, 64, 256, false},
    };
    return presets;
}

std::optional<MmprojPreset> findMmprojPreset(const std::string& name) {
    for (const auto& p : mmprojPresets())
        if (p.name == name) return p;
    return std::nullopt;
}

uint64_t mmprojParameterCount(const MmprojPreset& p) {
    uint64_t n = 0;
    for (const Plan& t : planTensors(p)) {
        uint64_t e = 1;
        for (uint64_t d : t.shape) e *= d;
        n += e;
    }
    return n;
}

void writeSyntheticMmproj(const MmprojPreset& p, TensorType type, uint64_t seed, const std::string& path) {
    if (type != TensorType::F32 && type != TensorType::F16)
        throw std::invalid_argument("a synthetic mmproj is written in f32 or f16 (llava's converter writes f16)");
    if (p.imageSize % p.patchSize != 0 || p.hidden % p.heads != 0)
        throw std::invalid_argument("mmproj preset " + p.name + ": the image must be whole patches, the width whole heads");
    GgufWriter w(path);
    writeKeys(w, p, type);
    w.set("modebench.synthetic.preset", GgufValue::string(p.name));
    w.set("modebench.synthetic.seed", GgufValue::u64(seed));
    for (const Plan& t : planTensors(p)) {
        const TensorType tt = t.matrix ? type : TensorType::F32;
        const auto cols = static_cast<int64_t>(t.shape[0]);
        uint64_t rows = 1;
        for (size_t i = 1; i < t.shape.size(); ++i) rows *= t.shape[i];
        const uint64_t tensorSeed = seed ^ fnv1a(t.name);
        w.addTensor(t.name, tt, t.shape, [t, tt, cols, rows, tensorSeed](const GgufWriter::Sink& sink) {
            std::vector<float> row(static_cast<size_t>(cols));
            std::vector<uint8_t> packed(kernels::rowBytes(tt, cols));
            uint64_t state = tensorSeed;
            const double a = std::sqrt(3.0) * t.std; // uniform on [-a, a] has std a / sqrt(3)
            for (uint64_t r = 0; r < rows; ++r) {
                for (float& x : row) x = static_cast<float>(t.mean) + (t.std > 0 ? uniformIn(state, a) : 0.0f);
                kernels::quantizeRow(tt, row.data(), packed.data(), cols);
                sink(packed.data(), packed.size());
            }
        });
    }
    w.finish();
}

} // namespace mb::engine
