// F32 weight matrices repacked as 16-row panels, the layout of the outer-product products
// (VecKernels::gemmPanelsF32).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

namespace mb::kernels {

// Rows per panel: one 512-bit vector of F32.
constexpr int64_t kPanelRows = 16;

// A (rows, cols) row-major F32 matrix as ceil(rows / 16) panels. Panel p holds rows
// [16p, 16p + 16) column by column: element (r, c) lies at data()[(p * cols + c) * 16 + r - 16p],
// so one 64-byte load gives 16 rows of one column. Rows past the last are zero. 64-byte
// aligned (a panel column is one cache line). Owns its memory; made once per matrix.
//
// Why: a row-major matrix is multiplied as dot products (kernels/cpu/gemm_avx512.cpp), which
// load a weight vector and an activation vector per FMA pair and end in a horizontal
// reduction per output; the panels are multiplied as outer products (one weight vector
// times a broadcast activation per FMA, each output in its own vector lane), which load a
// third as much and reduce nothing (docs/PERFORMANCE.md, "F32 panels").
class PanelsF32 {
public:
    PanelsF32() = default;
    // Packs w, rows x cols, row-major (rows lie cols elements apart). Throws std::bad_alloc.
    PanelsF32(const float* w, int64_t rows, int64_t cols);

    const float* data() const { return m_data.get(); }
    int64_t rows() const { return m_rows; }
    int64_t cols() const { return m_cols; }
    size_t bytes() const {
        return static_cast<size_t>(panels() * kPanelRows * m_cols) * sizeof(float);
    }
    int64_t panels() const { return (m_rows + kPanelRows - 1) / kPanelRows; }

private:
    struct Free {
        void operator()(float* p) const { std::free(p); }
    };
    std::unique_ptr<float[], Free> m_data;
    int64_t m_rows = 0;
    int64_t m_cols = 0;
};

} // namespace mb::kernels
