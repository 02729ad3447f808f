// KvBlockManager: free stack, intrusive LRU list over block ids, and the verified prefix cache.
#include "engine/kv_block_manager.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mb::engine {

namespace {

constexpr int32_t kNone = -1;
constexpr uint64_t kSeed = 0x9e3779b97f4a7c15ull;  // golden-ratio constant, as in splitmix64
constexpr uint64_t kGamma = 0xd1b54a32d192ed03ull; // odd constant keeps token 0 from vanishing
constexpr uint64_t kZeroStandIn = 0x6a09e667f3bcc909ull; // 0 means "no parent": never a value

// splitmix64's finaliser: a bijection with full avalanche (each input bit flips ~half).
uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

[[noreturn]] void fail(const std::string& what) {
    throw std::logic_error("KvBlockManager: " + what);
}

} // namespace

uint64_t KvBlockManager::chainHash(uint64_t parentHash, std::span<const int32_t> blockTokens) {
    uint64_t h = mix64(parentHash ^ kSeed);
    for (const int32_t t : blockTokens)
        h = mix64(h ^ (uint64_t{static_cast<uint32_t>(t)} + kGamma));
    h = mix64(h ^ blockTokens.size());
    return h == 0 ? kZeroStandIn : h;
}

KvBlockManager::KvBlockManager(int32_t blocks, int32_t blockSize, bool prefixCaching)
    : KvBlockManager(blocks, blockSize, prefixCaching, &KvBlockManager::chainHash) {}

KvBlockManager::KvBlockManager(int32_t blocks, int32_t blockSize, bool prefixCaching,
                               HashFunction hash)
    : m_blocks(blocks), m_blockSize(blockSize), m_prefixCaching(prefixCaching), m_hash(hash) {
    if (blocks < 1 || blockSize < 1)
        fail("needs at least one block of at least one position (got " + std::to_string(blocks) +
             " blocks of " + std::to_string(blockSize) + ")");
    if (hash == nullptr) fail("null hash function");
    const auto n = static_cast<size_t>(blocks);
    m_refs.assign(n, 0);
    m_state.assign(n, State::Free);
    m_holds.assign(n, Hold{});
    m_prev.assign(n, kNone);
    m_next.assign(n, kNone);
    // Popping from the back hands out 0, 1, 2, ... first: deterministic and easy to read.
    m_free.reserve(n);
    for (int32_t b = blocks - 1; b >= 0; --b) m_free.push_back(b);
    if (prefixCaching) {
        m_entries.assign(n, Entry{});
        m_entryTokens.assign(n * static_cast<size_t>(blockSize), 0);
        m_freeEntries.reserve(n);
        for (int32_t e = blocks - 1; e >= 0; --e) m_freeEntries.push_back(e);
        m_index.reserve(n);
    }
}

void KvBlockManager::checkBlock(int32_t block, const char* operation) const {
    if (block < 0 || block >= m_blocks)
        fail(std::string(operation) + ": block id " + std::to_string(block) + " outside [0, " +
             std::to_string(m_blocks) + ")");
}

uint64_t KvBlockManager::hashOf(uint64_t parent, std::span<const int32_t> tokens) const {
    const uint64_t h = m_hash(parent, tokens);
    return h == 0 ? kZeroStandIn : h;
}

bool KvBlockManager::entryTokensEqual(int32_t entry, std::span<const int32_t> tokens) const {
    const auto* stored = m_entryTokens.data() + static_cast<size_t>(entry) * m_blockSize;
    return std::equal(tokens.begin(), tokens.end(), stored);
}

bool KvBlockManager::holdsLiveEntry(int32_t block) const {
    const Hold& h = m_holds[block];
    return h.kind == HoldKind::Entry && m_entries[h.entry].serial == h.serial;
}

void KvBlockManager::lruPushBack(int32_t block) {
    m_prev[block] = m_lruTail;
    m_next[block] = kNone;
    if (m_lruTail != kNone)
        m_next[m_lruTail] = block;
    else
        m_lruHead = block;
    m_lruTail = block;
    ++m_lruSize;
}

