// Repacking row-major F32, Q8_0 and Q4_0 matrices into 16-row panels.
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

size_t panelsQ8_0Bytes(int64_t rows, int64_t nb) {
    if (rows <= 0 || nb <= 0) return 0;
    const int64_t panels = (rows + kPanelRows - 1) / kPanelRows;
    return static_cast<size_t>(panels * q8PanelStride(nb));
}

// Q8_0's signed bytes stored + 128 (unsigned, for vpdpbusd).
void packPanelsQ8_0(const BlockQ8_0* w, int64_t rows, int64_t nb, uint8_t* out) {
    static_assert(kQ8PanelQuantBytes == 8 * 64);
    packBlockPanels(w, rows, nb, 8, q8PanelStride(nb), out, [](const BlockQ8_0* src, int i) {
        return static_cast<uint8_t>((src ? src->qs[i] : 0) + 128);
    });
}

size_t panelsQ4_0Bytes(int64_t rows, int64_t nb) {
    if (rows <= 0 || nb <= 0) return 0;
    const int64_t panels = (rows + kPanelRows - 1) / kPanelRows;
    return static_cast<size_t>(panels * q4PanelStride(nb));
}

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

size_t panelBytesFor(const VecKernels& k, TensorType type, int64_t rows, int64_t cols) {
    switch (type) {
    case TensorType::F32: return k.gemmPanelsF32 ? panelsF32Bytes(rows, cols) : 0;
    case TensorType::F16: return k.gemmPanelsF16 ? panelsF16Bytes(rows, cols) : 0;
    case TensorType::Q8_0: return k.gemmPanelsQ8_0 ? panelsQ8_0Bytes(rows, cols / kQ8_0BlockSize) : 0;
    case TensorType::Q4_0: return k.gemmPanelsQ4_0 ? panelsQ4_0Bytes(rows, cols / kQ4_0BlockSize) : 0;
    case TensorType::Q4_K: return k.gemmPanelsQ4_K ? panelsQ4_KBytes(rows, cols / kSuperBlockSize) : 0;
    case TensorType::Q6_K: return k.gemmPanelsQ6_K ? panelsQ6_KBytes(rows, cols / kSuperBlockSize) : 0;
    case TensorType::BF16:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::IQ4_NL:
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q5_K:
    case TensorType::IQ4_XS:
    case TensorType::Q8_K: return 0; // no panel layout: multiplied from the rows
    }
    return 0;
}

void packPanels(TensorType type, const void* w, int64_t rows, int64_t cols, void* out) {
    auto* bytes = static_cast<uint8_t*>(out);
    switch (type) {
    case TensorType::F32: packPanelsF32(static_cast<const float*>(w), rows, cols, static_cast<float*>(out)); return;
    case TensorType::F16:
        packPanelsF16(static_cast<const uint16_t*>(w), rows, cols, static_cast<uint16_t*>(out));
        return;
    case TensorType::Q8_0: packPanelsQ8_0(static_cast<const BlockQ8_0*>(w), rows, cols / kQ8_0BlockSize, bytes); return;
    case TensorType::Q4_0: packPanelsQ4_0(static_cast<const BlockQ4_0*>(w), rows, cols / kQ4_0BlockSize, bytes); return;
    case TensorType::Q4_K: packPanelsQ4_K(static_cast<const BlockQ4_K*>(w), rows, cols / kSuperBlockSize, bytes); return;
    case TensorType::Q6_K: packPanelsQ6_K(static_cast<const BlockQ6_K*>(w), rows, cols / kSuperBlockSize, bytes); return;
    case TensorType::BF16:
    case TensorType::Q4_1:
    case TensorType::Q5_0:
    case TensorType::Q5_1:
    case TensorType::IQ4_NL:
    case TensorType::Q2_K:
    case TensorType::Q3_K:
    case TensorType::Q5_K:
    case TensorType::IQ4_XS:
    case TensorType::Q8_K: return; // panelBytesFor gave 0: nothing to pack
    }
}

} // namespace mb::kernels
