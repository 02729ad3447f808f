// GgufFile: maps a GGUF file read-only and parses it with every read bounds-checked.
#include "engine/gguf.h"
#include "engine/quote.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <sstream>
#include <unordered_set>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mb::engine {

static_assert(std::endian::native == std::endian::little,
              "the GGUF reader copies little-endian fields straight into host integers");

namespace {

constexpr uint64_t kDefaultAlignment = 32;
constexpr uint32_t kMaxDims = 4;
// Real files nest arrays one level deep at most; the cap keeps recursion shallow.
constexpr int kMaxArrayDepth = 16;
constexpr std::string_view kAlignmentKey = "general.alignment";

template <typename... Parts> std::string msg(const Parts&... parts) {
    std::ostringstream os;
    (os << ... << parts);
    return os.str();
}

std::string shapeString(const std::vector<uint64_t>& shape) {
    std::ostringstream os;
    os << '[';
    for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
    os << ']';
    return os.str();
}

bool checkedMul(uint64_t a, uint64_t b, uint64_t& out) {
    return !__builtin_mul_overflow(a, b, &out);
}
bool checkedAdd(uint64_t a, uint64_t b, uint64_t& out) {
    return !__builtin_add_overflow(a, b, &out);
}

bool knownValueType(uint32_t id) {
    return id <= static_cast<uint32_t>(GgufValueType::F64);
}

// Bytes a value of fixed-size type occupies; 0 for strings and arrays.
uint64_t fixedSize(GgufValueType t) {
    switch (t) {
    case GgufValueType::U8:
    case GgufValueType::I8:
    case GgufValueType::Bool: return 1;
    case GgufValueType::U16:
    case GgufValueType::I16: return 2;
    case GgufValueType::U32:
    case GgufValueType::I32:
    case GgufValueType::F32: return 4;
    case GgufValueType::U64:
    case GgufValueType::I64:
    case GgufValueType::F64: return 8;
    default: return 0;
    }
}

// A forward-only reader over the header; throws "truncated header" on any short read.
class Cursor {
public:
    Cursor(const uint8_t* base, uint64_t size, uint32_t version)
        : m_base(base), m_size(size), m_version(version) {}

    uint64_t pos() const { return m_pos; }
    uint64_t remaining() const { return m_size - m_pos; }
    bool wideCounts() const { return m_version >= 2; }
    // Bytes of a count or string length field.
    uint64_t countBytes() const { return wideCounts() ? 8 : 4; }

    void need(uint64_t n) const {
        if (n > remaining())
            throw GgufError(msg("truncated header: need ", n, " bytes at offset ", m_pos,
                                ", file has ", m_size));
    }

    template <typename T> T read() {
        need(sizeof(T));
        T v;
        std::memcpy(&v, m_base + m_pos, sizeof(T));
        m_pos += sizeof(T);
        return v;
    }

    // A count or length: u32 in version 1, u64 after.
    uint64_t readCount() { return wideCounts() ? read<uint64_t>() : read<uint32_t>(); }

