// GgufWriter: builds the header in memory, then streams each tensor's bytes to a temp file.
#include "engine/gguf.h"
#include "engine/quote.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <sstream>

namespace mb::engine {

namespace {

constexpr uint64_t kDefaultAlignment = 32;
constexpr size_t kMaxDims = 4;
constexpr std::string_view kAlignmentKey = "general.alignment";
constexpr size_t kFileBufferBytes = size_t{1} << 20;

template <typename... Parts> std::string msg(const Parts&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    return os.str();
}

// Little-endian header bytes; counts and lengths are u32 in version 1, u64 after.
class HeaderBuffer {
public:
    explicit HeaderBuffer(uint32_t version) : m_wide(version >= 2) {}

    template <typename T> void put(T v) {
        static_assert(std::endian::native == std::endian::little);
        const auto* p = reinterpret_cast<const uint8_t*>(&v);
        m_bytes.insert(m_bytes.end(), p, p + sizeof(T));
    }

    void count(uint64_t n, std::string_view what) {
        if (m_wide) {
            put<uint64_t>(n);
            return;
        }
        if (n > std::numeric_limits<uint32_t>::max())
            throw GgufError(msg(what, " ", n, " does not fit GGUF version 1 (u32)"));
        put<uint32_t>(static_cast<uint32_t>(n));
    }

    void string(std::string_view s) {
        count(s.size(), "string length");
        m_bytes.insert(m_bytes.end(), s.begin(), s.end());
    }

    bool wide() const { return m_wide; }
    const std::vector<uint8_t>& bytes() const { return m_bytes; }

private:
    bool m_wide;
    std::vector<uint8_t> m_bytes;
};

template <typename T> T narrowUnsigned(const GgufValue& v) {
    uint64_t u = v.asUInt();
    if (u > std::numeric_limits<T>::max())
        throw GgufError(msg("value ", u, " does not fit ", ggufValueTypeName(v.type)));
    return static_cast<T>(u);
}

template <typename T> T narrowSigned(const GgufValue& v) {
    int64_t i = v.asInt();
    if (i < std::numeric_limits<T>::min() || i > std::numeric_limits<T>::max())
        throw GgufError(msg("value ", i, " does not fit ", ggufValueTypeName(v.type)));
    return static_cast<T>(i);
}

void putValue(HeaderBuffer& out, const GgufValue& v) {
    switch (v.type) {
    case GgufValueType::U8: out.put(narrowUnsigned<uint8_t>(v)); return;
    case GgufValueType::I8: out.put(narrowSigned<int8_t>(v)); return;
    case GgufValueType::U16: out.put(narrowUnsigned<uint16_t>(v)); return;
    case GgufValueType::I16: out.put(narrowSigned<int16_t>(v)); return;
    case GgufValueType::U32: out.put(narrowUnsigned<uint32_t>(v)); return;
    case GgufValueType::I32: out.put(narrowSigned<int32_t>(v)); return;
    case GgufValueType::U64: out.put(v.asUInt()); return;
    case GgufValueType::I64: out.put(v.asInt()); return;
    case GgufValueType::F32: out.put(static_cast<float>(v.asFloat())); return;
    case GgufValueType::F64: out.put(v.asFloat()); return;
    case GgufValueType::Bool: out.put<uint8_t>(v.asBool() ? 1 : 0); return;
    case GgufValueType::String: out.string(v.asString()); return;
    case GgufValueType::Array: {
        const GgufValue::Array& items = v.asArray();
        out.put(static_cast<uint32_t>(v.elementType));
        out.count(items.size(), "array length");
        for (const GgufValue& item : items) {
            if (item.type != v.elementType)
                throw GgufError(msg("array of ", ggufValueTypeName(v.elementType),
                                    " holds an element of type ", ggufValueTypeName(item.type)));
            putValue(out, item);
        }
        return;
    }
    }
    throw GgufError(msg("unknown value type ", static_cast<uint32_t>(v.type)));
}

uint64_t alignUp(uint64_t n, uint64_t alignment) {
    return (n + alignment - 1) / alignment * alignment;
}

// Owns the temp file while it is written; on failure the destructor closes and removes it.
class TempFile {
public:
    explicit TempFile(std::string path) : m_path(std::move(path)) {
        m_file = std::fopen(m_path.c_str(), "wb");
        if (!m_file) throw GgufError(msg(m_path, ": cannot create: ", std::strerror(errno)));
        std::setvbuf(m_file, nullptr, _IOFBF, kFileBufferBytes);
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        if (m_file) std::fclose(m_file);
        if (!m_committed) {
            std::error_code ec;
            std::filesystem::remove(m_path, ec);
        }
    }

