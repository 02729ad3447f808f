// KvBlockManager: prefix hits and misses, LRU eviction, reference counts, collisions, stress.
#include "engine/kv_block_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

using namespace mb::engine;

namespace {

using Tokens = std::vector<int32_t>;

Tokens range(int32_t from, int32_t n) {
    Tokens t(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) t[static_cast<size_t>(i)] = from + i;
    return t;
}

Tokens concat(Tokens a, const Tokens& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// A sequence as the engine would run it: match the prompt (minus its last token), allocate
// the rest, "compute" it and publish every full block.
struct Sequence {
    std::vector<int32_t> blocks;
    KvBlockManager::Match match;
    uint64_t chain = 0;
};

Sequence prefill(KvBlockManager& m, const Tokens& prompt) {
    Sequence s;
    const auto bs = static_cast<size_t>(m.blockSize());
    s.match = m.acquirePrefix(std::span(prompt).first(prompt.size() - 1));
    s.blocks = s.match.blocks;
    const auto needed = static_cast<int32_t>((prompt.size() + bs - 1) / bs - s.blocks.size());
    auto fresh = m.allocate(needed);
    if (!fresh) throw std::runtime_error("test pool too small");
    s.blocks.insert(s.blocks.end(), fresh->begin(), fresh->end());
    s.chain = s.match.lastHash;
    for (size_t i = s.match.blocks.size(); (i + 1) * bs <= prompt.size(); ++i)
        s.chain = m.publish(s.chain, std::span(prompt).subspan(i * bs, bs), s.blocks[i]);
    return s;
}

// Weak hashes that force collisions. Neither returns 0.
uint64_t constantHash(uint64_t, std::span<const int32_t>) {
    return 42;
}
uint64_t depthHash(uint64_t parent, std::span<const int32_t>) {
    return parent * 31 + 7;
}
uint64_t tinyHash(uint64_t parent, std::span<const int32_t> t) {
    return ((parent * 3 + static_cast<uint64_t>(t[0]) * 5 + static_cast<uint64_t>(t.back())) & 7) +
           1;
}

} // namespace

TEST(KvBlockManager, ChainHashMixesParentAndEveryToken) {
    const Tokens base = {1, 2, 3, 4};
    const uint64_t h = KvBlockManager::chainHash(0, base);
    EXPECT_EQ(h, KvBlockManager::chainHash(0, base));
    EXPECT_NE(h, 0u);
    EXPECT_NE(h, KvBlockManager::chainHash(1, base));
    EXPECT_NE(h, KvBlockManager::chainHash(0, Tokens{2, 1, 3, 4}));
    for (size_t i = 0; i < base.size(); ++i) {
        Tokens t = base;
        ++t[i];
        EXPECT_NE(h, KvBlockManager::chainHash(0, t)) << i;
    }
    KvBlockManager m(4, 4, true);
    const auto b = m.allocate(1);
    EXPECT_EQ(m.publish(0, base, (*b)[0]), h);
}

TEST(KvBlockManager, HitSharesBlocksAndCountsTokens) {
    KvBlockManager m(16, 4, true);
    const Tokens prompt = range(100, 10); // 2 full blocks + 2 tokens
    const Sequence a = prefill(m, prompt);
    EXPECT_EQ(m.queries(), 9u);
    EXPECT_EQ(m.hits(), 0u);
    EXPECT_TRUE(m.isPublished(a.blocks[0]) && m.isPublished(a.blocks[1]));
    EXPECT_FALSE(m.isPublished(a.blocks[2]));

    const Sequence b = prefill(m, concat(range(100, 8), {7, 7, 7}));
    EXPECT_EQ(b.match.blocks, (std::vector<int32_t>{a.blocks[0], a.blocks[1]}));
    EXPECT_EQ(b.match.tokens, 8);
    EXPECT_EQ(b.match.lastHash, a.chain);
    EXPECT_EQ(m.queries(), 9u + 10u);
    EXPECT_EQ(m.hits(), 8u);
    EXPECT_EQ(m.refCount(a.blocks[0]), 2);
    EXPECT_EQ(m.usedBlocks(), 4);
    m.checkInvariants();
}

TEST(KvBlockManager, MissOnDifferentFirstBlock) {
    KvBlockManager m(16, 4, true);
    prefill(m, range(0, 12));
    const auto match = m.acquirePrefix(concat({99}, range(1, 11)));
    EXPECT_TRUE(match.blocks.empty());
    EXPECT_EQ(match.tokens, 0);
    EXPECT_EQ(match.lastHash, 0u);
    EXPECT_EQ(m.hits(), 0u);
}

TEST(KvBlockManager, PartialBlockIsNeverCached) {
    KvBlockManager m(16, 4, true);
    const Tokens seven = range(10, 7);
    const Sequence a = prefill(m, seven); // 7 computed tokens publish 1 block
    EXPECT_TRUE(m.isPublished(a.blocks[0]));
    EXPECT_FALSE(m.isPublished(a.blocks[1]));
    m.release(a.blocks);
    EXPECT_EQ(m.cachedFreeBlocks(), 1);
    const auto match = m.acquirePrefix(concat(range(10, 6), {50, 51})); // shares 6 tokens
    EXPECT_EQ(match.tokens, 4);
    ASSERT_EQ(match.blocks.size(), 1u);
    EXPECT_EQ(match.blocks[0], a.blocks[0]);
}

TEST(KvBlockManager, LongestPrefixStopsAtDivergence) {
    KvBlockManager m(16, 4, true);
    const Sequence a = prefill(m, range(0, 17)); // 4 full blocks
    Tokens diverged = range(0, 17);
    diverged[9] = 999; // inside block 2 (the third)
    const auto match = m.acquirePrefix(diverged);
    EXPECT_EQ(match.blocks, (std::vector<int32_t>{a.blocks[0], a.blocks[1]}));
    EXPECT_EQ(match.tokens, 8);
    EXPECT_EQ(match.lastHash,
              KvBlockManager::chainHash(KvBlockManager::chainHash(0, range(0, 4)), range(4, 4)));
}

TEST(KvBlockManager, LruEvictsLeastRecentlyReleasedFirst) {
    KvBlockManager m(4, 2, true);
    const Sequence a = prefill(m, range(0, 5)); // blocks a0 a1 full, a2 partial
    m.release(a.blocks);
    const Sequence b = prefill(m, range(50, 3)); // b0 full, b1 partial
    m.release(b.blocks);
    EXPECT_EQ(m.cachedFreeBlocks(), 3);
    EXPECT_EQ(m.freeBlocks(), 1);
    // LRU order: a1, a0 (released back to front), then b0. Taking 2 evicts the free block
    // and a's tail a1; its head a0 still matches.
    const auto x = m.allocate(2);
    ASSERT_TRUE(x);
    EXPECT_TRUE(std::find(x->begin(), x->end(), a.blocks[1]) != x->end());
    EXPECT_EQ(m.acquirePrefix(range(0, 5)).tokens, 2);
    m.release(m.acquirePrefix(range(0, 2)).blocks); // drops that second reference again
    EXPECT_EQ(m.refCount(a.blocks[0]), 1);
    m.release(std::vector<int32_t>{a.blocks[0]}); // a0 is now the most recently released
    // Next eviction takes b0 (least recent), so b's prefix stops matching; a0 survives.
    const auto y = m.allocate(1);
    ASSERT_TRUE(y);
    EXPECT_EQ((*y)[0], b.blocks[0]);
    EXPECT_EQ(m.acquirePrefix(range(50, 3)).tokens, 0);
    EXPECT_EQ(m.acquirePrefix(range(0, 3)).tokens, 2);
    m.checkInvariants();
}

TEST(KvBlockManager, ReferencedBlockIsNeverEvicted) {
    KvBlockManager m(3, 2, true);
    const Sequence a = prefill(m, range(0, 5)); // holds all 3 blocks
    EXPECT_FALSE(m.canAllocate(1));
    EXPECT_FALSE(m.allocate(1));
    m.release(std::vector<int32_t>{a.blocks[2]}); // the partial block goes to the free list
    EXPECT_TRUE(m.canAllocate(1));
    EXPECT_FALSE(m.canAllocate(2));
    EXPECT_FALSE(m.allocate(2));
    EXPECT_EQ(m.refCount(a.blocks[0]), 1);
    EXPECT_EQ(m.acquirePrefix(range(0, 4)).tokens, 4); // both published blocks still there
    m.checkInvariants();
}

TEST(KvBlockManager, PoolExhaustionChangesNothing) {
    KvBlockManager m(4, 4, true);
    const Sequence a = prefill(m, range(0, 9));
    m.release(a.blocks);
    const int32_t free = m.freeBlocks(), cached = m.cachedFreeBlocks();
    EXPECT_FALSE(m.canAllocate(5));
    EXPECT_FALSE(m.allocate(5));
    EXPECT_EQ(m.freeBlocks(), free);
    EXPECT_EQ(m.cachedFreeBlocks(), cached);
    EXPECT_EQ(m.usedBlocks(), 0);
    EXPECT_EQ(m.acquirePrefix(range(0, 9)).tokens, 8);
    const auto all = m.allocate(2); // the rest, no eviction needed
    ASSERT_TRUE(all);
    EXPECT_EQ(m.usedBlocks(), 4);
    EXPECT_TRUE(m.allocate(0) && m.allocate(0)->empty());
}

TEST(KvBlockManager, ReleaseAndRetainCount) {
    KvBlockManager m(4, 4, false);
    const auto b = *m.allocate(2);
    m.retain(b[0]);
    EXPECT_EQ(m.refCount(b[0]), 2);
    m.release(b); // a block held twice survives one release
    EXPECT_EQ(m.refCount(b[0]), 1);
    EXPECT_EQ(m.refCount(b[1]), 0);
    EXPECT_EQ(m.usedBlocks(), 1);
    EXPECT_EQ(m.freeBlocks(), 3);
    m.retain(b[0]);
    m.release(std::vector<int32_t>{b[0], b[0]}); // the same block twice in one call
    EXPECT_EQ(m.refCount(b[0]), 0);
    EXPECT_EQ(m.freeBlocks(), 4);
    m.checkInvariants();
}

TEST(KvBlockManager, ClearCacheForgetsPrefixes) {
    KvBlockManager m(8, 2, true);
    const Sequence a = prefill(m, range(0, 5));
    m.release(a.blocks);
    const Sequence b = prefill(m, range(10, 5)); // still held across the flush
    m.clearCache();
    EXPECT_EQ(m.cachedFreeBlocks(), 0);
    EXPECT_EQ(m.freeBlocks(), 5);
    EXPECT_EQ(m.usedBlocks(), 3);
    EXPECT_FALSE(m.isPublished(b.blocks[0]));
    EXPECT_EQ(m.acquirePrefix(range(0, 5)).tokens, 0);
    EXPECT_EQ(m.acquirePrefix(range(10, 5)).tokens, 0);
    // The held sequence's later blocks stay out of the new cache.
    ASSERT_EQ(b.blocks.size(), 3u); // decoding token 15 fills the third block
    m.publish(b.chain, range(14, 2), b.blocks[2]);
    EXPECT_EQ(m.acquirePrefix(range(10, 7)).tokens, 0);
    m.release(b.blocks);
    EXPECT_EQ(m.freeBlocks(), 8);
    // A fresh sequence caches again.
    const Sequence c = prefill(m, range(10, 5));
    m.release(c.blocks);
    EXPECT_EQ(m.acquirePrefix(range(10, 5)).tokens, 4);
    m.checkInvariants();
}

TEST(KvBlockManager, PrefixCachingOffDoesNothing) {
    KvBlockManager m(8, 4, false);
    EXPECT_FALSE(m.prefixCaching());
    const Sequence a = prefill(m, range(0, 9));
    EXPECT_EQ(a.chain,
              KvBlockManager::chainHash(KvBlockManager::chainHash(0, range(0, 4)), range(4, 4)));
    EXPECT_FALSE(m.isPublished(a.blocks[0]));
    m.release(a.blocks);
    EXPECT_EQ(m.cachedFreeBlocks(), 0);
    EXPECT_EQ(m.freeBlocks(), 8);
    const auto match = m.acquirePrefix(range(0, 9));
    EXPECT_TRUE(match.blocks.empty());
    EXPECT_EQ(m.queries(), 0u);
    EXPECT_EQ(m.hits(), 0u);
}

TEST(KvBlockManager, DuplicateContentKeepsOneMapping) {
    KvBlockManager m(8, 4, true);
    const auto x = *m.allocate(1);
    const auto y = *m.allocate(1);
    const uint64_t hx = m.publish(0, range(0, 4), x[0]);
    EXPECT_EQ(m.publish(0, range(0, 4), y[0]), hx); // computed twice, e.g. concurrently
    EXPECT_EQ(m.publish(0, range(0, 4), x[0]), hx); // republishing is a no-op
    EXPECT_TRUE(m.isPublished(x[0]));
    EXPECT_FALSE(m.isPublished(y[0]));
    EXPECT_EQ(m.acquirePrefix(range(0, 5)).blocks, x);
    m.release(x);
    m.release(x);
    EXPECT_EQ(m.cachedFreeBlocks(), 1); // x serves the cache
    m.release(y);
    EXPECT_EQ(m.freeBlocks(), 7); // the copy is simply freed
    EXPECT_EQ(m.acquirePrefix(range(0, 5)).blocks, x);
    m.checkInvariants();
}

TEST(KvBlockManager, ForcedCollisionNeverMatchesWrongTokens) {
    KvBlockManager m(8, 4, true, &constantHash); // every block hashes to 42
    const auto a = *m.allocate(1);
    const auto b = *m.allocate(1);
    EXPECT_EQ(m.publish(0, range(1, 4), a[0]), 42u);
    EXPECT_TRUE(
        m.acquirePrefix(concat(range(5, 4), {0})).blocks.empty()); // same hash, other tokens
    EXPECT_EQ(m.hits(), 0u);
    m.publish(0, range(5, 4), b[0]); // collides: not cached
    EXPECT_FALSE(m.isPublished(b[0]));
    EXPECT_TRUE(m.acquirePrefix(concat(range(5, 4), {0})).blocks.empty());
    m.release(m.acquirePrefix(concat(range(1, 4), {0})).blocks); // the original still matches
    EXPECT_EQ(m.hits(), 4u);
    m.release(b);
    EXPECT_EQ(m.freeBlocks(), 7);
    m.checkInvariants();
}

TEST(KvBlockManager, CollidingParentChainNeverMatchesWrongKv) {
    // depthHash ignores tokens, so x0 and y0 (different first blocks) share a chain value;
    // x1, cached under x0, must not be served after y0 when x0 is gone.
    KvBlockManager m(3, 2, true, &depthHash);
    const auto x = *m.allocate(2);
    const uint64_t h0 = m.publish(0, Tokens{1, 1}, x[0]);
    m.publish(h0, Tokens{2, 2}, x[1]);
    m.release(std::vector<int32_t>{x[0]}); // released separately: x0 is the older
    m.release(std::vector<int32_t>{x[1]});
    const auto y = *m.allocate(2); // the free block and (evicted) x0
    EXPECT_TRUE(std::find(y.begin(), y.end(), x[0]) != y.end());
    EXPECT_EQ(m.publish(0, Tokens{3, 3}, y[0]), h0); // no collision seen: x0 is gone
    const auto match = m.acquirePrefix(Tokens{3, 3, 2, 2, 9});
    EXPECT_EQ(match.blocks, (std::vector<int32_t>{y[0]}));
    m.checkInvariants();
}

TEST(KvBlockManager, ChildOutlivingItsParentIsReplaced) {
    KvBlockManager m(3, 2, true);
    const auto x = *m.allocate(2);
    const uint64_t h0 = m.publish(0, Tokens{1, 1}, x[0]);
    m.publish(h0, Tokens{2, 2}, x[1]);
    m.release(std::vector<int32_t>{x[0]}); // parent older than child: evicted first
    m.release(std::vector<int32_t>{x[1]});
    const auto y = *m.allocate(2); // evicts x0; x1 stays cached but unreachable
    EXPECT_EQ(m.cachedFreeBlocks(), 1);
    EXPECT_EQ(m.acquirePrefix(Tokens{1, 1, 2, 2, 9}).tokens, 0);
    // The same chain computed again replaces x1's stale entry, and x1 is freed.
    const uint64_t h1 = m.publish(0, Tokens{1, 1}, y[0]);
    EXPECT_EQ(h1, h0);
    m.publish(h1, Tokens{2, 2}, y[1]);
    EXPECT_EQ(m.cachedFreeBlocks(), 0);
    EXPECT_EQ(m.freeBlocks(), 1);
    EXPECT_EQ(m.acquirePrefix(Tokens{1, 1, 2, 2, 9}).blocks, y);
    m.checkInvariants();
}

TEST(KvBlockManager, PreconditionsThrow) {
    EXPECT_THROW(KvBlockManager(0, 4, true), std::logic_error);
    EXPECT_THROW(KvBlockManager(4, 0, true), std::logic_error);
    KvBlockManager m(4, 4, true);
    const auto b = *m.allocate(1);
    EXPECT_THROW(m.release(std::vector<int32_t>{1}), std::logic_error); // refcount 0
    EXPECT_THROW(m.release(std::vector<int32_t>{b[0], b[0]}), std::logic_error);
    EXPECT_EQ(m.refCount(b[0]), 1); // the failed release changed nothing
    EXPECT_THROW(m.release(std::vector<int32_t>{4}), std::logic_error);
    EXPECT_THROW(m.release(std::vector<int32_t>{-1}), std::logic_error);
    EXPECT_THROW(m.retain(2), std::logic_error);
    EXPECT_THROW(m.retain(7), std::logic_error);
    EXPECT_THROW(m.refCount(-3), std::logic_error);
    EXPECT_THROW(m.allocate(-1), std::logic_error);
    EXPECT_THROW(m.publish(0, range(0, 3), b[0]), std::logic_error); // wrong length
    EXPECT_THROW(m.publish(0, range(0, 4), 3), std::logic_error);    // not held
    EXPECT_THROW(m.publish(0, range(0, 4), 9), std::logic_error);    // bad id
    m.publish(0, range(0, 4), b[0]);
    EXPECT_THROW(m.publish(0, range(1, 4), b[0]), std::logic_error); // other content
    m.checkInvariants();
}

namespace {

// Random sequences against a reference model that knows the true KV content of every
// block (the whole token prefix it was computed from) and every reference.
struct Live {
    Tokens tokens;
    std::vector<int32_t> blocks;
    uint64_t chain = 0;
    size_t published = 0; // full blocks published or matched
    bool frozen = false;  // shares a partial block with a fork: no more writes
};

void stress(KvBlockManager::HashFunction hash, uint32_t seed, uint64_t* hitsOut) {
    constexpr int32_t kBlocks = 40, kBs = 4;
    KvBlockManager m(kBlocks, kBs, true, hash);
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    std::vector<Tokens> content(kBlocks); // what each block's KV was computed from
    std::vector<Live> live;
    std::vector<Tokens> bases;
    for (int i = 0; i < 4; ++i) {
        Tokens t;
        for (int j = 0; j < 24; ++j) t.push_back(pick(3));
        bases.push_back(t);
    }
    uint64_t queries = 0, hits = 0;
    auto write = [&](Live& s) { // positions just appended: record the last block's content
        const size_t last = (s.tokens.size() - 1) / kBs;
        content[static_cast<size_t>(s.blocks[last])] = Tokens(
            s.tokens.begin(),
            s.tokens.begin() + static_cast<ptrdiff_t>(std::min(s.tokens.size(), (last + 1) * kBs)));
    };
    auto publishFull = [&](Live& s) {
        for (; (s.published + 1) * kBs <= s.tokens.size(); ++s.published)
            s.chain = m.publish(s.chain, std::span(s.tokens).subspan(s.published * kBs, kBs),
                                s.blocks[s.published]);
    };
    auto refsOf = [&] {
        std::vector<int32_t> refs(kBlocks, 0);
        for (const Live& s : live)
            for (int32_t b : s.blocks) ++refs[static_cast<size_t>(b)];
        return refs;
    };
    for (int op = 0; op < 4000; ++op) {
        const int kind = pick(100);
        if (kind < 35 && live.size() < 8) { // a new request
            Tokens prompt = bases[static_cast<size_t>(pick(4))];
            prompt.resize(static_cast<size_t>(1 + pick(24)));
            for (int j = pick(6); j > 0; --j) prompt.push_back(pick(3));
            const auto query = std::span(prompt).first(prompt.size() - 1);
            const auto match = m.acquirePrefix(query);
            queries += query.size();
            hits += static_cast<uint64_t>(match.tokens);
            ASSERT_EQ(match.tokens, static_cast<int64_t>(match.blocks.size()) * kBs);
            for (size_t i = 0; i < match.blocks.size(); ++i) // the KV is exactly the query's
                ASSERT_EQ(
                    content[static_cast<size_t>(match.blocks[i])],
                    Tokens(prompt.begin(), prompt.begin() + static_cast<ptrdiff_t>((i + 1) * kBs)));
            Live s{prompt, match.blocks, match.lastHash, match.blocks.size(), false};
            const auto need =
                static_cast<int32_t>((prompt.size() + kBs - 1) / kBs - match.blocks.size());
            const bool can = m.canAllocate(need);
            const auto fresh = m.allocate(need);
            ASSERT_EQ(can, fresh.has_value());
            if (!fresh) {
                m.release(match.blocks);
            } else {
                const auto refs = refsOf();
                for (int32_t b : *fresh)
                    ASSERT_EQ(refs[static_cast<size_t>(b)], 0) << "handed out a held block";
                s.blocks.insert(s.blocks.end(), fresh->begin(), fresh->end());
                for (size_t i = match.blocks.size(); i < s.blocks.size(); ++i)
                    content[static_cast<size_t>(s.blocks[i])] =
                        Tokens(prompt.begin(), prompt.begin() + static_cast<ptrdiff_t>(std::min(
                                                                    prompt.size(), (i + 1) * kBs)));
                publishFull(s);
                live.push_back(std::move(s));
            }
        } else if (kind < 70 && !live.empty()) { // decode a few tokens
            Live& s = live[static_cast<size_t>(pick(static_cast<int>(live.size())))];
            for (int j = 1 + pick(6); j > 0 && !s.frozen; --j) {
                if (s.tokens.size() % kBs == 0) {
                    const auto more = m.allocate(1);
                    if (!more) break;
                    s.blocks.push_back((*more)[0]);
                }
                s.tokens.push_back(pick(3));
                write(s);
                publishFull(s);
            }
        } else if (kind < 75 && !live.empty() && live.size() < 8) { // fork
            Live copy = live[static_cast<size_t>(pick(static_cast<int>(live.size())))];
            for (int32_t b : copy.blocks) m.retain(b);
            if (copy.tokens.size() % kBs != 0) {
                copy.frozen = true;
                for (Live& s : live)
                    if (s.blocks.back() == copy.blocks.back()) s.frozen = true;
            }
            live.push_back(copy);
        } else if (kind < 99 && !live.empty()) { // finish
            const size_t i = static_cast<size_t>(pick(static_cast<int>(live.size())));
            m.release(live[i].blocks);
            live.erase(live.begin() + static_cast<ptrdiff_t>(i));
        } else if (kind == 99) {
            m.clearCache();
        }
        ASSERT_NO_THROW(m.checkInvariants()) << "op " << op;
        const auto refs = refsOf();
        int32_t used = 0;
        for (int32_t b = 0; b < kBlocks; ++b) {
            ASSERT_EQ(m.refCount(b), refs[static_cast<size_t>(b)]) << "block " << b << " op " << op;
            used += refs[static_cast<size_t>(b)] > 0 ? 1 : 0;
        }
        ASSERT_EQ(m.usedBlocks(), used);
        ASSERT_EQ(m.freeBlocks() + m.cachedFreeBlocks() + m.usedBlocks(), kBlocks);
    }
    EXPECT_EQ(m.queries(), queries);
    EXPECT_EQ(m.hits(), hits);
    *hitsOut = hits;
}

} // namespace

TEST(KvBlockManager, RandomizedAgainstReferenceModel) {
    uint64_t hits = 0;
    stress(&KvBlockManager::chainHash, 1234, &hits);
    EXPECT_GT(hits, 1000u); // the workload shares prefixes: the cache was exercised
}

TEST(KvBlockManager, RandomizedWithCollidingHashNeverServesWrongKv) {
    uint64_t hits = 0;
    stress(&tinyHash, 99, &hits); // 8 chain values for everything
    EXPECT_GT(hits, 0u);
}
