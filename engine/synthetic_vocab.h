// A deterministic SentencePiece-style vocabulary for synthetic models.
#pragma once

#include "engine/vocab.h"

#include <cstdint>

namespace mb::engine {

// `size` tokens (>= 512): <unk>, <s>, </s>, the 256 byte tokens <0x00>..<0xFF>, then
// pieces built from common English words (all their prefixes, so merges can reach them),
// letters, and letter bigrams and trigrams, with and without the U+2581 word marker; any
// room left is filled with <unused_N> tokens (kind Unused, never produced by encoding).
// Every string tokenizes (byte fallback covers the rest), so every command works on a
// synthetic model. Scores fall with the index, like a frequency-ordered vocabulary.
Vocab makeSyntheticVocab(int64_t size);

} // namespace mb::engine
