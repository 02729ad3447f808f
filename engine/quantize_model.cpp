// Streaming requantisation of a GGUF model file.
#include "engine/quantize_model.h"

#include "engine/gguf.h"
#include "kernels/cpu/quant.h"

#include <stdexcept>
#include <vector>

namespace mb::engine {

using kernels::TensorType;

namespace {

// The shape facts the mix rules read, from the file's ARCH.* keys (absent keys: one layer, MHA).
MixModel mixModelOf(const GgufFile& in) {
    MixModel m;
    const GgufValue* arch = in.find("general.architecture");
    const std::string prefix = arch ? arch->asString() + "." : std::string("llama.");
    auto integer = [&](const std::string& key, int64_t fallback) {
        const GgufValue* v = in.find(prefix + key);
        return v ? v->asInt() : fallback;
    };
    m.layers = integer("block_count", 1);
    m.heads = integer("attention.head_count", 1);
    m.kvHeads = integer("attention.head_count_kv", m.heads);
    m.hasOutput = in.findTensor("output.weight") != nullptr;
    return m;
}

} // namespace

void quantizeModel(const std::string& inPath, const std::string& outPath, QuantizeTarget target,
                   const ProgressFn& progress) {
    const GgufFile in = GgufFile::open(inPath);
    GgufWriter out(outPath, 3, in.alignment());
    for (const auto& [key, value] : in.metadata()) {
        if (key == "general.alignment") continue; // written by the writer from its constructor
        out.set(key, value);
    }
    out.set("general.file_type", GgufValue::u32(targetInfo(target).fileType));
    const MixModel mix = mixModelOf(in);
    uint64_t total = 0;
    for (const auto& t : in.tensors()) total += t.elements();
    double done = 0;
    for (const auto& t : in.tensors()) {
        const TensorType to =
            chooseTensorType(target, mix, t.name, static_cast<int64_t>(t.rowLength()), t.shape.size(), t.type);
        out.addTensor(t.name, to, t.shape, [&, to](const GgufWriter::Sink& sink) {
            const auto cols = static_cast<int64_t>(t.rowLength());
            const size_t inRow = kernels::rowBytes(t.type, cols);
            std::vector<float> row(static_cast<size_t>(cols));
            std::vector<uint8_t> packed(kernels::rowBytes(to, cols));
            for (uint64_t r = 0; r < t.rows(); ++r) {
                const uint8_t* src = t.data + r * inRow;
                if (to == t.type) {
                    sink(src, inRow);
                } else {
                    kernels::dequantizeRow(t.type, src, row.data(), cols);
                    kernels::quantizeRow(to, row.data(), packed.data(), cols);
                    sink(packed.data(), packed.size());
                }
                done += static_cast<double>(cols);
                if (progress && (r % 256 == 0 || r + 1 == t.rows()) && !progress(done / static_cast<double>(total)))
                    throw std::runtime_error("cancelled");
            }
        });
    }
    out.finish();
}

} // namespace mb::engine
