// The F32 tensors of a loaded mmproj file (private to clip_model.cpp and clip_forward.cpp).
#pragma once

#include <cstdint>
#include <vector>

namespace mb::engine {

// y = x W^T + b. w: (out, in) row-major (GGUF's out x in layout); b: (out) or empty.
struct ClipLinear {
    int64_t out = 0;
    int64_t in = 0;
    std::vector<float> w; // out * in
    std::vector<float> b; // out
};

// LayerNorm affine parameters, each (hidden).
struct ClipNorm {
    std::vector<float> w;
    std::vector<float> b;
};

struct ClipBlock {
    ClipNorm ln1;                 // before attention
    ClipLinear q, k, v, o;        // attn_q/k/v (hidden -> hidden), attn_out
    ClipNorm ln2;                 // before the MLP
    ClipLinear fc1;               // v.blk.N.ffn_down: hidden -> ffn (the converter's name is inverted)
    ClipLinear fc2;               // v.blk.N.ffn_up:   ffn -> hidden
};

struct ClipWeights {
    ClipLinear patch;             // v.patch_embd.weight as (hidden, 3*P*P): column c*P*P + kh*P + kw; bias optional
    std::vector<float> classEmbd; // (hidden)
    std::vector<float> posEmbd;   // (patches + 1, hidden): row 0 = class position
    ClipNorm preLn;               // v.pre_ln
    ClipNorm postLn;              // v.post_ln, empty when absent (llava files drop it)
    std::vector<ClipBlock> blocks; // every stored block (the last one is loaded but not run)
    ClipLinear mm0;               // hidden -> projectorHidden
    ClipLinear mm2;               // projectorHidden -> projectionWidth
};

} // namespace mb::engine
