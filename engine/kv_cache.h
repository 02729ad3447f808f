// Key/value storage for attention, organised in fixed-size blocks of positions.
#pragma once

#include "engine/model_config.h"
#include "engine/profile.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace mb::engine {

// Where a cache keeps its K/V: in host memory (the CPU forward pass), or only on a device,
// where the backend that runs it attaches the storage as a KvMirror.
enum class KvStorage { Host, Device };

// What a host cache stores K and V as. F16 halves the cache's bytes (and attention's memory
// traffic); scores and sums still accumulate in F32.
enum class KvType { F32, F16 };

// The type a session computing at `precision` keeps its K/V in: F16 for `mixed` and `f16`
// (PRODUCT.md §1: F16 attention) in host memory; F32 for the others, and always F32 on a
// device (the CUDA kernels read F32).
KvType kvTypeFor(Precision precision, KvStorage storage);

// Bytes one K or V element takes.
inline uint64_t kvElementBytes(KvType type) { return type == KvType::F16 ? 2u : 4u; }

// A backend's own copy of a cache's storage (e.g. device memory of the same geometry),
// owned by the cache so that it lives and dies with it.
class KvMirror {
public:
    virtual ~KvMirror() = default;
};

// `blocks` blocks of `blockSize` positions for every layer, K and V in F32 or F16 (KvType).
// Layout per layer: (blocks, blockSize, kvDim), so one block of one layer is contiguous.
// A sequence owns a block table: logical block i holds its positions
// [i * blockSize, (i + 1) * blockSize). Storage is allocated once in the constructor.
// Not thread-safe; the forward pass writes positions of the sequence it runs.
class KvCache {
public:
    KvCache(const ModelConfig& config, int64_t blocks, int64_t blockSize, KvStorage storage = KvStorage::Host,
            KvType type = KvType::F32);

    int64_t blocks() const { return m_blocks; }
    int64_t blockSize() const { return m_blockSize; }
    int64_t kvDim() const { return m_kvDim; }
    int64_t layers() const { return m_layers; }
    KvStorage storage() const { return m_storage; }
    KvType type() const { return m_type; }
    // Bytes of K and V storage (wherever it lives).
    uint64_t bytes() const { return static_cast<uint64_t>(m_blocks * m_blockSize) * bytesPerPosition(); }
    // Bytes one position takes across all layers (K and V).
    uint64_t bytesPerPosition() const {
        return static_cast<uint64_t>(m_layers * m_kvDim * 2) * kvElementBytes(m_type);
    }

    // The storage a device backend attached (null until it runs this cache). Set once by
    // the thread that runs the forward pass.
    KvMirror* mirror() const { return m_mirror.get(); }
    void setMirror(std::unique_ptr<KvMirror> mirror) { m_mirror = std::move(mirror); }

    // (blockSize, kvDim) elements of layer `layer`, block `block`. Host storage only; the
    // float accessors for KvType::F32, the uint16_t (IEEE half) ones for KvType::F16.
    float* keys(int64_t layer, int64_t block) { return m_keys.data() + offset(layer, block); }
    float* values(int64_t layer, int64_t block) { return m_values.data() + offset(layer, block); }
    uint16_t* keysF16(int64_t layer, int64_t block) { return m_keys16.data() + offset(layer, block); }
    uint16_t* valuesF16(int64_t layer, int64_t block) { return m_values16.data() + offset(layer, block); }

private:
    size_t offset(int64_t layer, int64_t block) const {
        return static_cast<size_t>((layer * m_blocks + block) * m_blockSize * m_kvDim);
    }
    int64_t m_layers;
    int64_t m_blocks;
    int64_t m_blockSize;
    int64_t m_kvDim;
    KvStorage m_storage;
    KvType m_type;
    std::vector<float> m_keys; // KvType::F32 in host memory, else empty
    std::vector<float> m_values;
    std::vector<uint16_t> m_keys16; // KvType::F16 in host memory, else empty
    std::vector<uint16_t> m_values16;
    std::unique_ptr<KvMirror> m_mirror;
};

// Blocks needed to hold `positions` positions.
inline int64_t blocksFor(int64_t positions, int64_t blockSize) {
    return (positions + blockSize - 1) / blockSize;
}

} // namespace mb::engine
