// A model's F32, F16, Q8_0, Q4_0, Q4_K and Q6_K weight matrices as 16-row panels for the CPU's outer-product products, made once.
#pragma once

#include "kernels/cpu/matmul.h"
#include "kernels/cpu/panels.h"

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace mb::engine {

class LlamaModel;

// Panels of every F32, F16, Q8_0, Q4_0, Q4_K and Q6_K matrix the forward pass multiplies
// (kernels/cpu/panels.h, panels_k.h), for the kernel table's gemmPanels*. Null pointers mark
// matrices in other forms (BF16, the other quantisations) or without a panel kernel, used in place.
struct ModelPanels {
    std::vector<std::array<const void*, 7>> layers; // per layer, in kProjections order
    const void* output = nullptr; // the output matrix (tied: apart from the embedding rows)
    uint64_t bytes = 0;
    kernels::PanelMemory
        memory; // every matrix's panels, one after another (what the pointers point into)
};

// The panels of `model`, or null when there is nothing to gain or no room: the kernel table
// has no panel kernel for the model's matrices (AVX-512 has them for F32, F16, Q8_0, Q4_0, Q4_K
// and Q6_K, AVX2 for Q8_0 and Q4_0, portable none), or the panels would exceed a quarter of
// memoryLimitBytes() (engine/memory_limit.h). Depends only on the model, the CPU and the
// machine (never on what else is loaded), so a model's outputs are the same in every run on
// one machine. Throws std::bad_alloc when the copy does not fit after all.
// Use LlamaModel::cpuPanels(), which makes them once per model.
std::unique_ptr<ModelPanels> makeModelPanels(const LlamaModel& model);

// Bytes of w's panels for the chosen kernel table (kernels::panelBytesFor); 0 where the table has
// no panel kernel for w's form (so makeModelPanels leaves it in place).
uint64_t panelBytesOf(const kernels::WeightMatrix& w);

} // namespace mb::engine
