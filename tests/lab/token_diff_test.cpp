// Token diffs: identical, divergent, inserted, deleted and the size fallback.
#include "lab/token_diff.h"

#include <gtest/gtest.h>

namespace mb::lab {
namespace {

using K = DiffOp::Kind;

// Rebuilds b from a and the ops: checks that the script is complete and consistent.
std::vector<int32_t> apply(const std::vector<int32_t>& a, const std::vector<int32_t>& b, const std::vector<DiffOp>& ops) {
    std::vector<int32_t> out;
    size_t ai = 0, bi = 0;
    for (const auto& op : ops) {
        EXPECT_EQ(op.aBegin, ai);
        EXPECT_EQ(op.bBegin, bi);
        if (op.kind == K::Equal) {
            for (size_t i = 0; i < op.aEnd - op.aBegin; ++i) {
                EXPECT_EQ(a[op.aBegin + i], b[op.bBegin + i]);
            }
        }
        if (op.kind != K::OnlyA) out.insert(out.end(), b.begin() + static_cast<long>(op.bBegin), b.begin() + static_cast<long>(op.bEnd));
        ai = op.aEnd;
        bi = op.bEnd;
    }
    EXPECT_EQ(ai, a.size());
    EXPECT_EQ(bi, b.size());
    return out;
}

TEST(TokenDiff, IdenticalIsOneEqualRun) {
    const std::vector<int32_t> a{1, 2, 3};
    const auto ops = diffTokens(a, a);
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_EQ(ops[0].kind, K::Equal);
    EXPECT_EQ(commonPrefix(a, a), 3u);
    EXPECT_TRUE(diffTokens({}, {}).empty());
}

TEST(TokenDiff, FindsTheMinimalEditInTheMiddle) {
    const std::vector<int32_t> a{1, 2, 3, 4, 5, 6}, b{1, 2, 9, 4, 5, 7, 6};
    const auto ops = diffTokens(a, b);
    EXPECT_EQ(apply(a, b, ops), b);
    size_t equal = 0;
    for (const auto& op : ops)
        if (op.kind == K::Equal) equal += op.aEnd - op.aBegin;
    EXPECT_EQ(equal, 5u); // 1 2 4 5 6
    EXPECT_EQ(commonPrefix(a, b), 2u);
}

TEST(TokenDiff, PureInsertionAndDeletion) {
    const std::vector<int32_t> a{1, 2}, b{1, 2, 3, 4};
    auto ops = diffTokens(a, b);
    ASSERT_EQ(ops.size(), 2u);
    EXPECT_EQ(ops[1].kind, K::OnlyB);
    EXPECT_EQ(apply(a, b, ops), b);
    ops = diffTokens(b, a);
    ASSERT_EQ(ops.size(), 2u);
    EXPECT_EQ(ops[1].kind, K::OnlyA);
    ops = diffTokens({}, b);
    ASSERT_EQ(ops.size(), 1u);
    EXPECT_EQ(ops[0].kind, K::OnlyB);
}

TEST(TokenDiff, LargeMiddlesFallBackToOneReplacedBlock) {
    std::vector<int32_t> a(100), b(100);
    for (int i = 0; i < 100; ++i) a[static_cast<size_t>(i)] = i, b[static_cast<size_t>(i)] = 1000 + i;
    a.push_back(7);
    b.push_back(7);
    const auto ops = diffTokens(a, b, /*maxCells=*/100);
    ASSERT_EQ(ops.size(), 3u);
    EXPECT_EQ(ops[0].kind, K::OnlyA);
    EXPECT_EQ(ops[1].kind, K::OnlyB);
    EXPECT_EQ(ops[2].kind, K::Equal);
    EXPECT_EQ(apply(a, b, ops), b);
}

} // namespace
} // namespace mb::lab