void KvBlockManager::lruUnlink(int32_t block) {
    const int32_t p = m_prev[block];
    const int32_t n = m_next[block];
    if (p != kNone)
        m_next[p] = n;
    else
        m_lruHead = n;
    if (n != kNone)
        m_prev[n] = p;
    else
        m_lruTail = p;
    m_prev[block] = kNone;
    m_next[block] = kNone;
    --m_lruSize;
}

void KvBlockManager::makeUntrusted(int32_t block, uint64_t value) {
    m_holds[block] = Hold{HoldKind::Untrusted, value, kNone, 0};
    ++m_untrusted[value];
}

// The block stops carrying content: its entry loses a holder (and dies with its last one),
// or the untrusted count of its value drops.
void KvBlockManager::dropHold(int32_t block) {
    Hold& h = m_holds[block];
    if (h.kind == HoldKind::None) return;
    if (holdsLiveEntry(block)) {
        Entry& e = m_entries[h.entry];
        if (e.served == block) e.served = kNone;
        if (--e.holders == 0) {
            m_index.erase(e.value);
            e.serial = 0;
            m_freeEntries.push_back(h.entry);
        }
    } else {
        auto it = m_untrusted.find(h.value);
        if (it == m_untrusted.end() || it->second <= 0) fail("untrusted count out of step");
        if (--it->second == 0) m_untrusted.erase(it);
    }
    h = Hold{};
}

// The block's last reference just went. It keeps serving its entry from the LRU list (or
// starts to, when the entry's serving block was evicted while this copy was held); a
// duplicate copy or uncached block goes back to the free stack.
void KvBlockManager::onUnreferenced(int32_t block) {
    --m_used;
    if (holdsLiveEntry(block)) {
        Entry& e = m_entries[m_holds[block].entry];
        if (e.served == kNone) e.served = block;
        if (e.served == block) {
            m_state[block] = State::Cached;
            lruPushBack(block);
            return;
        }
    }
    dropHold(block);
    m_state[block] = State::Free;
    m_free.push_back(block);
}

// Removes an entry from the cache: its cached block is freed, blocks still held with it
// become untrusted (their sequences may still publish under its value). The caller erases
// the index entry.
void KvBlockManager::retireEntry(int32_t entry) {
    Entry& e = m_entries[entry];
    int32_t stillHeld = e.holders;
    if (e.served != kNone && m_refs[e.served] == 0) {
        const int32_t b = e.served;
        lruUnlink(b);
        m_holds[b] = Hold{};
        m_state[b] = State::Free;
        m_free.push_back(b);
        --stillHeld;
    }
    if (stillHeld > 0) m_untrusted[e.value] += stillHeld; // their holds go stale below
    e = Entry{};
    m_freeEntries.push_back(entry);
}

KvBlockManager::Match KvBlockManager::acquirePrefix(std::span<const int32_t> tokens) {
    Match match;
    if (!m_prefixCaching) return match;
    m_queries += tokens.size();
    const size_t bs = static_cast<size_t>(m_blockSize);
    uint64_t parent = 0;
    uint64_t parentSerial = 0;
    for (size_t i = 0; (i + 1) * bs <= tokens.size(); ++i) {
        const auto block = tokens.subspan(i * bs, bs);
        const uint64_t value = hashOf(parent, block);
        const auto it = m_index.find(value);
        if (it == m_index.end()) break;
        const Entry& e = m_entries[it->second];
        // Verification: a hash hit alone proves nothing.
        if (e.served == kNone || e.parent != parent || e.parentSerial != parentSerial ||
            !entryTokensEqual(it->second, block))
            break;
        match.blocks.push_back(e.served);
        parent = value;
        parentSerial = e.serial;
    }
    for (const int32_t b : match.blocks) {
        if (m_refs[b] == 0) {
            lruUnlink(b);
            m_state[b] = State::Used;
            ++m_used;
        }
        ++m_refs[b];
    }
    match.tokens = static_cast<int64_t>(match.blocks.size()) * m_blockSize;
    match.lastHash = parent;
    m_hits += static_cast<uint64_t>(match.tokens);
    return match;
}

