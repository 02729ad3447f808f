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

// What encode does with the text of control tokens (<|im_start|>, <start_of_turn>, <s>) and
// of the unknown token: AsText encodes it as any other text (llama.cpp's parse_special =
// false, what prompts and test vectors use); Parse takes each occurrence as that token.
enum class SpecialTokens { AsText, Parse };

// Immutable after construction; encode/decode are const and safe from many threads.
class Tokenizer {
public:
    virtual ~Tokenizer() = default;

    // Builds the tokenizer the vocabulary's model asks for. Throws GgufError on a
    // vocabulary it cannot use.
    static std::unique_ptr<Tokenizer> create(Vocab vocab);

    // Token ids for `text`. User-defined tokens (Qwen's <think>, Gemma's HTML tags and runs
    // of blanks) are matched as whole tokens before anything else, longest first, as
    // llama.cpp does for both models; control tokens in the text (<|im_start|>, <s>, ...)
    // are plain text unless `special` is Parse, which matches them (and the unknown token)
    // the same way. With addBos and a BOS id, the BOS id comes first. SPM adds the
    // implicit leading space when the vocabulary says so, to the text's start and after
    // every whole token that text follows, as llama.cpp does.
    // The text is cut where no token can span the cut and encoded piece by piece, so the
    // working memory beyond the ids is that of one piece (a word, or a few KiB), not of
    // the whole text; text with no such cut (one 16 MB word) is encoded as one piece.
    std::vector<int32_t> encode(std::string_view text, bool addBos,
                                SpecialTokens special = SpecialTokens::AsText) const;

    // The same ids, but encoding stops once there are more than maxTokens (BOS counted):
    // ids then holds the first maxTokens + 1 and overCap is set. The work done is about
    // that of encoding the first maxTokens + 1 tokens' worth of text (plus one piece).
    CappedTokens encode(std::string_view text, bool addBos, size_t maxTokens,
                        SpecialTokens special = SpecialTokens::AsText) const;

    // The most input bytes one token can stand for (at least 1), computed once per
    // vocabulary: `bytes` bytes of text encode to at least minTokens(bytes) tokens
    // (BOS not counted), a bound that costs nothing to check before encoding. It holds
    // with special tokens parsed too (their texts count).
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
    explicit Tokenizer(Vocab vocab);

    // Appends the ids of `text` (not empty, no BOS) to `ids`; may stop as soon as
    // ids.size() > maxTokens, leaving more than maxTokens + 1 ids (the caller trims).
    virtual void encodeText(std::string_view text, size_t maxTokens, SpecialTokens special,
                            std::vector<int32_t>& ids) const = 0;

    // A stretch of the text: plain text (id -1) or one whole token.
    struct Span {
        size_t offset;
        size_t length;
        int32_t id;
    };
    // The tokens matched whole before the model's own encoding, longest text first (ties by
    // id): the user-defined ones; with Parse also the control and unknown ones. Tokens with
    // an empty text are never matched.
    const std::vector<int32_t>& wholeTokens(SpecialTokens special) const {
        return special == SpecialTokens::Parse ? m_parsedTokens : m_userTokens;
    }
    // llama.cpp's partition: `spans` becomes `text` cut at every occurrence of each whole
    // token in turn (left to right, never inside a stretch an earlier, longer token took).
    // `scratch` is reused memory. O(tokens x text) for the searches.
    void partition(std::string_view text, SpecialTokens special, std::vector<Span>& spans,
                   std::vector<Span>& scratch) const;

    Vocab m_vocab;
    size_t m_longestTokenBytes = 1; // set by the subclass constructors (and the whole tokens')

private:
    std::vector<int32_t> m_userTokens;   // user-defined, longest first
    std::vector<int32_t> m_parsedTokens; // user-defined, control and unknown, longest first
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
