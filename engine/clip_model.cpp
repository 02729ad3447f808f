// Loading an mmproj GGUF into a ClipModel: the keys, the tensors and their shapes, checked.
#include "engine/clip_model.h"

#include "engine/clip_weights.h"
#include "engine/gguf.h"
#include "kernels/tensor_type.h"

#include <cstring>
#include <optional>

namespace mb::engine {
namespace {

// Reads keys and tensors of one file, every error prefixed with "mmproj PATH: ".
class Reader {
public:
    Reader(const GgufFile& f, std::string path) : m_f(f), m_path(std::move(path)) {}

    [[noreturn]] void fail(const std::string& why) const { throw ClipError("mmproj " + m_path + ": " + why); }

    const GgufValue& key(const std::string& k) const {
        const GgufValue* v = m_f.find(k);
        if (!v) fail("missing metadata key '" + k + "'");
        return *v;
    }
    int u32(const std::string& k) const {
        try {
            const uint64_t v = key(k).asUInt();
            if (v == 0 || v > (1u << 20)) fail("key '" + k + "' = " + std::to_string(v) + " is out of range");
            return static_cast<int>(v);
        } catch (const GgufError& e) { fail("key '" + k + "': " + e.what()); }
    }
    bool boolean(const std::string& k, std::optional<bool> dflt = std::nullopt) const {
        if (dflt && !m_f.find(k)) return *dflt;
        try { return key(k).asBool(); } catch (const GgufError& e) { fail("key '" + k + "': " + e.what()); }
    }
    std::string string(const std::string& k, const std::string& dflt) const {
        if (!m_f.find(k)) return dflt;
        try { return key(k).asString(); } catch (const GgufError& e) { fail("key '" + k + "': " + e.what()); }
    }
    float f32(const std::string& k) const {
        try { return static_cast<float>(key(k).asFloat()); } catch (const GgufError& e) { fail("key '" + k + "': " + e.what()); }
    }
    std::array<float, 3> rgb(const std::string& k) const {
        try {
            const auto& a = key(k).asArray();
            if (a.size() != 3) fail("key '" + k + "' has " + std::to_string(a.size()) + " values, expected 3 (RGB)");
            return {static_cast<float>(a[0].asFloat()), static_cast<float>(a[1].asFloat()),
                    static_cast<float>(a[2].asFloat())};
        } catch (const GgufError& e) { fail("key '" + k + "': " + e.what()); }
    }

    bool hasTensor(const std::string& name) const { return m_f.findTensor(name) != nullptr; }

    // A tensor of exactly ggml shape `ne`, as F32 values in file order.
    std::vector<float> tensor(const std::string& name, const std::vector<uint64_t>& ne) const {
        const GgufTensorInfo* t = m_f.findTensor(name);
        if (!t) fail("missing tensor '" + name + "'");
        if (t->shape != ne) fail("tensor '" + name + "' has shape " + shapeText(t->shape) + ", expected " + shapeText(ne));
        if (t->type != kernels::TensorType::F32 && t->type != kernels::TensorType::F16)
            fail("tensor '" + name + "' has type " + std::string(kernels::tensorTypeName(t->type)) +
                 "; only f32 and f16 mmproj tensors are supported");
        std::vector<float> out(t->elements());
        kernels::traits(t->type).toFloat(t->data, out.data(), static_cast<int64_t>(out.size()));
        return out;
    }
    std::vector<float> optionalTensor(const std::string& name, const std::vector<uint64_t>& ne) const {
        return hasTensor(name) ? tensor(name, ne) : std::vector<float>{};
    }
    ClipLinear linear(const std::string& prefix, int64_t in, int64_t out) const {
        ClipLinear l;
        l.in = in;
        l.out = out;
        l.w = tensor(prefix + ".weight", {static_cast<uint64_t>(in), static_cast<uint64_t>(out)});
        l.b = tensor(prefix + ".bias", {static_cast<uint64_t>(out)});
        return l;
    }
    ClipNorm norm(const std::string& prefix, int64_t n) const {
        return {tensor(prefix + ".weight", {static_cast<uint64_t>(n)}), tensor(prefix + ".bias", {static_cast<uint64_t>(n)})};
    }
    // Length of a 1-D tensor (to learn a width the keys do not state).
    int64_t length(const std::string& name) const {
        const GgufTensorInfo* t = m_f.findTensor(name);
        if (!t) fail("missing tensor '" + name + "'");
        if (t->shape.size() != 1) fail("tensor '" + name + "' has shape " + shapeText(t->shape) + ", expected one dimension");
        return static_cast<int64_t>(t->shape[0]);
    }