    void write(const void* data, size_t n) {
        if (n > 0 && std::fwrite(data, 1, n, m_file) != n)
            throw GgufError(msg(m_path, ": write failed: ", std::strerror(errno)));
    }

    void zeros(uint64_t n) {
        static constexpr uint8_t kZeros[256] = {};
        while (n > 0) {
            size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, sizeof(kZeros)));
            write(kZeros, chunk);
            n -= chunk;
        }
    }

    void commitTo(const std::string& finalPath) {
        FILE* f = m_file;
        m_file = nullptr;
        if (std::fclose(f) != 0)
            throw GgufError(msg(m_path, ": close failed: ", std::strerror(errno)));
        std::error_code ec;
        std::filesystem::rename(m_path, finalPath, ec);
        if (ec) throw GgufError(msg(finalPath, ": cannot rename into place: ", ec.message()));
        m_committed = true;
    }

private:
    std::string m_path;
    FILE* m_file = nullptr;
    bool m_committed = false;
};

} // namespace

GgufWriter::GgufWriter(std::string path, uint32_t version, uint64_t alignment)
    : m_path(std::move(path)), m_version(version), m_alignment(alignment) {
    if (version < 1 || version > 3)
        throw GgufError(msg("unsupported GGUF version ", version, " for writing"));
    if (!std::has_single_bit(alignment) || alignment > std::numeric_limits<uint32_t>::max())
        throw GgufError(msg("bad alignment ", alignment, ": must be a power of two below 2^32"));
}

void GgufWriter::set(const std::string& key, GgufValue value) {
    if (key == kAlignmentKey) {
        // The layout follows the constructor's alignment, so a different value would lie.
        uint64_t requested = 0;
        try {
            requested = value.asUInt();
        } catch (const GgufError&) {
            throw GgufError(msg(kAlignmentKey, " must be an unsigned integer"));
        }
        if (requested != m_alignment)
            throw GgufError(msg(kAlignmentKey, " ", requested,
                                " differs from the writer's alignment ", m_alignment));
        value = GgufValue::u32(static_cast<uint32_t>(m_alignment));
    }
    for (auto& [k, v] : m_metadata) {
        if (k == key) {
            v = std::move(value);
            return;
        }
    }
    m_metadata.emplace_back(key, std::move(value));
}

void GgufWriter::addTensor(const std::string& name, kernels::TensorType type,
                           std::vector<uint64_t> shape, Producer producer) {
    for (const PendingTensor& t : m_tensors)
        if (t.name == name) throw GgufError(msg("duplicate tensor name ", quoteName(name)));
    if (shape.empty() || shape.size() > kMaxDims)
        throw GgufError(msg("tensor ", quoteName(name), " has ", shape.size(),
                            " dimensions; GGUF allows 1 to ", kMaxDims));
    uint64_t elements = 1;
    for (uint64_t d : shape) {
        if (d == 0) throw GgufError(msg("tensor ", quoteName(name), " has a zero dimension"));
        if (__builtin_mul_overflow(elements, d, &elements))
            throw GgufError(msg("tensor ", quoteName(name), " element count overflows"));
    }
    const auto block = static_cast<uint64_t>(kernels::blockSize(type));
    if (shape[0] % block != 0)
        throw GgufError(msg("tensor ", quoteName(name), " row length ", shape[0],
                            " is not a multiple of the block size ", block, " of ",
                            kernels::tensorTypeName(type)));
    uint64_t rowBytes = 0;
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(shape[0] / block, kernels::blockBytes(type), &rowBytes) ||
        __builtin_mul_overflow(rowBytes, elements / shape[0], &bytes) ||
        bytes > std::numeric_limits<uint64_t>::max() - m_alignment)
        throw GgufError(msg("tensor ", quoteName(name), " byte size overflows"));
    if (m_version == 1) {
        for (uint64_t d : shape)
            if (d > std::numeric_limits<uint32_t>::max())
                throw GgufError(msg("tensor ", quoteName(name), " dimension ", d,
                                    " does not fit GGUF version 1 (u32)"));
    }
    m_tensors.push_back({name, type, std::move(shape), bytes, std::move(producer)});
}

