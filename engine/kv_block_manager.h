// Block ids of the fast mode's paged KV pool: reference counts, a free list and the prefix cache.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

namespace mb::engine {

// Manages `blocks` KV blocks of `blockSize` positions: reference counts, a free list, and
// (when prefixCaching) a prefix cache of full blocks keyed by a hash chain.
// Not thread-safe: owned by the session's engine thread. It hands out block ids only; the
// K/V storage itself is KvCache's, indexed by the same ids.
//
// Every block is in exactly one state:
//   free   - reference count 0, holds no cached content, on the free stack;
//   cached - reference count 0, serves a cached prefix block, on the LRU list (evictable);
//   used   - reference count >= 1 (held by one or more sequences).
//
// The cache. A published full block is keyed by its chain value
//   h(i) = chainHash(h(i-1), tokens of block i),  h(-1) = 0,
// so one value stands for the block's tokens AND everything before it. Each distinct cached
// content is an entry holding its chain value, its parent's value, the identity (a serial
// number) of the parent entry it was published under, its blockSize tokens, the block that
// serves lookups, and how many held blocks carry this content. A lookup accepts an entry only
// when its parent value, parent serial and tokens all equal the query's, so a 64-bit hash
// collision (in this block or in any block before it) can cost a hit but never return wrong
// KV. A publish that cannot be verified (its content collides with a different entry, or its
// parent is unknown or ambiguous) leaves the block "untrusted": it is not cached, and while
// it is held nothing is published under its chain value.
//
// Eviction order: allocate() evicts from the least recently used end. release() walks its
// span back to front, so a sequence's first block becomes the most recently used and its
// tail is evicted first (a parent evicted before its child would be harmless - lookups stop
// at the first missing block - but it would waste the child).
//
// Cost: acquirePrefix O(matched blocks x blockSize); allocate O(count); publish O(blockSize);
// release O(blocks released); retain, refCount and the counts O(1); clearCache O(cache
// entries). Never O(pool size), except checkInvariants(). Memory: a few words per block, plus
// blocks x blockSize tokens when prefix caching is on.
class KvBlockManager {
public:
    // A chain hash: (parent value, blockSize tokens) -> value. 0 results are remapped.
    using HashFunction = uint64_t (*)(uint64_t parentHash, std::span<const int32_t> blockTokens);

    // Throws std::logic_error unless blocks >= 1 and blockSize >= 1.
    KvBlockManager(int32_t blocks, int32_t blockSize, bool prefixCaching);
    // For tests: a deliberately weak `hash` forces collisions to exercise verification.
    KvBlockManager(int32_t blocks, int32_t blockSize, bool prefixCaching, HashFunction hash);

    int32_t blockSize() const { return m_blockSize; }
    int32_t capacity() const { return m_blocks; }
    int32_t freeBlocks() const { return static_cast<int32_t>(m_free.size()); } // free state
    int32_t cachedFreeBlocks() const { return m_lruSize; } // unreferenced, evictable (LRU)
    int32_t usedBlocks() const { return m_used; }          // referenced by a sequence
    bool prefixCaching() const { return m_prefixCaching; }

    struct Match {
        std::vector<int32_t> blocks; // block i covers tokens [i*bs, (i+1)*bs)
        int64_t tokens = 0;          // blocks.size() * blockSize
        uint64_t lastHash = 0;       // chain value of the last matched block; 0 when none
    };
    // Longest run of cached FULL blocks that prefix `tokens`. Each matched block gains a
    // reference (so it cannot be evicted while the sequence uses it) and leaves the LRU list.
    // Counts queries += tokens.size() and hits += matched tokens; with prefix caching off it
    // returns an empty match and counts nothing. Pass the prompt WITHOUT its last token so
    // at least one token is computed.
    Match acquirePrefix(std::span<const int32_t> tokens);

    // True when `count` blocks can be allocated now (free + evictable cached).
    bool canAllocate(int32_t count) const;
    // `count` blocks with reference count 1 each: from the free stack first, then by
    // evicting the least recently used cached blocks (their cache entries go with them).
    // nullopt, and nothing changed, when not enough blocks exist. count < 0 throws.
    std::optional<std::vector<int32_t>> allocate(int32_t count);

    // Registers `block`, which has just become FULL with the KV of `blockTokens` (exactly
    // blockSize tokens) after preceding blocks whose chain value is `parentHash` (0 for the
    // first block). Returns this block's chain value (the parentHash of the next block).
    // If another block already holds this content, lookups keep being served by that block
    // (the caller keeps using its own; no copy). Publishing the same block again with the
    // same content is a no-op; with other content it throws. With prefix caching off only
    // the value is computed. Preconditions (throw std::logic_error): a valid block held by
    // the caller, blockSize tokens. For caching to happen the caller must still hold the
    // block that `parentHash` came from (always true for a sequence publishing in order).
    uint64_t publish(uint64_t parentHash, std::span<const int32_t> blockTokens, int32_t block);