bool KvBlockManager::canAllocate(int32_t count) const {
    if (count < 0) fail("canAllocate: negative count " + std::to_string(count));
    return count <= freeBlocks() + m_lruSize;
}

std::optional<std::vector<int32_t>> KvBlockManager::allocate(int32_t count) {
    if (!canAllocate(count)) return std::nullopt;
    std::vector<int32_t> out;
    out.reserve(static_cast<size_t>(count));
    for (int32_t i = 0; i < count; ++i) {
        int32_t b;
        if (!m_free.empty()) {
            b = m_free.back();
            m_free.pop_back();
        } else {
            b = m_lruHead;
            lruUnlink(b);
            dropHold(b);
        }
        m_refs[b] = 1;
        m_state[b] = State::Used;
        ++m_used;
        out.push_back(b);
    }
    return out;
}

uint64_t KvBlockManager::publish(uint64_t parentHash, std::span<const int32_t> blockTokens,
                                 int32_t block) {
    checkBlock(block, "publish");
    if (blockTokens.size() != static_cast<size_t>(m_blockSize))
        fail("publish: block " + std::to_string(block) + " given " +
             std::to_string(blockTokens.size()) + " tokens, block size is " +
             std::to_string(m_blockSize));
    if (m_refs[block] == 0)
        fail("publish: block " + std::to_string(block) + " is not held by any sequence");
    const uint64_t value = hashOf(parentHash, blockTokens);
    if (!m_prefixCaching) return value;
    if (m_holds[block].kind != HoldKind::None) {
        if (m_holds[block].value == value) return value;
        fail("publish: block " + std::to_string(block) +
             " was already published with other content");
    }

    // The parent entry must be the one live entry for parentHash, with no held block
    // carrying that value unverified; otherwise the chain cannot be trusted.
    uint64_t parentSerial = 0;
    if (parentHash != 0) {
        const auto parentIt = m_index.find(parentHash);
        if (parentIt == m_index.end() || m_untrusted.contains(parentHash)) {
            makeUntrusted(block, value);
            return value;
        }
        parentSerial = m_entries[parentIt->second].serial;
    }

    if (const auto it = m_index.find(value); it != m_index.end()) {
        Entry& e = m_entries[it->second];
        const bool sameBlock = e.parent == parentHash && entryTokensEqual(it->second, blockTokens);
        if (sameBlock && e.parentSerial == parentSerial) {
            // The same content is cached already: keep serving it from its block.
            ++e.holders;
            if (e.served == kNone) e.served = block;
            m_holds[block] = Hold{HoldKind::Entry, value, it->second, e.serial};
            return value;
        }
        if (!sameBlock) { // a genuine collision of chain values
            makeUntrusted(block, value);
            return value;
        }
        // Same tokens, but cached under an earlier instance of the parent that has since
        // been evicted: a stale entry nobody can reach. Replace it.
        retireEntry(it->second);
        m_index.erase(it);
    }

    const int32_t slot = m_freeEntries.back(); // one entry per holding block: never empty here
    m_freeEntries.pop_back();
    Entry& e = m_entries[slot];
    e = Entry{value, parentHash, parentSerial, m_nextSerial++, block, 1};
    std::copy(blockTokens.begin(), blockTokens.end(),
              m_entryTokens.begin() + static_cast<ptrdiff_t>(slot) * m_blockSize);
    m_index.emplace(value, slot);
    m_holds[block] = Hold{HoldKind::Entry, value, slot, e.serial};
    return value;
}