void GgufWriter::addTensor(const std::string& name, kernels::TensorType type,
                           std::vector<uint64_t> shape, std::span<const uint8_t> bytes) {
    addTensor(name, type, std::move(shape),
              [bytes](const Sink& sink) { sink(bytes.data(), bytes.size()); });
    if (m_tensors.back().bytes != bytes.size()) {
        uint64_t expected = m_tensors.back().bytes;
        m_tensors.pop_back();
        throw GgufError(msg("tensor ", quoteName(name), ": ", bytes.size(), " bytes given, ",
                            expected, " expected"));
    }
}

void GgufWriter::finish() {
    // The whole header is built first, so a bad value fails before any file exists.
    HeaderBuffer header(m_version);
    header.put<uint32_t>(0x46554747); // "GGUF"
    header.put<uint32_t>(m_version);
    bool alignmentSet = false;
    for (const auto& entry : m_metadata) alignmentSet |= entry.first == kAlignmentKey;
    const bool writeAlignment = !alignmentSet && m_alignment != kDefaultAlignment;
    header.count(m_tensors.size(), "tensor count");
    header.count(m_metadata.size() + (writeAlignment ? 1 : 0), "metadata count");
    if (writeAlignment) {
        header.string(kAlignmentKey);
        header.put(static_cast<uint32_t>(GgufValueType::U32));
        header.put(static_cast<uint32_t>(m_alignment));
    }
    for (const auto& [key, value] : m_metadata) {
        try {
            header.string(key);
            header.put(static_cast<uint32_t>(value.type));
            putValue(header, value);
        } catch (const GgufError& e) {
            throw GgufError(msg(m_path, ": metadata key ", quoteName(key), ": ", e.what()));
        }
    }
    // Each tensor starts aligned and is padded to the alignment, as ggml lays files out.
    uint64_t offset = 0;
    for (const PendingTensor& t : m_tensors) {
        header.string(t.name);
        header.put(static_cast<uint32_t>(t.shape.size()));
        for (uint64_t d : t.shape) {
            if (header.wide())
                header.put<uint64_t>(d);
            else
                header.put(static_cast<uint32_t>(d));
        }
        header.put(static_cast<uint32_t>(t.type));
        header.put<uint64_t>(offset);
        uint64_t padded = alignUp(t.bytes, m_alignment);
        if (__builtin_add_overflow(offset, padded, &offset))
            throw GgufError(msg(m_path, ": tensor data section size overflows"));
    }

    TempFile file(m_path + ".tmp");
    file.write(header.bytes().data(), header.bytes().size());
    file.zeros(alignUp(header.bytes().size(), m_alignment) - header.bytes().size());

    for (const PendingTensor& t : m_tensors) {
        uint64_t produced = 0;
        const Sink sink = [&](const void* data, size_t n) {
            if (n > t.bytes - produced)
                throw GgufError(msg(m_path, ": tensor ", quoteName(t.name),
                                    ": producer wrote more than the ", t.bytes, " bytes declared"));
            file.write(data, n);
            produced += n;
        };
        if (t.producer) t.producer(sink);
        if (produced != t.bytes)
            throw GgufError(msg(m_path, ": tensor ", quoteName(t.name), ": producer wrote ",
                                produced, " bytes, expected ", t.bytes));
        file.zeros(alignUp(t.bytes, m_alignment) - t.bytes);
    }
    file.commitTo(m_path);
}

} // namespace mb::engine
