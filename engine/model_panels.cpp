// Packing a model's F32, F16, Q8_0 and Q4_0 matrices into panels once, within a share of the memory limit.
#include "engine/model_panels.h"

#include "engine/llama_model.h"
#include "engine/memory_limit.h"
#include "kernels/cpu/vec.h"

namespace mb::engine {

uint64_t panelBytesOf(const kernels::WeightMatrix& w) {
    using kernels::TensorType;
    const kernels::VecKernels& k = kernels::vecKernels();
    if (w.type == TensorType::F32 && k.gemmPanelsF32) return kernels::panelsF32Bytes(w.rows, w.cols);
    if (w.type == TensorType::F16 && k.gemmPanelsF16) return kernels::panelsF16Bytes(w.rows, w.cols);
    if (w.type == TensorType::Q8_0 && k.gemmPanelsQ8_0)
        return kernels::panelsQ8_0Bytes(w.rows, w.cols / kernels::kQ8_0BlockSize);
    if (w.type == TensorType::Q4_0 && k.gemmPanelsQ4_0)
        return kernels::panelsQ4_0Bytes(w.rows, w.cols / kernels::kQ4_0BlockSize);
    return 0;
}

std::unique_ptr<ModelPanels> makeModelPanels(const LlamaModel& model) {
    using kernels::TensorType;
    uint64_t bytes = 0;
    for (const LayerWeights& l : model.layers())
        for (auto proj : kProjections) bytes += panelBytesOf(l.*proj);
    bytes += panelBytesOf(model.output());
    const uint64_t limit = memoryLimitBytes();
    if (bytes == 0 || limit == 0 || bytes > limit / 4) return nullptr;

    // One allocation for all (huge pages: the layer matrices alone are under 2 MiB each).
    // Every matrix's panels are a multiple of 64 bytes, so each starts 64-byte aligned.
    auto p = std::make_unique<ModelPanels>();
    p->bytes = bytes;
    p->memory = kernels::allocatePanelMemory(bytes);
    auto* next = reinterpret_cast<uint8_t*>(p->memory.get());
    auto pack = [&](const kernels::WeightMatrix& w) -> const void* {
        const uint64_t b = panelBytesOf(w);
        if (b == 0) return nullptr;
        uint8_t* out = next;
        if (w.type == TensorType::F32)
            kernels::packPanelsF32(static_cast<const float*>(w.data), w.rows, w.cols,
                                   reinterpret_cast<float*>(out));
        else if (w.type == TensorType::F16)
            kernels::packPanelsF16(static_cast<const uint16_t*>(w.data), w.rows, w.cols,
                                   reinterpret_cast<uint16_t*>(out));
        else if (w.type == TensorType::Q8_0)
            kernels::packPanelsQ8_0(static_cast<const kernels::BlockQ8_0*>(w.data), w.rows,
                                    w.cols / kernels::kQ8_0BlockSize, out);
        else
            kernels::packPanelsQ4_0(static_cast<const kernels::BlockQ4_0*>(w.data), w.rows,
                                    w.cols / kernels::kQ4_0BlockSize, out);
        next += b;
        return out;
    };
    for (const LayerWeights& l : model.layers()) {
        std::array<const void*, 7>& packed = p->layers.emplace_back();
        for (size_t i = 0; i < 7; ++i) packed[i] = pack(l.*kProjections[i]);
    }
    p->output = pack(model.output());
    return p;
}

} // namespace mb::engine