    std::string readString() {
        uint64_t at = m_pos;
        uint64_t len = readCount();
        if (len > remaining())
            throw GgufError(msg("truncated header: string length ", len, " at offset ", at,
                                " exceeds the ", remaining(), " bytes left in the file"));
        std::string s(reinterpret_cast<const char*>(m_base + m_pos), static_cast<size_t>(len));
        m_pos += len;
        return s;
    }

private:
    const uint8_t* m_base;
    uint64_t m_size;
    uint64_t m_pos = 0;
    uint32_t m_version;
};

GgufValue readValue(Cursor& c, GgufValueType type, int depth, const std::string& key);

GgufValue readArray(Cursor& c, int depth, const std::string& key) {
    if (depth >= kMaxArrayDepth)
        throw GgufError(msg("metadata key ", quoteName(key), ": array nesting deeper than ",
                            kMaxArrayDepth, " levels"));
    uint32_t elemId = c.read<uint32_t>();
    if (!knownValueType(elemId))
        throw GgufError(
            msg("metadata key ", quoteName(key), ": unknown array element value type ", elemId));
    auto elemType = static_cast<GgufValueType>(elemId);
    uint64_t count = c.readCount();
    // The smallest encoding of one element bounds how many the rest of the file can hold,
    // so an absurd count fails here instead of in a giant allocation.
    uint64_t minElem = fixedSize(elemType);
    if (elemType == GgufValueType::String) minElem = c.countBytes();
    if (elemType == GgufValueType::Array) minElem = 4 + c.countBytes();
    if (count > c.remaining() / minElem)
        throw GgufError(msg("metadata key ", quoteName(key), ": array length ", count,
                            " is larger than the file could hold (", c.remaining(),
                            " bytes left)"));
    GgufValue::Array items;
    items.reserve(static_cast<size_t>(count));
    for (uint64_t i = 0; i < count; ++i) items.push_back(readValue(c, elemType, depth + 1, key));
    GgufValue v;
    v.type = GgufValueType::Array;
    v.elementType = elemType;
    v.data = std::move(items);
    return v;
}

GgufValue readValue(Cursor& c, GgufValueType type, int depth, const std::string& key) {
    switch (type) {
    case GgufValueType::U8: return GgufValue::u8(c.read<uint8_t>());
    case GgufValueType::I8: return GgufValue::i8(c.read<int8_t>());
    case GgufValueType::U16: return GgufValue::u16(c.read<uint16_t>());
    case GgufValueType::I16: return GgufValue::i16(c.read<int16_t>());
    case GgufValueType::U32: return GgufValue::u32(c.read<uint32_t>());
    case GgufValueType::I32: return GgufValue::i32(c.read<int32_t>());
    case GgufValueType::U64: return GgufValue::u64(c.read<uint64_t>());
    case GgufValueType::I64: return GgufValue::i64(c.read<int64_t>());
    case GgufValueType::F32: return GgufValue::f32(c.read<float>());
    case GgufValueType::F64: return GgufValue::f64(c.read<double>());
    case GgufValueType::Bool: return GgufValue::boolean(c.read<uint8_t>() != 0);
    case GgufValueType::String: return GgufValue::string(c.readString());
    case GgufValueType::Array: return readArray(c, depth, key);
    }
    throw GgufError(
        msg("metadata key ", quoteName(key), ": unknown value type ", static_cast<uint32_t>(type)));
}

// Reads one tensor info and checks what can be checked before the data offset is known.
GgufTensorInfo readTensorInfo(Cursor& c) {
    GgufTensorInfo t;
    t.name = c.readString();
    const std::string name = quoteName(t.name);
    uint32_t nDims = c.read<uint32_t>();
    if (nDims == 0 || nDims > kMaxDims)
        throw GgufError(
            msg("tensor ", name, " has ", nDims, " dimensions; GGUF allows 1 to ", kMaxDims));
    t.shape.resize(nDims);
    for (uint64_t& d : t.shape) d = c.wideCounts() ? c.read<uint64_t>() : c.read<uint32_t>();
    uint32_t typeId = c.read<uint32_t>();
    t.offset = c.read<uint64_t>();

    for (uint64_t d : t.shape) {
        if (d == 0)
            throw GgufError(
                msg("tensor ", name, " has a zero dimension in shape ", shapeString(t.shape)));
    }
    std::optional<kernels::TensorType> type = kernels::tensorTypeFromId(typeId);
    if (!type) {
        const std::string_view known = kernels::unsupportedTypeName(typeId);
        throw GgufError(msg("tensor ", name, " has unsupported type id ", typeId,
                            known.empty() ? std::string() : " (ggml's " + std::string(known) + ")"));
    }
    t.type = *type;
    const auto block = static_cast<uint64_t>(kernels::blockSize(t.type));
    if (t.shape[0] % block != 0)
        throw GgufError(msg("tensor ", name, " row length ", t.shape[0],
                            " is not a multiple of the block size ", block, " of ",
                            kernels::tensorTypeName(t.type)));
    uint64_t elements = 1;
    for (uint64_t d : t.shape) {
        if (!checkedMul(elements, d, elements))
            throw GgufError(msg("tensor ", name, " element count overflows (shape ",
                                shapeString(t.shape), ")"));
    }
    uint64_t rowBytes = 0;
    if (!checkedMul(t.shape[0] / block, kernels::blockBytes(t.type), rowBytes) ||
        !checkedMul(rowBytes, elements / t.shape[0], t.bytes))
        throw GgufError(msg("tensor ", name, " byte size overflows (shape ", shapeString(t.shape),
                            ", ", kernels::tensorTypeName(t.type), ")"));
    return t;
}

} // namespace

