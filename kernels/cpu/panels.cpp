// Repacking row-major F32, F16, Q8_0 and Q4_0 matrices into 16-row panels, and which types have panels.
#include "kernels/cpu/panels.h"

#include "kernels/cpu/fp16.h"
#include "kernels/cpu/panels_k.h"
#include "kernels/cpu/vec.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace mb::kernels {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
} // namespace

size_t panelsF32Bytes(int64_t rows, int64_t cols) {
    if (rows <= 0 || cols <= 0) return 0;
    const int64_t panels = (rows + kPanelRows - 1) / kPanelRows;
    return static_cast<size_t>(panels * kPanelRows * cols) * sizeof(float);
}

PanelMemory allocatePanelMemory(size_t bytes) {
    if (bytes == 0) return nullptr;
    const bool huge = bytes >= kHugePage;
    const size_t align = huge ? kHugePage : 64;
    PanelMemory m(
        static_cast<float*>(std::aligned_alloc(align, (bytes + align - 1) / align * align)));
    if (!m) throw std::bad_alloc();
    if (huge) (void)::madvise(m.get(), bytes, MADV_HUGEPAGE); // advice: 4 KiB pages otherwise
    return m;
}

namespace {
template <class T>
void packColumns(const T* w, int64_t rows, int64_t cols, T* out) {
    const int64_t panels = (rows + kPanelRows - 1) / kPanelRows;
    for (int64_t p = 0; p < panels; ++p) {
        const int64_t r0 = p * kPanelRows, live = std::min(kPanelRows, rows - r0);
        T* panel = out + p * kPanelRows * cols;
        // Row by row (reads stream; the panel, 16 * cols elements, stays in cache for the writes).
        for (int64_t r = 0; r < kPanelRows; ++r) {
            if (r < live) {
                const T* src = w + (r0 + r) * cols;
                for (int64_t c = 0; c < cols; ++c) panel[c * kPanelRows + r] = src[c];
            } else {
                for (int64_t c = 0; c < cols; ++c) panel[c * kPanelRows + r] = T{};
            }
        }
    }
}
} // namespace

void packPanelsF32(const float* w, int64_t rows, int64_t cols, float* out) { packColumns(w, rows, cols, out); }

// Rounded up to 64 bytes, so panels laid one after another stay 64-byte aligned.
size_t panelsF16Bytes(int64_t rows, int64_t cols) { return (panelsF32Bytes(rows, cols) / 2 + 63) / 64 * 64; }

void packPanelsF16(const uint16_t* w, int64_t rows, int64_t cols, uint16_t* out) { packColumns(w, rows, cols, out); }

// Panels of 16 rows' quant blocks: per block b, `groups` groups of 64 bytes, each 4 bytes of
// every lane (row) in turn (byte(src, i) gives a row's i-th stored byte, src null past the last
// row), then the panel's F16 scales [nb][16]; panels `stride` bytes apart.
template <class Block, class Byte>
void packBlockPanels(const Block* w, int64_t rows, int64_t nb, int groups, int64_t stride, uint8_t* out, Byte byte) {
    const int64_t panels = (rows + kPanelRows - 1) / kPanelRows;
    const int64_t quantBytes = int64_t{groups} * 64;
    for (int64_t p = 0; p < panels; ++p) {
        uint8_t* panel = out + p * stride;
        auto* scales = reinterpret_cast<uint16_t*>(panel + nb * quantBytes);
        for (int64_t b = 0; b < nb; ++b)
            for (int64_t lane = 0; lane < kPanelRows; ++lane) {
                const int64_t r = p * kPanelRows + lane;
                const Block* src = r < rows ? &w[r * nb + b] : nullptr;
                for (int g = 0; g < groups; ++g)
                    for (int i = 0; i < 4; ++i) panel[b * quantBytes + g * 64 + lane * 4 + i] = byte(src, g * 4 + i);
                scales[b * kPanelRows + lane] = src ? src->d : 0;
            }
    }
}

size_t blockPanelsBytes(int64_t rows, int64_t nb, int64_t stride) {
    if (rows <= 0 || nb <= 0) return 0;
    return static_cast<size_t>((rows + kPanelRows - 1) / kPanelRows * stride);
}

size_t panelsQ8_0Bytes(int64_t rows, int64_t nb) { return blockPanelsBytes(rows, nb, q8PanelStride(nb)); }

// Q8_0's signed bytes stored + 128 (unsigned, for vpdpbusd).
void packPanelsQ8_0(const BlockQ8_0* w, int64_t rows, int64_t nb, uint8_t* out) {
    static_assert(kQ8PanelQuantBytes == 8 * 64);
    packBlockPanels(w, rows, nb, 8, q8PanelStride(nb), out, [](const BlockQ8_0* src, int i) {
        return static_cast<uint8_t>((src ? src->qs[i] : 0) + 128);
    });
}

