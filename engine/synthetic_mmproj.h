// Synthetic llava "mmproj" files: seeded random CLIP ViT encoders + MLP projectors with real shapes and keys.
#pragma once

#include "kernels/tensor_type.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mb::engine {

// The shapes of a CLIP vision encoder as llava's converter writes it (../shared/data/mm/README.md §2).
struct MmprojPreset {
    std::string name;
    int64_t imageSize = 0;   // clip.vision.image_size, pixels a side
    int64_t patchSize = 0;   // clip.vision.patch_size
    int64_t hidden = 0;      // clip.vision.embedding_length
    int64_t ffn = 0;         // clip.vision.feed_forward_length
    int64_t heads = 0;       // clip.vision.attention.head_count
    int64_t blocks = 0;      // clip.vision.block_count (stored; llama.cpp runs blocks − 1)
    int64_t projection = 0;  // clip.vision.projection_dim (CLIP's joint width; unused by llava)
    int64_t lmWidth = 0;     // the projector's output: the language model's embedding width
    bool useGelu = false;    // clip.use_gelu: tanh-GELU; false: quick-GELU (OpenAI CLIP)
    int64_t imageTokens() const { return (imageSize / patchSize) * (imageSize / patchSize); }
};

// "clip-vit-l-336" (llava-1.5's encoder: 336 px, patch 14, 1024 wide, 23 stored blocks, 576
// image tokens, projecting to 4096) and "tiny-clip" (the test data's shapes: 64 px, patch 16,
// 128 wide, 3 blocks, 16 tokens, projecting to 256).
const std::vector<MmprojPreset>& mmprojPresets();
std::optional<MmprojPreset> findMmprojPreset(const std::string& name);
uint64_t mmprojParameterCount(const MmprojPreset& p);

// Writes the mmproj GGUF: every clip.* key, v.* and mm.* tensors. `type` F16 is the
// converter's layout (the patch kernel, position embeddings and every 2-D weight in F16;
// biases, norms and the class embedding F32); F32 writes everything in F32. Weights are
// uniform with std 1/sqrt(fan_in), biases std 0.02, norms 1 and 0, the class embedding std 1
// and positions std 0.5. Same preset, type and seed -> byte-identical file. Throws on I/O errors.
void writeSyntheticMmproj(const MmprojPreset& preset, kernels::TensorType type, uint64_t seed, const std::string& path);

} // namespace mb::engine