    static std::string shapeText(const std::vector<uint64_t>& ne) {
        std::string s = "[";
        for (size_t i = 0; i < ne.size(); ++i) {
            if (i) s += ',';
            s += std::to_string(ne[i]);
        }
        return s + "] (ggml ne)";
    }

private:
    const GgufFile& m_f;
    std::string m_path;
};

// The file must be a vision-only llava mmproj with the plain MLP projector.
void checkKind(const Reader& r) {
    const std::string arch = r.key("general.architecture").asString();
    if (arch != "clip") r.fail("general.architecture is '" + arch + "', expected 'clip' (an mmproj file)");
    if (r.boolean("clip.has_text_encoder")) r.fail("has a text encoder; only vision-only mmproj files are supported");
    if (!r.boolean("clip.has_vision_encoder")) r.fail("has no vision encoder (clip.has_vision_encoder is false)");
    if (!r.boolean("clip.has_llava_projector", false)) r.fail("has no llava projector (clip.has_llava_projector is not true)");
    std::string proj = r.string("clip.projector_type", "mlp");
    if (proj == "mlp" && r.hasTensor("mm.3.weight")) proj = "mlp_norm"; // clip.cpp's rule
    if (proj != "mlp") r.fail("projector type '" + proj + "' is not supported (only llava's mlp)");
    const std::string merge = r.string("clip.vision.mm_patch_merge_type", "flat");
    if (merge != "flat") r.fail("mm_patch_merge_type '" + merge + "' is not supported (only llava-1.5's flat)");
}

ClipHParams readHParams(const Reader& r) {
    ClipHParams hp;
    hp.imageSize = r.u32("clip.vision.image_size");
    hp.patchSize = r.u32("clip.vision.patch_size");
    hp.hidden = r.u32("clip.vision.embedding_length");
    hp.ffn = r.u32("clip.vision.feed_forward_length");
    (void)r.u32("clip.vision.projection_dim"); // required by clip.cpp's loader, unused by llava
    hp.heads = r.u32("clip.vision.attention.head_count");
    hp.eps = r.f32("clip.vision.attention.layer_norm_epsilon");
    hp.blockCount = r.u32("clip.vision.block_count");
    // llama.cpp c392e509 loops `for (il = 0; il < n_layer - 1; il++)`: the last stored block
    // is loaded but never run. The goldens follow it (docs/ARCHITECTURE.md, "Image input").
    hp.blocksRun = hp.blockCount - 1;
    hp.useGelu = r.boolean("clip.use_gelu");
    hp.useSilu = r.boolean("clip.use_silu", false);
    hp.mean = r.rgb("clip.vision.image_mean");
    hp.std = r.rgb("clip.vision.image_std");
    if (hp.imageSize % hp.patchSize != 0)
        r.fail("image_size " + std::to_string(hp.imageSize) + " is not a multiple of patch_size " + std::to_string(hp.patchSize));
    if (hp.hidden % hp.heads != 0)
        r.fail("embedding_length " + std::to_string(hp.hidden) + " is not a multiple of head_count " + std::to_string(hp.heads));
    for (int c = 0; c < 3; ++c)
        if (!(hp.std[c] > 0.0f)) r.fail("clip.vision.image_std has a non-positive value");
    return hp;
}

void readBlocks(const Reader& r, const ClipHParams& hp, ClipWeights& w) {
    const int64_t h = hp.hidden, f = hp.ffn;
    w.blocks.resize(static_cast<size_t>(hp.blockCount));
    for (int i = 0; i < hp.blockCount; ++i) {
        const std::string p = "v.blk." + std::to_string(i) + ".";
        ClipBlock& b = w.blocks[static_cast<size_t>(i)];
        b.ln1 = r.norm(p + "ln1", h);
        b.q = r.linear(p + "attn_q", h, h);
        b.k = r.linear(p + "attn_k", h, h);
        b.v = r.linear(p + "attn_v", h, h);
        b.o = r.linear(p + "attn_out", h, h);
        b.ln2 = r.norm(p + "ln2", h);
        b.fc1 = r.linear(p + "ffn_down", h, f);
        b.fc2 = r.linear(p + "ffn_up", f, h);
    }
}

} // namespace

ClipModel::ClipModel() : m_w(std::make_unique<ClipWeights>()) {}
ClipModel::ClipModel(ClipModel&&) noexcept = default;
ClipModel& ClipModel::operator=(ClipModel&&) noexcept = default;
ClipModel::~ClipModel() = default;

ClipModel ClipModel::load(const std::string& path) {
    GgufFile file = [&] {
        try { return GgufFile::open(path); } catch (const GgufError& e) { throw ClipError(std::string("mmproj: ") + e.what()); }
    }();
    const Reader r(file, path);
    checkKind(r);
    ClipModel m;
    m.m_path = path;
    m.m_hp = readHParams(r);
    ClipHParams& hp = m.m_hp;
    ClipWeights& w = *m.m_w;
    const auto P = static_cast<uint64_t>(hp.patchSize), H = static_cast<uint64_t>(hp.hidden);
    w.patch.in = static_cast<int64_t>(3 * P * P);
    w.patch.out = hp.hidden;
    w.patch.w = r.tensor("v.patch_embd.weight", {P, P, 3, H}); // numpy (H,3,P,P): row o = [c][kh][kw]
    w.patch.b = r.optionalTensor("v.patch_embd.bias", {H});
    w.classEmbd = r.tensor("v.class_embd", {H});
    w.posEmbd = r.tensor("v.position_embd.weight", {H, static_cast<uint64_t>(hp.patches() + 1)});
    w.preLn = r.norm("v.pre_ln", hp.hidden);
    if (r.hasTensor("v.post_ln.weight")) w.postLn = r.norm("v.post_ln", hp.hidden);
    readBlocks(r, hp, w);
    hp.projectorHidden = static_cast<int>(r.length("mm.0.bias"));
    hp.projectionWidth = static_cast<int>(r.length("mm.2.bias"));
    w.mm0 = r.linear("mm.0", hp.hidden, hp.projectorHidden);
    w.mm2 = r.linear("mm.2", hp.projectorHidden, hp.projectionWidth);
    return m;
}

ClipPreprocessParams ClipModel::preprocessParams() const {
    return {m_hp.imageSize, m_hp.mean, m_hp.std};
}

void ClipModel::checkEmbeddingWidth(int64_t nEmbd) const {
    if (nEmbd != m_hp.projectionWidth)
        throw ClipError("mmproj " + m_path + " projects to " + std::to_string(m_hp.projectionWidth) +
                        " features but the model's embedding width is " + std::to_string(nEmbd));
}

} // namespace mb::engine
