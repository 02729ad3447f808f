// Hyper-parameters of a LLaMA-architecture model, read and validated from GGUF metadata.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace mb::engine {

class GgufFile;

// A model file that parses as GGUF but cannot be run (wrong architecture, missing or
// mis-shaped tensors, inconsistent hyper-parameters). what() is one line.
class ModelError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct LlamaConfig {
    int64_t dim = 0;           // embedding width
    int64_t layers = 0;
    int64_t heads = 0;         // query heads
    int64_t kvHeads = 0;       // key/value heads (grouped-query attention when < heads)
    int64_t headDim = 0;       // dim / heads
    int64_t ffnDim = 0;        // hidden width of the SiLU-gated FFN
    int64_t vocabSize = 0;     // rows of the output matrix
    int64_t contextLength = 0; // the model's own limit in tokens
    int64_t ropeDim = 0;       // rotated dimensions per head (usually headDim)
    float ropeBase = 10000.0f;
    float normEps = 1e-5f;

    int64_t qDim() const { return heads * headDim; }
    int64_t kvDim() const { return kvHeads * headDim; }

    // Reads llama.* keys (general.architecture must be "llama"). vocabSize comes from
    // llama.vocab_size when present, else from the token list. Throws ModelError.
    static LlamaConfig fromGguf(const GgufFile& file);
};

} // namespace mb::engine