// An open file descriptor's read-only mapping; unmapped on destruction.
struct GgufFile::Mapping {
    void* addr = nullptr;
    size_t length = 0;

    Mapping() = default;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping() {
        if (addr) ::munmap(addr, length);
    }
};

namespace {

// Closes a POSIX descriptor on scope exit (the mapping stays valid after close).
class FdGuard {
public:
    explicit FdGuard(int fd) : m_fd(fd) {}
    FdGuard(const FdGuard&) = delete;
    FdGuard& operator=(const FdGuard&) = delete;
    ~FdGuard() {
        if (m_fd >= 0) ::close(m_fd);
    }
    int get() const { return m_fd; }

private:
    int m_fd;
};

} // namespace

GgufFile::GgufFile(GgufFile&&) noexcept = default;
GgufFile& GgufFile::operator=(GgufFile&&) noexcept = default;
GgufFile::~GgufFile() = default;

GgufFile GgufFile::open(const std::string& path) {
    GgufFile f;
    f.m_path = path;
    try {
        FdGuard fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
        if (fd.get() < 0) throw GgufError(msg("cannot open: ", std::strerror(errno)));
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0)
            throw GgufError(msg("cannot stat: ", std::strerror(errno)));
        if (!S_ISREG(st.st_mode)) throw GgufError("not a regular file");
        if (st.st_size < 0 ||
            static_cast<uint64_t>(st.st_size) > std::numeric_limits<size_t>::max())
            throw GgufError(msg("file size ", st.st_size, " cannot be mapped"));
        f.m_size = static_cast<uint64_t>(st.st_size);
        // mmap rejects a zero length; parse() reports the empty file.
        if (f.m_size > 0) {
            void* addr =
                ::mmap(nullptr, static_cast<size_t>(f.m_size), PROT_READ, MAP_PRIVATE, fd.get(), 0);
            if (addr == MAP_FAILED) throw GgufError(msg("cannot mmap: ", std::strerror(errno)));
            f.m_mapping = std::make_unique<Mapping>();
            f.m_mapping->addr = addr;
            f.m_mapping->length = static_cast<size_t>(f.m_size);
            f.m_base = static_cast<const uint8_t*>(addr);
        }
        f.parse();
    } catch (const GgufError& e) {
        throw GgufError(path + ": " + e.what());
    }
    return f;
}

GgufFile GgufFile::fromMemory(std::span<const uint8_t> bytes) {
    GgufFile f;
    f.m_base = bytes.data();
    f.m_size = bytes.size();
    f.parse();
    return f;
}