    // Drops one reference from each block (a finished or cancelled sequence; a block may
    // appear several times). A block reaching zero becomes cached if it serves a cache
    // entry, else free. Processed back to front: see "Eviction order" above. Throws, with
    // nothing changed, on a bad id or when a block would drop below zero references.
    void release(std::span<const int32_t> blocks);
    // One more reference to a block that is already held (e.g. a forked sequence).
    void retain(int32_t block);
    int32_t refCount(int32_t block) const;
    // True when cache lookups of this block's content return this very block.
    bool isPublished(int32_t block) const;

    // Forgets every cached prefix: cached blocks return to the free stack; held blocks stay
    // allocated but are unpublished and become untrusted, so K/V computed before the flush
    // (e.g. with old weights) never re-enters the cache. While such sequences live, blocks
    // under their chain values are not cached by others either (safe; a little hit rate is
    // lost until they finish). For model reloads and the explicit "flush cache" action.
    void clearCache();

    uint64_t queries() const { return m_queries; } // monotonic token counters
    uint64_t hits() const { return m_hits; }

    // Throws std::logic_error naming the first broken internal invariant. O(pool size): tests.
    void checkInvariants() const;

    // The default chain hash: splitmix64's finaliser (a bijection on 64 bits) applied as
    //   h = mix(parent ^ kSeed); for each token t: h = mix(h ^ (uint32(t) + kGamma));
    //   h = mix(h ^ count).
    // Each step is a bijection of h, so for fixed tokens distinct parents never collide, and
    // blocks that differ in a single token under the same parent never collide (up to the
    // remapping of a 0 result: 0 is reserved for "no parent"). Never 0.
    static uint64_t chainHash(uint64_t parentHash, std::span<const int32_t> blockTokens);

private:
    enum class State : uint8_t { Free, Cached, Used };
    enum class HoldKind : uint8_t { None, Entry, Untrusted };
    // What a block carries: a cache entry (valid while the entry's serial still matches;
    // a stale one counts as untrusted) or an unverifiable chain value.
    struct Hold {
        HoldKind kind = HoldKind::None;
        uint64_t value = 0;
        int32_t entry = -1;
        uint64_t serial = 0;
    };
    // One distinct cached content; slots are reused, `serial` is unique over all time.
    struct Entry {
        uint64_t value = 0;
        uint64_t parent = 0;
        uint64_t parentSerial = 0; // 0: the first block of a sequence
        uint64_t serial = 0;       // 0: slot unused
        int32_t served = -1;       // block lookups return; -1 while none (only copies held)
        int32_t holders = 0;       // blocks whose hold names this entry (served included)
    };

    void checkBlock(int32_t block, const char* operation) const;
    uint64_t hashOf(uint64_t parent, std::span<const int32_t> tokens) const;
    bool entryTokensEqual(int32_t entry, std::span<const int32_t> tokens) const;
    bool holdsLiveEntry(int32_t block) const;
    void lruPushBack(int32_t block);
    void lruUnlink(int32_t block);
    void dropHold(int32_t block);
    void onUnreferenced(int32_t block);
    void retireEntry(int32_t entry);
    void makeUntrusted(int32_t block, uint64_t value);

    int32_t m_blocks;
    int32_t m_blockSize;
    bool m_prefixCaching;
    HashFunction m_hash;

    // Per block.
    std::vector<int32_t> m_refs;
    std::vector<State> m_state;
    std::vector<Hold> m_holds;
    std::vector<int32_t> m_prev; // LRU links, -1 at the ends
    std::vector<int32_t> m_next;
    int32_t m_lruHead = -1; // least recently used: evicted first
    int32_t m_lruTail = -1; // most recently used
    int32_t m_lruSize = 0;
    std::vector<int32_t> m_free; // stack
    int32_t m_used = 0;

    // Cache entries: at most one per block holding it, so `blocks` slots suffice.
    std::vector<Entry> m_entries;
    std::vector<int32_t> m_entryTokens; // (blocks, blockSize), by entry slot
    std::vector<int32_t> m_freeEntries;
    std::unordered_map<uint64_t, int32_t> m_index;     // chain value -> entry slot
    std::unordered_map<uint64_t, int32_t> m_untrusted; // chain value -> blocks holding it
    uint64_t m_nextSerial = 1;

    uint64_t m_queries = 0;
    uint64_t m_hits = 0;
};

} // namespace mb::engine
