// Reading and validating llama.* hyper-parameters.
#include "engine/model_config.h"
#include "engine/quote.h"

#include "engine/gguf.h"

namespace mb::engine {

namespace {

int64_t positiveInt(const GgufFile& f, const std::string& key, int64_t limit) {
    const GgufValue* v = f.find(key);
    if (!v) throw ModelError("missing metadata key " + quoteName(key));
    if (!v->isInteger()) throw ModelError("metadata key '" + key + "' is not an integer");
    const int64_t x = v->asInt();
    if (x <= 0 || x > limit)
        throw ModelError("metadata key '" + key + "' = " + std::to_string(x) + " is out of range");
    return x;
}

} // namespace

LlamaConfig LlamaConfig::fromGguf(const GgufFile& f) {
    const GgufValue* arch = f.find("general.architecture");
    if (!arch || arch->type != GgufValueType::String)
        throw ModelError("missing metadata key 'general.architecture'");
    if (arch->asString() != "llama")
        throw ModelError("unsupported architecture '" + arch->asString() + "' (only 'llama' is supported)");

    LlamaConfig c;
    c.dim = positiveInt(f, "llama.embedding_length", 1 << 16);
    c.layers = positiveInt(f, "llama.block_count", 1024);
    c.heads = positiveInt(f, "llama.attention.head_count", 1024);
    c.kvHeads = f.find("llama.attention.head_count_kv") ? positiveInt(f, "llama.attention.head_count_kv", 1024)
                                                        : c.heads;
    c.ffnDim = positiveInt(f, "llama.feed_forward_length", 1 << 20);
    c.contextLength = positiveInt(f, "llama.context_length", int64_t{1} << 24);
    if (c.dim % c.heads != 0)
        throw ModelError("embedding_length " + std::to_string(c.dim) + " is not a multiple of head_count " +
                         std::to_string(c.heads));
    if (c.heads % c.kvHeads != 0)
        throw ModelError("head_count " + std::to_string(c.heads) + " is not a multiple of head_count_kv " +
                         std::to_string(c.kvHeads));
    c.headDim = c.dim / c.heads;
    c.ropeDim = f.find("llama.rope.dimension_count") ? positiveInt(f, "llama.rope.dimension_count", c.headDim)
                                                     : c.headDim;
    if (c.ropeDim % 2 != 0) throw ModelError("llama.rope.dimension_count must be even");
    if (const GgufValue* v = f.find("llama.rope.freq_base")) c.ropeBase = static_cast<float>(v->asFloat());
    if (const GgufValue* v = f.find("llama.attention.layer_norm_rms_epsilon"))
        c.normEps = static_cast<float>(v->asFloat());
    if (!(c.ropeBase > 1.0f)) throw ModelError("llama.rope.freq_base must be > 1");
    if (!(c.normEps > 0.0f && c.normEps < 1.0f)) throw ModelError("llama.attention.layer_norm_rms_epsilon out of range");

    if (f.find("llama.vocab_size")) {
        c.vocabSize = positiveInt(f, "llama.vocab_size", 1 << 22);
    } else if (const GgufValue* toks = f.find("tokenizer.ggml.tokens"); toks && toks->type == GgufValueType::Array) {
        c.vocabSize = static_cast<int64_t>(toks->asArray().size());
    }
    if (c.vocabSize <= 0) throw ModelError("cannot tell the vocabulary size (no llama.vocab_size, no token list)");
    return c;
}

} // namespace mb::engine
