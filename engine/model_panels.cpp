// Packing a model's F32 matrices into panels once, and the memory limit that bounds it.
#include "engine/model_panels.h"

#include "engine/llama_model.h"
#include "kernels/cpu/vec.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

namespace mb::engine {

uint64_t memoryLimitBytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
    uint64_t limit = pages > 0 && pageSize > 0
                         ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(pageSize)
                         : 0;
    std::ifstream in("/sys/fs/cgroup/memory.max"); // "max" or a byte count
    std::string v;
    if (in >> v && !v.empty() &&
        std::all_of(v.begin(), v.end(), [](char ch) { return ch >= '0' && ch <= '9'; })) {
        try {
            const uint64_t cgroup = std::stoull(v);
            if (cgroup > 0 && (limit == 0 || cgroup < limit)) limit = cgroup;
        } catch (const std::exception&) { // out of range: no limit worth reading
        }
    }
    return limit;
}

std::unique_ptr<ModelPanels> makeModelPanels(const LlamaModel& model) {
    if (!kernels::vecKernels().gemmPanelsF32) return nullptr;
    const auto isF32 = [](const kernels::WeightMatrix& w) {
        return w.type == kernels::TensorType::F32;
    };
    uint64_t bytes = 0;
    for (const LayerWeights& l : model.layers())
        for (const kernels::WeightMatrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down})
            if (isF32(*w)) bytes += w->bytes();
    if (isF32(model.output())) bytes += model.output().bytes();
    const uint64_t limit = memoryLimitBytes();
    if (bytes == 0 || limit == 0 || bytes > limit / 4) return nullptr;

    // One allocation for all (huge pages: the layer matrices alone are under 2 MiB each).
    auto p = std::make_unique<ModelPanels>();
    auto panelBytes = [](const kernels::WeightMatrix& w) {
        return kernels::panelsF32Bytes(w.rows, w.cols);
    };
    for (const LayerWeights& l : model.layers())
        for (const kernels::WeightMatrix* w : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down})
            if (isF32(*w)) p->bytes += panelBytes(*w);
    if (isF32(model.output())) p->bytes += panelBytes(model.output());
    p->memory = kernels::allocatePanelMemory(p->bytes);
    float* next = p->memory.get();
    auto pack = [&](const kernels::WeightMatrix& w) -> const float* {
        if (!isF32(w)) return nullptr;
        float* out = next;
        kernels::packPanelsF32(static_cast<const float*>(w.data), w.rows, w.cols, out);
        next += panelBytes(w) /
                sizeof(float); // a multiple of 16 floats: the next stays 64-byte aligned
        return out;
    };
    for (const LayerWeights& l : model.layers())
        p->layers.push_back({pack(l.wq), pack(l.wk), pack(l.wv), pack(l.wo), pack(l.gate),
                             pack(l.up), pack(l.down)});
    p->output = pack(model.output());
    return p;
}

} // namespace mb::engine
