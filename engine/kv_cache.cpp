// Allocation of block-organised key/value storage.
#include "engine/kv_cache.h"

#include "engine/memory_limit.h"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace mb::engine {

KvType kvTypeFor(Precision precision, KvStorage storage) {
    const bool half = precision == Precision::Mixed || precision == Precision::F16;
    return half && storage == KvStorage::Host ? KvType::F16 : KvType::F32;
}

KvCache::KvCache(const ModelConfig& config, int64_t blocks, int64_t blockSize, KvStorage storage, KvType type)
    : m_layers(config.layers), m_blocks(blocks), m_blockSize(blockSize), m_kvDim(config.kvDim()), m_storage(storage),
      m_type(type) {
    if (blocks <= 0 || blockSize <= 0)
        throw std::invalid_argument("KV cache needs at least one block of at least one position");
    if (storage == KvStorage::Device && type != KvType::F32)
        throw std::invalid_argument("a KV cache in device memory is F32");
    if (storage == KvStorage::Device) return; // the backend attaches device storage on first use
    // Checked in doubles, before any size_t arithmetic can wrap: an absurd pool size or
    // context is a clear error here, not an overcommitted allocation that fails later.
    const double bytes = 2.0 * static_cast<double>(m_layers) * static_cast<double>(m_blocks) *
                         static_cast<double>(m_blockSize) * static_cast<double>(m_kvDim) *
                         static_cast<double>(kvElementBytes(type));
    if (const uint64_t limit = memoryLimitBytes(); limit > 0 && bytes > static_cast<double>(limit)) {
        char why[160];
        std::snprintf(why, sizeof why, "the KV cache needs %.1f GiB (%lld blocks of %lld positions) but this process may use %.1f GiB",
                      bytes / (1u << 30), static_cast<long long>(blocks), static_cast<long long>(blockSize),
                      static_cast<double>(limit) / (1u << 30));
        throw std::length_error(why);
    }
    const auto elements = static_cast<size_t>(m_layers * m_blocks * m_blockSize * m_kvDim);
    if (type == KvType::F16) {
        m_keys16.assign(elements, 0);
        m_values16.assign(elements, 0);
    } else {
        m_keys.assign(elements, 0.0f);
        m_values.assign(elements, 0.0f);
    }
}

} // namespace mb::engine
