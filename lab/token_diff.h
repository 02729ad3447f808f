// A token-level diff of two generated outputs (the playground's "where did they diverge").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mb::lab {

// A run of tokens: equal in both, only in `a` (deleted) or only in `b` (inserted).
// Ranges are half-open indices into the two sequences.
struct DiffOp {
    enum class Kind { Equal, OnlyA, OnlyB };
    Kind kind = Kind::Equal;
    std::size_t aBegin = 0, aEnd = 0;
    std::size_t bBegin = 0, bEnd = 0;
};

// A shortest edit script by longest common subsequence over the tokens between the common
// prefix and suffix: O(n·m) time and 4·n·m bytes for the middle parts. When the middles are
// larger than `maxCells` (n·m), the middle is reported as one replaced block instead of a
// fine diff. Adjacent ops of one kind are merged; an empty input gives one op or none.
std::vector<DiffOp> diffTokens(const std::vector<int32_t>& a, const std::vector<int32_t>& b,
                               std::size_t maxCells = std::size_t{16} << 20);

// Length of the common prefix: the position where two greedy outputs first diverge.
std::size_t commonPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b);

} // namespace mb::lab
