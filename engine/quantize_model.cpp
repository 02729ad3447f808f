// Streaming requantisation of a GGUF model file.
#include "engine/quantize_model.h"

#include "engine/gguf.h"
#include "kernels/cpu/quant.h"

#include <stdexcept>
#include <vector>

namespace mb::engine {

using kernels::TensorType;

std::optional<QuantizeTarget> quantizeTargetFromName(const std::string& name) {
    if (name == "f16") return QuantizeTarget::F16;
    if (name == "q8_0") return QuantizeTarget::Q8_0;
    if (name == "q4_0") return QuantizeTarget::Q4_0;
    if (name == "mixed") return QuantizeTarget::Mixed;
    return std::nullopt;
}

namespace {

TensorType chooseType(QuantizeTarget target, const GgufTensorInfo& t) {
    if (t.shape.size() < 2) return t.type; // norms and other vectors stay as they are
    TensorType want = TensorType::F16;
    switch (target) {
    case QuantizeTarget::F16: want = TensorType::F16; break;
    case QuantizeTarget::Q8_0: want = TensorType::Q8_0; break;
    case QuantizeTarget::Q4_0: want = TensorType::Q4_0; break;
    case QuantizeTarget::Mixed: want = t.name == "token_embd.weight" ? TensorType::F16 : TensorType::Q8_0; break;
    }
    if (static_cast<int64_t>(t.rowLength()) % kernels::blockSize(want) != 0) want = TensorType::F16;
    return want;
}

// ggml's general.file_type for the dominant weight type.
uint32_t fileType(QuantizeTarget t) {
    switch (t) {
    case QuantizeTarget::F16: return 1;
    case QuantizeTarget::Q8_0: return 7;
    case QuantizeTarget::Q4_0: return 2;
    case QuantizeTarget::Mixed: return 7;
    }
    return 0;
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
    out.set("general.file_type", GgufValue::u32(fileType(target)));
    uint64_t total = 0;
    for (const auto& t : in.tensors()) total += t.elements();
    double done = 0;
    for (const auto& t : in.tensors()) {
        const TensorType to = chooseType(target, t);
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
