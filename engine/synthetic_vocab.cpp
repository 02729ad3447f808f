// Building the synthetic SentencePiece vocabulary.
#include "engine/synthetic_vocab.h"

#include <cstdio>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace mb::engine {

namespace {

const char* const kWords[] = {
    "the", "and", "was", "to", "a", "he", "she", "they", "it", "of", "in", "with", "that", "his", "her",
    "had", "for", "on", "said", "day", "one", "little", "big", "play", "friend", "happy", "mom", "time",
    "upon", "once", "there", "girl", "boy", "named", "loved", "saw", "went", "wanted", "very", "but",
    "not", "so", "is", "you", "we", "what", "all", "were", "be", "have", "this", "from", "at", "by",
    "are", "can", "do", "will", "would", "about", "when", "up", "out", "into", "then", "them", "some",
    "model", "fast", "mode", "regular", "cache", "token", "latency", "serve", "batch", "prompt", "test",
    "hello", "world", "good", "new", "first", "last", "long", "great", "little", "own", "other", "old",
    "right", "high", "different", "small", "large", "next", "early", "young", "important", "few",
    "public", "bad", "same", "able", "people", "year", "way", "thing", "man", "woman", "child", "life",
    "house", "tree", "park", "ball", "dog", "cat", "bird", "sun", "sky", "water", "food", "home",
};

} // namespace

Vocab makeSyntheticVocab(int64_t size) {
    if (size < 512) throw std::invalid_argument("a synthetic vocabulary needs at least 512 tokens");
    Vocab v;
    v.model = TokenizerModel::Spm;
    v.unk = 0;
    v.bos = 1;
    v.eos = 2;
    v.addBos = true;
    v.addSpacePrefix = true;
    std::unordered_set<std::string> seen;
    auto add = [&](const std::string& text, TokenKind kind) {
        if (static_cast<int64_t>(v.tokens.size()) >= size || !seen.insert(text).second) return;
        v.tokens.push_back(text);
        v.kinds.push_back(kind);
        v.scores.push_back(kind == TokenKind::Normal ? -static_cast<float>(v.tokens.size()) : 0.0f);
    };
    add("<unk>", TokenKind::Unknown);
    add("<s>", TokenKind::Control);
    add("</s>", TokenKind::Control);
    for (int b = 0; b < 256; ++b) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", b);
        add(name, TokenKind::Byte);
    }
    const std::string marker = "\xe2\x96\x81"; // U+2581, SentencePiece's space
    add(marker, TokenKind::Normal);
    for (char ch = 33; ch < 127; ++ch) add(std::string(1, ch), TokenKind::Normal);
    for (const char* w : kWords) {
        const std::string word(w);
        for (size_t len = 1; len <= word.size(); ++len) add(marker + word.substr(0, len), TokenKind::Normal);
        for (size_t len = 2; len <= word.size(); ++len) add(word.substr(0, len), TokenKind::Normal);
    }
    const std::string letters = "etaoinshrdlcumwfgypbvkjxqz";
    for (char a : letters) add(marker + a, TokenKind::Normal);
    for (char a : letters) add(marker + static_cast<char>(a - 32), TokenKind::Normal);
    for (char a : letters)
        for (char b : letters) add(std::string{a, b}, TokenKind::Normal);
    for (char a : letters)
        for (char b : letters) add(marker + a + b, TokenKind::Normal);
    for (char a : letters)
        for (char b : letters)
            for (char c : letters) add(std::string{a, b, c}, TokenKind::Normal);
    for (char a : letters)
        for (char b : letters)
            for (char c : letters) add(marker + a + b + c, TokenKind::Normal);
    for (int64_t i = 0; static_cast<int64_t>(v.tokens.size()) < size; ++i)
        add("<unused_" + std::to_string(i) + ">", TokenKind::Unused);
    return v;
}

} // namespace mb::engine
