// Packing a model's F32, F16, Q8_0, Q4_0, Q4_K and Q6_K matrices into panels once, within a share of the memory limit.
#include "engine/model_panels.h"

#include "engine/llama_model.h"
#include "engine/memory_limit.h"
#include "kernels/cpu/vec.h"

namespace mb::engine {

uint64_t panelBytesOf(const kernels::WeightMatrix& w) {
    return kernels::panelBytesFor(kernels::vecKernels(), w.type, w.rows, w.cols);
}

std::unique_ptr<ModelPanels> makeModelPanels(const LlamaModel& model) {
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
        kernels::packPanels(w.type, w.data, w.rows, w.cols, out);
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
