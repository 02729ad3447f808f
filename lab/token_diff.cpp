// Token diff: common prefix/suffix trimming, then an LCS table over the middle.
#include "lab/token_diff.h"

#include <algorithm>

namespace mb::lab {

size_t commonPrefix(const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
    size_t n = 0;
    while (n < a.size() && n < b.size() && a[n] == b[n]) ++n;
    return n;
}

namespace {

void push(std::vector<DiffOp>& ops, DiffOp::Kind kind, size_t a0, size_t a1, size_t b0, size_t b1) {
    if (a0 == a1 && b0 == b1) return;
    if (!ops.empty() && ops.back().kind == kind && ops.back().aEnd == a0 && ops.back().bEnd == b0) {
        ops.back().aEnd = a1;
        ops.back().bEnd = b1;
        return;
    }
    ops.push_back({kind, a0, a1, b0, b1});
}

} // namespace

std::vector<DiffOp> diffTokens(const std::vector<int32_t>& a, const std::vector<int32_t>& b, size_t maxCells) {
    std::vector<DiffOp> ops;
    const size_t pre = commonPrefix(a, b);
    size_t suf = 0;
    while (suf < a.size() - pre && suf < b.size() - pre && a[a.size() - 1 - suf] == b[b.size() - 1 - suf]) ++suf;
    push(ops, DiffOp::Kind::Equal, 0, pre, 0, pre);
    const size_t aEnd = a.size() - suf, bEnd = b.size() - suf;
    const size_t n = aEnd - pre, m = bEnd - pre;
    if (n == 0 || m == 0 || n * m > maxCells) {
        push(ops, DiffOp::Kind::OnlyA, pre, aEnd, pre, pre);
        push(ops, DiffOp::Kind::OnlyB, aEnd, aEnd, pre, bEnd);
    } else {
        // len[i][j] = LCS of a[pre+i..aEnd) and b[pre+j..bEnd), row-major (n+1)·(m+1).
        std::vector<uint32_t> len((n + 1) * (m + 1), 0);
        auto at = [&](size_t i, size_t j) -> uint32_t& { return len[i * (m + 1) + j]; };
        for (size_t i = n; i-- > 0;)
            for (size_t j = m; j-- > 0;)
                at(i, j) = a[pre + i] == b[pre + j] ? at(i + 1, j + 1) + 1 : std::max(at(i + 1, j), at(i, j + 1));
        size_t i = 0, j = 0;
        while (i < n || j < m) {
            if (i < n && j < m && a[pre + i] == b[pre + j]) {
                push(ops, DiffOp::Kind::Equal, pre + i, pre + i + 1, pre + j, pre + j + 1);
                ++i, ++j;
            } else if (i < n && (j == m || at(i + 1, j) >= at(i, j + 1))) {
                // On ties the deletion goes first: "-old +new", as diff tools print it.
                push(ops, DiffOp::Kind::OnlyA, pre + i, pre + i + 1, pre + j, pre + j);
                ++i;
            } else {
                push(ops, DiffOp::Kind::OnlyB, pre + i, pre + i, pre + j, pre + j + 1);
                ++j;
            }
        }
    }
    push(ops, DiffOp::Kind::Equal, aEnd, a.size(), bEnd, b.size());
    return ops;
}

} // namespace mb::lab
