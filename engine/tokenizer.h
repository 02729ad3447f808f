// Text <-> token ids for SentencePiece (llama) and byte-level BPE (gpt2) vocabularies.
#pragma once

#include "engine/vocab.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mb::engine {

// The ids of a capped encode: all of them when the text fits the cap; otherwise the
// first cap + 1 (overCap), which is all it takes to know the text does not fit.
struct CappedTokens {
    std::vector<int32_t> ids;
    bool overCap = false;
};

// Immutable after construction; encode/decode are const and safe from many threads.
class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    // Builds the tokenizer the vocabulary's model asks for. Throws GgufError on a
    // vocabulary it cannot use.
    static std::unique_ptr<Tokenizer> create(Vocab vocab);

    // Token ids for `text`. Control tokens in the text (<|im_start|>, <s>, ...) are not
    // parsed: they are plain text. BPE matches user-defined added tokens (Qwen's <think>)
    // as whole tokens, as llama.cpp does. With addBos and a BOS id, the BOS id comes
    // first. SPM adds the implicit leading space when the vocabulary says so (and the
    // text is not empty).
    // The text is cut where no token can span the cut and encoded piece by piece, so the
    // working memory beyond the ids is that of one piece (a word, or a few KiB), not of
    // the whole text; text with no such cut (one 16 MB word) is encoded as one piece.
    std::vector<int32_t> encode(std::string_view text, bool addBos) const;

    // The same ids, but encoding stops once there are more than maxTokens (BOS counted):
    // ids then holds the first maxTokens + 1 and overCap is set. The work done is about
    // that of encoding the first maxTokens + 1 tokens' worth of text (plus one piece).
    CappedTokens encode(std::string_view text, bool addBos, size_t maxTokens) const;

    // The most input bytes one token can stand for (at least 1), computed once per
    // vocabulary: `bytes` bytes of text encode to at least minTokens(bytes) tokens
    // (BOS not counted), a bound that costs nothing to check before encoding.
    size_t longestTokenBytes() const { return m_longestTokenBytes; }
    size_t minTokens(size_t bytes) const { return (bytes + m_longestTokenBytes - 1) / m_longestTokenBytes; }

    // The raw bytes a token stands for when it follows other tokens: SPM maps U+2581 to
    // ' ' and <0xXX> to the byte; BPE maps the byte-to-unicode alphabet back to bytes.
    // Control tokens (BOS, EOS, ...) give "". Out-of-range ids give "".
    virtual std::string piece(int32_t id) const = 0;

    // Concatenated pieces of `ids`; with stripLeadingSpace (SPM), one leading space
    // produced by the implicit space prefix is removed from the first piece when the
    // ids start the text (the first id, or the first after BOS). Bytes are returned as
    // is; the result may hold invalid UTF-8 if the ids split a character.
    std::string decode(std::span<const int32_t> ids, bool stripLeadingSpace = true) const;

    const Vocab& vocab() const { return m_vocab; }
    size_t size() const { return m_vocab.tokens.size(); }
    int32_t bos() const { return m_vocab.bos; }
    int32_t eos() const { return m_vocab.eos; }
    bool isControl(int32_t id) const;

protected:
    explicit Tokenizer(Vocab vocab) : m_vocab(std::move(vocab)) {}

    // Appends the ids of `text` (not empty, no BOS) to `ids`; may stop as soon as
    // ids.size() > maxTokens, leaving more than maxTokens + 1 ids (the caller trims).
    virtual void encodeText(std::string_view text, size_t maxTokens, std::vector<int32_t>& ids) const = 0;

    Vocab m_vocab;
    size_t m_longestTokenBytes = 1; // set by the subclass constructors
};

// Turns a stream of token ids into text pieces that are always whole UTF-8 characters:
// bytes of a character split across tokens are held back until the character is
// complete. One per generation; not thread-safe.
class StreamDecoder {
public:
    // `afterPrompt`: the ids pushed continue a prompt, so no leading space is stripped.
    explicit StreamDecoder(const Tokenizer& tokenizer, bool afterPrompt = true);
    // Text that became complete with this token (possibly empty).
    std::string push(int32_t id);
    // Whatever is held back at the end (invalid sequences are emitted as U+FFFD).
    std::string flush();

private:
    const Tokenizer& m_tokenizer;
    bool m_first;
    std::string m_pending;
};

} // namespace mb::engine