void KvBlockManager::release(std::span<const int32_t> blocks) {
    // Validate by decrementing, undoing on failure, so a bad call changes nothing.
    for (size_t i = 0; i < blocks.size(); ++i) {
        const int32_t b = blocks[i];
        if (b < 0 || b >= m_blocks || m_refs[b] == 0) {
            for (size_t j = 0; j < i; ++j) ++m_refs[blocks[j]];
            if (b < 0 || b >= m_blocks) checkBlock(b, "release");
            fail("release: block " + std::to_string(b) + " has no reference left to drop");
        }
        --m_refs[b];
    }
    // Back to front: the first block ends up most recently used, the tail is evicted first.
    for (size_t i = blocks.size(); i-- > 0;) {
        const int32_t b = blocks[i];
        if (m_refs[b] == 0 && m_state[b] == State::Used) onUnreferenced(b);
    }
}

void KvBlockManager::retain(int32_t block) {
    checkBlock(block, "retain");
    if (m_refs[block] == 0)
        fail("retain: block " + std::to_string(block) + " is not held (allocate or acquire it)");
    ++m_refs[block];
}

int32_t KvBlockManager::refCount(int32_t block) const {
    checkBlock(block, "refCount");
    return m_refs[block];
}

bool KvBlockManager::isPublished(int32_t block) const {
    checkBlock(block, "isPublished");
    return holdsLiveEntry(block) && m_entries[m_holds[block].entry].served == block;
}

void KvBlockManager::clearCache() {
    for (const auto& [value, slot] : m_index) retireEntry(slot);
    m_index.clear();
}

void KvBlockManager::checkInvariants() const {
    auto broken = [](const std::string& what) { fail("invariant broken: " + what); };
    int32_t used = 0;
    std::vector<int32_t> holders(m_entries.size(), 0);
    std::unordered_map<uint64_t, int32_t> untrusted;
    for (int32_t b = 0; b < m_blocks; ++b) {
        const std::string id = "block " + std::to_string(b);
        if (m_refs[b] < 0) broken(id + " has a negative reference count");
        if ((m_refs[b] > 0) != (m_state[b] == State::Used)) broken(id + " state/refcount mismatch");
        used += m_state[b] == State::Used ? 1 : 0;
        const Hold& h = m_holds[b];
        if (holdsLiveEntry(b))
            ++holders[h.entry];
        else if (h.kind != HoldKind::None)
            ++untrusted[h.value];
        if (m_state[b] == State::Free && h.kind != HoldKind::None)
            broken(id + " is free but holds content");
        if (m_state[b] == State::Cached && !isPublished(b))
            broken(id + " is cached but serves no entry");
    }
    if (used != m_used) broken("used count");
    if (untrusted != m_untrusted) broken("untrusted counts");
    if (freeBlocks() + m_lruSize + m_used != m_blocks) broken("free + cached + used != capacity");
    std::vector<char> seen(static_cast<size_t>(m_blocks), 0);
    for (const int32_t b : m_free) {
        if (m_state[b] != State::Free || seen[b])
            broken("free stack holds block " + std::to_string(b));
        seen[b] = 1;
    }
    int32_t walked = 0;
    for (int32_t b = m_lruHead, prev = kNone; b != kNone; prev = b, b = m_next[b]) {
        if (m_prev[b] != prev || m_state[b] != State::Cached || ++walked > m_lruSize)
            broken("LRU list at block " + std::to_string(b));
        if (m_next[b] == kNone && b != m_lruTail) broken("LRU tail");
    }
    if (walked != m_lruSize) broken("LRU size");
    size_t live = 0;
    for (size_t s = 0; s < m_entries.size(); ++s) {
        const Entry& e = m_entries[s];
        if (e.serial == 0) continue;
        ++live;
        const auto it = m_index.find(e.value);
        if (it == m_index.end() || it->second != static_cast<int32_t>(s))
            broken("index misses an entry");
        if (e.holders != holders[s] || e.holders == 0) broken("entry holder count");
        if (e.served != kNone && !isPublished(e.served)) broken("entry served by a non-holder");
    }
    if (live != m_index.size() || live + m_freeEntries.size() != m_entries.size())
        broken("entry slots");
}

} // namespace mb::engine