size_t panelsQ4_0Bytes(int64_t rows, int64_t nb) { return blockPanelsBytes(rows, nb, q4PanelStride(nb)); }

// Q4_0's nibble bytes as stored.
void packPanelsQ4_0(const BlockQ4_0* w, int64_t rows, int64_t nb, uint8_t* out) {
    static_assert(kQ4PanelQuantBytes == 4 * 64);
    packBlockPanels(w, rows, nb, 4, q4PanelStride(nb), out,
                    [](const BlockQ4_0* src, int i) { return static_cast<uint8_t>(src ? src->qs[i] : 0); });
}

void prepareQ8Panels(const BlockQ8_0* x, int64_t ldx, int64_t tokens, int64_t nb, int32_t* bias,
                     float* scale) {
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t b = 0; b < nb; ++b) {
            const BlockQ8_0& xb = x[t * ldx + b];
            int32_t sum = 0;
            for (int8_t q : xb.qs) sum += q;
            bias[t * nb + b] = -128 * sum;
            scale[t * nb + b] = fp16ToFloat(xb.d);
        }
}

namespace {

// A type's panel layout: its bytes and packer (over whole rows of cols elements) and whether a
// kernel table multiplies it.
struct PanelLayout {
    size_t (*bytes)(int64_t rows, int64_t cols);
    void (*pack)(const void* w, int64_t rows, int64_t cols, void* out);
    bool (*inTable)(const VecKernels& k);
};

template <class Block, int64_t kBlock, size_t (*Bytes)(int64_t, int64_t),
          void (*Pack)(const Block*, int64_t, int64_t, uint8_t*)>
constexpr PanelLayout blockLayout(bool (*inTable)(const VecKernels&)) {
    return {[](int64_t rows, int64_t cols) { return Bytes(rows, cols / kBlock); },
            [](const void* w, int64_t rows, int64_t cols, void* out) {
                Pack(static_cast<const Block*>(w), rows, cols / kBlock, static_cast<uint8_t*>(out));
            },
            inTable};
}

const PanelLayout kF32{panelsF32Bytes,
                       [](const void* w, int64_t rows, int64_t cols, void* out) {
                           packPanelsF32(static_cast<const float*>(w), rows, cols, static_cast<float*>(out));
                       },
                       [](const VecKernels& k) { return k.gemmPanelsF32 != nullptr; }};
const PanelLayout kF16{panelsF16Bytes,
                       [](const void* w, int64_t rows, int64_t cols, void* out) {
                           packPanelsF16(static_cast<const uint16_t*>(w), rows, cols, static_cast<uint16_t*>(out));
                       },
                       [](const VecKernels& k) { return k.gemmPanelsF16 != nullptr; }};
const PanelLayout kQ8_0 = blockLayout<BlockQ8_0, kQ8_0BlockSize, panelsQ8_0Bytes, packPanelsQ8_0>(
    [](const VecKernels& k) { return k.gemmPanelsQ8_0 != nullptr; });
const PanelLayout kQ4_0 = blockLayout<BlockQ4_0, kQ4_0BlockSize, panelsQ4_0Bytes, packPanelsQ4_0>(
    [](const VecKernels& k) { return k.gemmPanelsQ4_0 != nullptr; });
const PanelLayout kQ4_K = blockLayout<BlockQ4_K, kSuperBlockSize, panelsQ4_KBytes, packPanelsQ4_K>(
    [](const VecKernels& k) { return k.gemmPanelsQ4_K != nullptr; });
const PanelLayout kQ6_K = blockLayout<BlockQ6_K, kSuperBlockSize, panelsQ6_KBytes, packPanelsQ6_K>(
    [](const VecKernels& k) { return k.gemmPanelsQ6_K != nullptr; });

// The one place that says which types have a panel layout; every other type is multiplied from
// its rows.
const PanelLayout* layoutOf(TensorType type) {
    switch (type) {
    case TensorType::F32: return &kF32;
    case TensorType::F16: return &kF16;
    case TensorType::Q8_0: return &kQ8_0;
    case TensorType::Q4_0: return &kQ4_0;
    case TensorType::Q4_K: return &kQ4_K;
    case TensorType::Q6_K: return &kQ6_K;
    case TensorType::BF16:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::IQ4_NL:
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q5_K:
    case TensorType::IQ4_XS:
    case TensorType::Q8_K: return nullptr;
    }
    return nullptr;
}

} // namespace

size_t panelBytesFor(const VecKernels& k, TensorType type, int64_t rows, int64_t cols) {
    const PanelLayout* l = layoutOf(type);
    return l && l->inTable(k) ? l->bytes(rows, cols) : 0;
}

void packPanels(TensorType type, const void* w, int64_t rows, int64_t cols, void* out) {
    if (const PanelLayout* l = layoutOf(type)) l->pack(w, rows, cols, out);
}

} // namespace mb::kernels
