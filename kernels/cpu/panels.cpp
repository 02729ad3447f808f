// Repacking row-major F32 matrices into 16-row panels.
#include "kernels/cpu/panels.h"

#include <sys/mman.h>

#include <algorithm>
#include <new>

namespace mb::kernels {

namespace {
constexpr size_t kHugePage = size_t{2} << 20;
} // namespace

PanelsF32::PanelsF32(const float* w, int64_t rows, int64_t cols) : m_rows(rows), m_cols(cols) {
    if (rows <= 0 || cols <= 0) return;
    const size_t bytes = this->bytes(); // a multiple of 64: 16 floats per column
    // A large matrix in 2 MiB-aligned memory advised as huge pages: where the kernel has
    // transparent huge pages, 2 MiB faults instead of 4 KiB ones, which made packing
    // stories15m's output matrix (37 MB) take 12 ms instead of 105 ms on the development VM.
    const bool huge = bytes >= kHugePage;
    const size_t align = huge ? kHugePage : 64;
    m_data.reset(
        static_cast<float*>(std::aligned_alloc(align, (bytes + align - 1) / align * align)));
    if (!m_data) throw std::bad_alloc();
    if (huge) (void)::madvise(m_data.get(), bytes, MADV_HUGEPAGE); // advice: 4 KiB pages otherwise
    float* out = m_data.get();
    for (int64_t p = 0; p < panels(); ++p) {
        const int64_t r0 = p * kPanelRows, live = std::min(kPanelRows, rows - r0);
        float* panel = out + p * kPanelRows * cols;
        // Row by row (reads stream; the panel, 64 * cols bytes, stays in cache for the writes).
        for (int64_t r = 0; r < kPanelRows; ++r) {
            if (r < live) {
                const float* src = w + (r0 + r) * cols;
                for (int64_t c = 0; c < cols; ++c) panel[c * kPanelRows + r] = src[c];
            } else {
                for (int64_t c = 0; c < cols; ++c) panel[c * kPanelRows + r] = 0.0f;
            }
        }
    }
}

} // namespace mb::kernels
