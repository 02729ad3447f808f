// Allocation of block-organised key/value storage.
#include "engine/kv_cache.h"

#include <stdexcept>
#include <string>

namespace mb::engine {

KvCache::KvCache(const LlamaConfig& config, int64_t blocks, int64_t blockSize, KvStorage storage)
    : m_layers(config.layers), m_blocks(blocks), m_blockSize(blockSize), m_kvDim(config.kvDim()), m_storage(storage) {
    if (blocks <= 0 || blockSize <= 0)
        throw std::invalid_argument("KV cache needs at least one block of at least one position");
    if (storage == KvStorage::Device) return; // the backend attaches device storage on first use
    const auto floats = static_cast<size_t>(m_layers * m_blocks * m_blockSize * m_kvDim);
    m_keys.assign(floats, 0.0f);
    m_values.assign(floats, 0.0f);
}

} // namespace mb::engine
