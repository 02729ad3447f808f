// Tokenizer construction and the model-independent parts: decoding and streaming text out.
#include "engine/tokenizer.h"

#include "engine/gguf.h"
#include "engine/tokenizer_bpe.h"
#include "engine/tokenizer_spm.h"
#include "engine/unicode.h"

#include <algorithm>
#include <cstdint>

namespace mb::engine {

namespace {

void checkVocab(const Vocab& vocab) {
    const size_t n = vocab.tokens.size();
    if (n == 0) throw GgufError("vocabulary has no tokens");
    if (!vocab.scores.empty() && vocab.scores.size() != n)
        throw GgufError("vocabulary has " + std::to_string(vocab.scores.size()) + " scores for " +
                        std::to_string(n) + " tokens");
    if (!vocab.kinds.empty() && vocab.kinds.size() != n)
        throw GgufError("vocabulary has " + std::to_string(vocab.kinds.size()) +
                        " token types for " + std::to_string(n) + " tokens");
    const std::pair<const char*, int32_t> special[] = {
        {"bos", vocab.bos}, {"eos", vocab.eos}, {"unknown", vocab.unk}, {"padding", vocab.pad}};
    for (const auto& [name, id] : special) {
        if (id < -1 || (id >= 0 && static_cast<size_t>(id) >= n))
            throw GgufError(std::string(name) + " token id " + std::to_string(id) +
                            " is outside a vocabulary of " + std::to_string(n));
    }
}

} // namespace

Tokenizer::Tokenizer(Vocab vocab) : m_vocab(std::move(vocab)) {
    for (size_t i = 0; i < m_vocab.kinds.size() && i < m_vocab.tokens.size(); ++i) {
        const TokenKind kind = m_vocab.kinds[i];
        const std::string& text = m_vocab.tokens[i];
        if (text.empty()) continue;
        const bool user = kind == TokenKind::UserDefined;
        if (!user && kind != TokenKind::Control && kind != TokenKind::Unknown) continue;
        if (user) m_userTokens.push_back(static_cast<int32_t>(i));
        m_parsedTokens.push_back(static_cast<int32_t>(i));
        m_longestTokenBytes = std::max(m_longestTokenBytes, text.size());
    }
    // Longest first, as llama.cpp matches them; ties by id for a fixed order.
    const auto longerFirst = [&](int32_t a, int32_t b) {
        return m_vocab.tokens[static_cast<size_t>(a)].size() > m_vocab.tokens[static_cast<size_t>(b)].size();
    };
    std::stable_sort(m_userTokens.begin(), m_userTokens.end(), longerFirst);
    std::stable_sort(m_parsedTokens.begin(), m_parsedTokens.end(), longerFirst);
}

void Tokenizer::partition(std::string_view text, SpecialTokens special, std::vector<Span>& spans,
                          std::vector<Span>& scratch) const {
    spans.assign(1, {0, text.size(), -1});
    for (const int32_t id : wholeTokens(special)) {
        const std::string_view token = m_vocab.tokens[static_cast<size_t>(id)];
        scratch.clear();
        for (const Span& span : spans) {
            if (span.id >= 0) {
                scratch.push_back(span);
                continue;
            }
            const std::string_view part = text.substr(span.offset, span.length);
            size_t from = 0;
            for (size_t at; (at = part.find(token, from)) != std::string_view::npos;) {
                if (at > from) scratch.push_back({span.offset + from, at - from, -1});
                scratch.push_back({span.offset + at, token.size(), id});
                from = at + token.size();
            }
            if (from < part.size()) scratch.push_back({span.offset + from, part.size() - from, -1});
        }
        spans.swap(scratch);
    }
}

std::unique_ptr<Tokenizer> Tokenizer::create(Vocab vocab) {
    checkVocab(vocab);
    switch (vocab.model) {
    case TokenizerModel::Spm: {
        // Every character must have some spelling: byte tokens or at least <unk>.
        auto tokenizer = std::make_unique<SpmTokenizer>(std::move(vocab));
        if (tokenizer->vocab().unk < 0) {
            for (int b = 0; b < 256; ++b) {
                if (!tokenizer->hasByteToken(static_cast<uint8_t>(b)))
                    throw GgufError("SentencePiece vocabulary has neither an unknown token nor "
                                    "a byte token for every byte");
            }
        }
        return tokenizer;
    }
    case TokenizerModel::Bpe:
        // Throws for a pre-tokenizer name outside engine/tokenizer_pre.cpp's table.
        return std::make_unique<BpeTokenizer>(std::move(vocab));
    }
    throw GgufError("unknown tokenizer model");
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool addBos, SpecialTokens special) const {
    return encode(text, addBos, SIZE_MAX, special).ids;
}

CappedTokens Tokenizer::encode(std::string_view text, bool addBos, size_t maxTokens, SpecialTokens special) const {
    CappedTokens out;
    if (addBos && m_vocab.bos >= 0) out.ids.push_back(m_vocab.bos);
    if (!text.empty() && out.ids.size() <= maxTokens) encodeText(text, maxTokens, special, out.ids);
    if (out.ids.size() > maxTokens) {
        out.overCap = true;
        out.ids.resize(maxTokens + 1);
    }
    return out;
}

bool Tokenizer::isControl(int32_t id) const {
    if (id < 0 || static_cast<size_t>(id) >= m_vocab.tokens.size()) return false;
    if (!m_vocab.kinds.empty()) return m_vocab.kinds[static_cast<size_t>(id)] == TokenKind::Control;
    // Without token types, the ids the vocabulary names as special are the control ones.
    return id == m_vocab.bos || id == m_vocab.eos || id == m_vocab.pad;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool stripLeadingSpace) const {
    std::string text;
    // Only SPM adds a space the user never typed; BPE text is decoded verbatim.
    bool atStart =
        stripLeadingSpace && m_vocab.model == TokenizerModel::Spm && m_vocab.addSpacePrefix;
    for (size_t i = 0; i < ids.size(); ++i) {
        std::string piece = this->piece(ids[i]);
        if (atStart && !(i == 0 && ids[i] == m_vocab.bos)) {
            if (!piece.empty() && piece.front() == ' ') piece.erase(0, 1);
            atStart = false;
        }
        text += piece;
    }
    return text;
}

StreamDecoder::StreamDecoder(const Tokenizer& tokenizer, bool afterPrompt)
    : m_tokenizer(tokenizer), m_first(!afterPrompt) {}

std::string StreamDecoder::push(int32_t id) {
    if (m_first) {
        // Same rule as decode(): a leading BOS does not end the start of the text.
        const int32_t one[1] = {id};
        m_pending += m_tokenizer.decode(one, true);
        if (id != m_tokenizer.bos()) m_first = false;
    } else {
        m_pending += m_tokenizer.piece(id);
    }
    // Emit everything but a character still waiting for its last bytes; ill-formed
    // bytes cannot become valid later, so they go out now as U+FFFD.
    const size_t ready = m_pending.size() - incompleteUtf8Tail(m_pending);
    std::string out = sanitizeUtf8(std::string_view(m_pending).substr(0, ready));
    m_pending.erase(0, ready);
    return out;
}

std::string StreamDecoder::flush() {
    std::string out = sanitizeUtf8(m_pending);
    m_pending.clear();
    return out;
}

} // namespace mb::engine
