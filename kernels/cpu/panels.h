// F32, F16, Q8_0 and Q4_0 weight matrices repacked as 16-row panels, the layout of the outer-product
// products (VecKernels::gemmPanelsF32, gemmPanelsF16, gemmPanelsQ8_0, gemmPanelsQ4_0; Q4_K and
// Q6_K's are in panels_k.h), and which types have panels (panelBytesFor, packPanels).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "kernels/tensor_type.h"

namespace mb::kernels {

// Rows per panel: one 512-bit vector of F32.
constexpr int64_t kPanelRows = 16;

// A (rows, cols) row-major F32 matrix as ceil(rows / 16) panels. Panel p holds rows
// [16p, 16p + 16) column by column: element (r, c) lies at [(p * cols + c) * 16 + r - 16p],
// so one 64-byte load gives 16 rows of one column. Rows past the last are zero. 64-byte
// aligned (a panel column is one cache line).
//
// Why: a row-major matrix is multiplied as dot products (kernels/cpu/gemm_avx512.cpp), which
// load a weight vector and an activation vector per FMA pair and end in a horizontal
// reduction per output; the panels are multiplied as outer products (one weight vector
// times a broadcast activation per FMA, each output in its own vector lane), which load a
// third as much and reduce nothing (docs/PERFORMANCE.md, "F32 panels").
// Bytes of the panels of a rows x cols matrix (a multiple of 64); 0 when either is not positive.
size_t panelsF32Bytes(int64_t rows, int64_t cols);
// Writes the panels of w (rows x cols, row-major, rows cols elements apart) to `out`:
// panelsF32Bytes(rows, cols) bytes, 64-byte aligned.
void packPanelsF32(const float* w, int64_t rows, int64_t cols, float* out);

// A (rows, cols) row-major F16 matrix (raw bits) as panels of the same layout: element (r, c) at
// [(p * cols + c) * 16 + r - 16p], a column 32 bytes, 32-byte aligned; the rows' own bytes (the
// size rounded up to 64 bytes).
size_t panelsF16Bytes(int64_t rows, int64_t cols);
void packPanelsF16(const uint16_t* w, int64_t rows, int64_t cols, uint16_t* out);

// A (rows, nb blocks) Q8_0 matrix as 16-row panels, for vpdpbusd outer products
// (VecKernels::gemmPanelsQ8_0), in the rows' own size (544 bytes per 16 rows and block, and up
// to 32 bytes of padding per panel). Panel p
// takes q8PanelStride(nb) bytes at p * q8PanelStride(nb): first nb quant blocks of 512
// bytes, block b's 8 groups of 64 bytes at b * 512, group g holding elements 4g..4g+3 of the
// block for rows 16p..16p+15 (row r's 4 bytes at g * 64 + 4 (r - 16p)), each q + 128 (unsigned,
// as vpdpbusd takes its first operand); then nb times the 16 rows' F16 scales (32 bytes each).
// Rows past the last have q = 0 and scale 0.
constexpr int64_t kQ8PanelQuantBytes = 8 * 64;
constexpr int64_t kQ8PanelBlockBytes = kQ8PanelQuantBytes + 16 * 2;
// Bytes from one Q8_0 panel to the next: nb blocks, rounded up to 64 so every panel (and its
// 64-byte groups) starts 64-byte aligned.
constexpr int64_t q8PanelStride(int64_t nb) { return (nb * kQ8PanelBlockBytes + 63) / 64 * 64; }
// Bytes of the ceil(rows / 16) panels of a quantised matrix whose panels are `stride` bytes
// apart; 0 when rows or nb is not positive.
size_t blockPanelsBytes(int64_t rows, int64_t nb, int64_t stride);
size_t panelsQ8_0Bytes(int64_t rows, int64_t nb);
// Writes the panels of w (rows x nb blocks, rows nb blocks apart) to `out`:
// panelsQ8_0Bytes(rows, nb) bytes, 64-byte aligned.
void packPanelsQ8_0(const BlockQ8_0* w, int64_t rows, int64_t nb, uint8_t* out);
// A (rows, nb blocks) Q4_0 matrix as 16-row panels, for vpdpbusd outer products
// (VecKernels::gemmPanelsQ4_0), in the rows' own bytes (288 per 16 rows and block, and up to 32
// bytes of padding per panel). Panel p takes q4PanelStride(nb) bytes at p * q4PanelStride(nb):
// first nb quant blocks of 256
// bytes, block b's 4 groups of 64 bytes at b * 256, group g holding for rows 16p..16p+15 (row
// r's 4 bytes at g * 64 + 4 (r - 16p)) the row's stored bytes qs[4g..4g+3]: low nibbles
// elements 4g..4g+3, high nibbles 16 + 4g..16 + 4g + 3 (q, unsigned; the - 8 comes off through
// the activations' sums); then nb times the 16 rows' F16 scales (32 bytes each). Rows past
// the last have q = 0 and scale 0.
constexpr int64_t kQ4PanelQuantBytes = 4 * 64;
constexpr int64_t kQ4PanelBlockBytes = kQ4PanelQuantBytes + 16 * 2;
constexpr int64_t q4PanelStride(int64_t nb) { return (nb * kQ4PanelBlockBytes + 63) / 64 * 64; }
size_t panelsQ4_0Bytes(int64_t rows, int64_t nb);
void packPanelsQ4_0(const BlockQ4_0* w, int64_t rows, int64_t nb, uint8_t* out);
// What gemmPanelsQ8_0 (and gemmPanelsQ4_0) needs of the activations (tokens x nb blocks, rows ldx blocks apart)
// besides their bytes, per token and block at [t * nb + b]: bias = -128 * sum(q) (taking the
// weights' +128 out of the integer sums) and scale = the block's F16 scale as F32. Made
// once per product (matmul), not per thread or tile.
void prepareQ8Panels(const BlockQ8_0* x, int64_t ldx, int64_t tokens, int64_t nb, int32_t* bias,
                     float* scale);

// Which matrices become panels, the one place that says so: the bytes of the panels of a (rows,
// cols) matrix of `type` for kernel table k (kernels/cpu/vec.h), 0 where k has no panel product
// for the type (k's gemmPanels* is null) or the type has no panel layout.
struct VecKernels;
size_t panelBytesFor(const VecKernels& k, TensorType type, int64_t rows, int64_t cols);
// Packs w (rows x cols of `type`, row-major) into `out`, panelBytesFor(k, type, rows, cols) bytes
// (64-byte aligned), with the type's pack* above or in panels_k.h. Only for types it gave bytes.
void packPanels(TensorType type, const void* w, int64_t rows, int64_t cols, void* out);

// Memory for panels, `bytes` of it, 64-byte aligned; from 2 MiB on, 2 MiB-aligned and
// advised as huge pages (where the kernel has transparent huge pages it then faults in
// 2 MiB at a time, not 4 KiB: 12 ms instead of 105 ms for stories15m's 37 MB output matrix
// on the development VM, whose page faults are slow); null for 0 bytes. Several matrices'
// panels can share one (engine/model_panels.cpp). Throws std::bad_alloc.
struct FreeFloats {
    void operator()(float* p) const { std::free(p); }
};
using PanelMemory = std::unique_ptr<float[], FreeFloats>;
PanelMemory allocatePanelMemory(size_t bytes);

} // namespace mb::kernels
