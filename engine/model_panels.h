// A model's F32 weight matrices as 16-row panels for the CPU's outer-product products, made once
// per model.
#pragma once

#include "kernels/cpu/panels.h"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace mb::engine {

class LlamaModel;

// Panels of every F32 matrix the forward pass multiplies (kernels/cpu/panels.h). Null
// pointers mark matrices in other forms (F16, quantised), which are used in place.
struct ModelPanels {
    std::vector<std::array<const float*, 7>> layers; // per layer: wq, wk, wv, wo, gate, up, down
    const float* output = nullptr; // the output matrix (tied: apart from the embedding rows)
    uint64_t bytes = 0;
    kernels::PanelMemory
        memory; // every matrix's panels, one after another (what the pointers point into)
};

// The panels of `model`, or null when there is nothing to gain or no room: the kernel table
// has no gemmPanelsF32 (only AVX-512 has it), the model has no F32 matrix, or its F32
// matrices exceed a quarter of memoryLimitBytes(). Depends only on the model, the CPU and
// the machine (never on what else is loaded), so a model's outputs are the same in every
// run on one machine. Throws std::bad_alloc when the copy does not fit after all.
// Use LlamaModel::cpuPanels(), which makes them once per model.
std::unique_ptr<ModelPanels> makeModelPanels(const LlamaModel& model);

// Memory this process may use: physical memory, or the cgroup (v2) memory.max when lower.
uint64_t memoryLimitBytes();

} // namespace mb::engine