void GgufFile::parse() {
    if (m_size == 0) throw GgufError("empty file: not a GGUF file");
    if (std::memcmp(m_base, "GGUF", std::min<uint64_t>(m_size, 4)) != 0)
        throw GgufError("bad magic: not a GGUF file");
    Cursor probe(m_base, m_size, 3);
    probe.read<uint32_t>();
    m_version = probe.read<uint32_t>();
    if (m_version < 1 || m_version > 3) {
        std::string hint;
        if (uint32_t swapped = __builtin_bswap32(m_version); swapped >= 1 && swapped <= 3)
            hint = " (a big-endian file?)";
        throw GgufError(msg("unsupported GGUF version ", m_version, hint));
    }

    Cursor c(m_base, m_size, m_version);
    c.read<uint64_t>(); // magic and version, checked above
    uint64_t tensorCount = c.readCount();
    uint64_t kvCount = c.readCount();
    // Smallest encodings: a key/value pair is a key length, a type and one byte; a tensor
    // info is a name length, n_dims, one dim, a type and an offset.
    const uint64_t minKv = c.countBytes() + 4 + 1;
    const uint64_t minTensor = c.countBytes() + 4 + c.countBytes() + 4 + 8;
    if (tensorCount > c.remaining() / minTensor)
        throw GgufError(msg("tensor count ", tensorCount, " is larger than the file could hold (",
                            m_size, " bytes)"));
    if (kvCount > c.remaining() / minKv)
        throw GgufError(msg("metadata count ", kvCount, " is larger than the file could hold (",
                            m_size, " bytes)"));

    m_metadata.reserve(static_cast<size_t>(kvCount));
    std::unordered_set<std::string> keys;
    for (uint64_t i = 0; i < kvCount; ++i) {
        std::string key = c.readString();
        if (!keys.insert(key).second)
            throw GgufError(msg("duplicate metadata key ", quoteName(key)));
        uint32_t typeId = c.read<uint32_t>();
        if (!knownValueType(typeId))
            throw GgufError(
                msg("metadata key ", quoteName(key), " has unknown value type ", typeId));
        GgufValue value = readValue(c, static_cast<GgufValueType>(typeId), 0, key);
        m_metadata.emplace_back(std::move(key), std::move(value));
    }

    m_alignment = kDefaultAlignment;
    if (const GgufValue* a = find(kAlignmentKey)) {
        if (!a->isInteger())
            throw GgufError(msg("bad alignment: ", kAlignmentKey, " has type ",
                                ggufValueTypeName(a->type), ", expected u32"));
        const bool isSigned = a->type == GgufValueType::I8 || a->type == GgufValueType::I16 ||
                              a->type == GgufValueType::I32 || a->type == GgufValueType::I64;
        const bool negative = isSigned && a->asInt() < 0;
        const uint64_t align = negative ? 0 : a->asUInt();
        if (!std::has_single_bit(align))
            throw GgufError(msg("bad alignment: ", kAlignmentKey, " is ",
                                negative ? std::to_string(a->asInt()) : std::to_string(align),
                                ", must be a nonzero power of two"));
        m_alignment = align;
    }

    m_tensors.reserve(static_cast<size_t>(tensorCount));
    std::unordered_set<std::string> names;
    for (uint64_t i = 0; i < tensorCount; ++i) {
        GgufTensorInfo t = readTensorInfo(c);
        if (!names.insert(t.name).second)
            throw GgufError(msg("duplicate tensor name ", quoteName(t.name)));
        m_tensors.push_back(std::move(t));
    }

    // The data section starts at the end of the header rounded up to the alignment.
    uint64_t headerEnd = c.pos();
    uint64_t padded = 0;
    if (!checkedAdd(headerEnd, m_alignment - 1, padded))
        throw GgufError(
            msg("bad alignment: data section offset overflows with alignment ", m_alignment));
    m_dataOffset = padded / m_alignment * m_alignment;

    for (GgufTensorInfo& t : m_tensors) {
        if (t.offset % m_alignment != 0)
            throw GgufError(msg("bad alignment: tensor ", quoteName(t.name), " offset ", t.offset,
                                " is not a multiple of the alignment ", m_alignment));
        uint64_t begin = 0;
        uint64_t end = 0;
        if (!checkedAdd(m_dataOffset, t.offset, begin) || !checkedAdd(begin, t.bytes, end) ||
            end > m_size) {
            std::string range;
            if (begin < m_dataOffset)
                range = msg("at data offset ", t.offset);
            else if (end < begin)
                range = msg("[", begin, ", ", begin, " + ", t.bytes, ")");
            else
                range = msg("[", begin, ", ", end, ")");
            throw GgufError(msg("tensor ", quoteName(t.name), " data ", range,
                                " lies outside the file (size ", m_size, ")"));
        }
        t.data = m_base + begin;
    }
}

const GgufValue* GgufFile::find(std::string_view key) const {
    for (const auto& [k, v] : m_metadata)
        if (k == key) return &v;
    return nullptr;
}

const GgufValue& GgufFile::get(std::string_view key) const {
    if (const GgufValue* v = find(key)) return *v;
    throw GgufError(msg("missing metadata key ", quoteName(key)));
}

const GgufTensorInfo* GgufFile::findTensor(std::string_view name) const {
    for (const GgufTensorInfo& t : m_tensors)
        if (t.name == name) return &t;
    return nullptr;
}

uint64_t GgufTensorInfo::elements() const {
    uint64_t n = 1;
    for (uint64_t d : shape) n *= d; // the reader and writer reject shapes that overflow
    return n;
}

} // namespace mb::engine
