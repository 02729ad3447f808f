// Reading a model's vocabulary from GGUF metadata (tokenizer.ggml.*) into a Vocab.
#include "engine/vocab.h"
#include "engine/quote.h"

#include "engine/gguf.h"
#include "engine/tokenizer_pre.h"

#include <limits>
#include <string>

namespace mb::engine {

namespace {

constexpr std::string_view kModelKey = "tokenizer.ggml.model";
constexpr std::string_view kPreKey = "tokenizer.ggml.pre";
constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";
constexpr std::string_view kAddBosKey = "tokenizer.ggml.add_bos_token";
constexpr std::string_view kAddSpacePrefixKey = "tokenizer.ggml.add_space_prefix";

const GgufValue::Array& arrayOf(const GgufValue& value, std::string_view key) {
    if (value.type != GgufValueType::Array)
        throw GgufError("metadata key " + quoteName(key) + " is not an array");
    return value.asArray();
}

std::vector<std::string> readStrings(const GgufValue& value, std::string_view key) {
    const auto& items = arrayOf(value, key);
    std::vector<std::string> out;
    out.reserve(items.size());
    for (const GgufValue& item : items) {
        if (item.type != GgufValueType::String)
            throw GgufError("metadata key " + quoteName(key) + " holds a non-string element");
        out.push_back(item.asString());
    }
    return out;
}

void checkCount(size_t got, size_t tokens, std::string_view key) {
    if (got != tokens)
        throw GgufError("metadata key " + quoteName(key) + " has " + std::to_string(got) +
                        " entries for " + std::to_string(tokens) + " tokens");
}

// A special token id, or -1 when absent. Converters write "none" as -1, which in an
// unsigned field reads as UINT32_MAX (stories260K.gguf does this for padding), so the
// all-ones values count as absent too; any other id outside the vocabulary is an error.
int32_t readTokenId(const GgufFile& file, std::string_view key, size_t tokens) {
    const GgufValue* value = file.find(key);
    if (!value) return -1;
    if (!value->isInteger()) throw GgufError("metadata key " + quoteName(key) + " is not an integer");
    const GgufValueType t = value->type;
    const bool isSigned = t == GgufValueType::I8 || t == GgufValueType::I16 ||
                          t == GgufValueType::I32 || t == GgufValueType::I64;
    if (isSigned) {
        const int64_t id = value->asInt();
        if (id < 0) return -1;
        if (static_cast<uint64_t>(id) >= tokens)
            throw GgufError("metadata key " + quoteName(key) + " names token " + std::to_string(id) +
                            " outside a vocabulary of " + std::to_string(tokens));
        return static_cast<int32_t>(id);
    }
    const uint64_t id = value->asUInt();
    if (id == std::numeric_limits<uint32_t>::max() || id == std::numeric_limits<uint64_t>::max())
        return -1;
    if (id >= tokens)
        throw GgufError("metadata key " + quoteName(key) + " names token " + std::to_string(id) +
                        " outside a vocabulary of " + std::to_string(tokens));
    return static_cast<int32_t>(id);
}

bool readBool(const GgufFile& file, std::string_view key, bool fallback) {
    const GgufValue* value = file.find(key);
    if (!value) return fallback;
    // Some converters store flags as integers; accept those as 0 / non-zero.
    if (value->type == GgufValueType::Bool) return value->asBool();
    if (value->isInteger()) return value->asInt() != 0;
    throw GgufError("metadata key " + quoteName(key) + " is not a bool");
}

} // namespace

Vocab Vocab::fromGguf(const GgufFile& file) {
    Vocab vocab;

    const GgufValue& modelValue = file.get(kModelKey);
    if (modelValue.type != GgufValueType::String)
        throw GgufError("metadata key " + quoteName(kModelKey) + " is not a string");
    const std::string& model = modelValue.asString();
    if (model == "llama")
        vocab.model = TokenizerModel::Spm;
    else if (model == "gpt2")
        vocab.model = TokenizerModel::Bpe;
    else
        throw GgufError("unsupported tokenizer model " + quoteName(model));
    const bool spm = vocab.model == TokenizerModel::Spm;

    if (const GgufValue* pre = file.find(kPreKey)) {
        if (pre->type != GgufValueType::String)
            throw GgufError("metadata key " + quoteName(kPreKey) + " is not a string");
        vocab.pre = pre->asString();
    }

    vocab.tokens = readStrings(file.get(kTokensKey), kTokensKey);
    const size_t n = vocab.tokens.size();
    if (n == 0) throw GgufError("metadata key " + quoteName(kTokensKey) + " is empty");
    // Token ids are int32 everywhere else in the engine.
    if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max()))
        throw GgufError("metadata key " + quoteName(kTokensKey) + " has too many tokens");

    if (const GgufValue* scores = file.find(kScoresKey)) {
        const auto& items = arrayOf(*scores, kScoresKey);
        checkCount(items.size(), n, kScoresKey);
        vocab.scores.reserve(n);
        for (const GgufValue& item : items)
            vocab.scores.push_back(static_cast<float>(item.asFloat()));
    }

    if (const GgufValue* types = file.find(kTypesKey)) {
        const auto& items = arrayOf(*types, kTypesKey);
        checkCount(items.size(), n, kTypesKey);
        vocab.kinds.reserve(n);
        for (const GgufValue& item : items) {
            const int64_t kind = item.asInt();
            if (kind < 0 || kind > static_cast<int64_t>(TokenKind::Byte))
                throw GgufError("metadata key " + quoteName(kTypesKey) + " holds unknown token type " +
                                std::to_string(kind));
            vocab.kinds.push_back(static_cast<TokenKind>(kind));
        }
    }

    if (const GgufValue* merges = file.find(kMergesKey))
        vocab.merges = readStrings(*merges, kMergesKey);
    // Byte-level BPE without merges would only ever produce single-byte tokens: surely a
    // broken file rather than a real vocabulary.
    if (!spm && vocab.merges.empty())
        throw GgufError("metadata key " + quoteName(kMergesKey) + " is missing for a gpt2 tokenizer");

    vocab.bos = readTokenId(file, "tokenizer.ggml.bos_token_id", n);
    vocab.eos = readTokenId(file, "tokenizer.ggml.eos_token_id", n);
    vocab.unk = readTokenId(file, "tokenizer.ggml.unknown_token_id", n);
    vocab.pad = readTokenId(file, "tokenizer.ggml.padding_token_id", n);

    // Defaults as llama.cpp applies them: SentencePiece models want BOS and the dummy
    // space prefix; GPT-2 style BPE wants neither (GPT-2 was trained without a BOS),
    // except where the pre-tokenizer's row says so (Llama 3 files have no key and want BOS).
    const PreTokenizer* pre = spm ? nullptr : findPreTokenizer(vocab.pre);
    vocab.addBos = readBool(file, kAddBosKey, spm || (pre && pre->addBos));
    vocab.addSpacePrefix = readBool(file, kAddSpacePrefixKey, spm);
    return vocab;
}

} // namespace mb::engine
