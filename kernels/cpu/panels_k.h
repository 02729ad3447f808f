// Q4_K and Q6_K weight matrices repacked as 16-row panels for vpdpbusd outer products
// (VecKernels::gemmPanelsQ4_K, gemmPanelsQ6_K): the k-quants' panel layouts beside panels.h's.
#pragma once

#include "kernels/quant_blocks.h"

#include <cstddef>
#include <cstdint>

namespace mb::kernels {

// A (rows, nb super-blocks) Q4_K matrix as 16-row panels (kPanelRows, panels.h), panel p at
// p * q4kPanelStride(nb), 64-byte aligned. Per super-block b, at b * kQ4KPanelBlockBytes:
//   [0, 2048)     32 groups of 64 bytes: group 8c + g (c < 4 chunks, g < 8) holds row r's
//                 stored bytes qs[32c + 4g .. 32c + 4g + 3] at 4r: low nibbles are elements
//                 64c + 4g.. (sub-block 2c), high nibbles 64c + 32 + 4g.. (sub-block 2c + 1);
//   [2048, 2176)  the 6-bit sub-block scales, byte j * 16 + r = scale j of row r;
//   [2176, 2304)  the 6-bit mins in pairs, byte i * 32 + 2r + k = min 2i + k of row r (so one
//                 vpmovzxbw gives each row's lane the int16 pair of sub-blocks 2i, 2i + 1);
//   [2304, 2336)  the rows' F16 d; [2336, 2368) their F16 dmin.
// 16 / 15.6 of the rows' own size. Rows past the last are zero.
constexpr int64_t kQ4KPanelQuantBytes = 32 * 64;
constexpr int64_t kQ4KPanelScales = kQ4KPanelQuantBytes;
constexpr int64_t kQ4KPanelMins = kQ4KPanelScales + 8 * 16;
constexpr int64_t kQ4KPanelD = kQ4KPanelMins + 8 * 16;
constexpr int64_t kQ4KPanelDmin = kQ4KPanelD + 16 * 2;
constexpr int64_t kQ4KPanelBlockBytes = kQ4KPanelDmin + 16 * 2;
static_assert(kQ4KPanelBlockBytes % 64 == 0);
constexpr int64_t q4kPanelStride(int64_t nb) { return nb * kQ4KPanelBlockBytes; }
size_t panelsQ4_KBytes(int64_t rows, int64_t nb);
void packPanelsQ4_K(const BlockQ4_K* w, int64_t rows, int64_t nb, uint8_t* out);

// A (rows, nb super-blocks) Q6_K matrix as 16-row panels, panel p at p * q6kPanelStride(nb).
// Per super-block b, at b * kQ6KPanelBlockBytes:
//   [0, 2048)     32 groups of 64 bytes of low nibbles: group 4i + g (i < 8 pairs of
//                 sub-blocks, g < 4) holds at 4r + e, e < 4, row r's element 32i + 4g + e in its
//                 low nibble and 32i + 16 + 4g + e in its high nibble (sub-blocks 2i, 2i + 1);
//   [2048, 3072)  16 groups of 64 bytes of high bit pairs: group j (sub-block j) holds at
//                 4r + e row r's upper two bits of element 16j + 4g + e in bits 2g, 2g + 1;
//   [3072, 3328)  the int8 sub-block scales, byte j * 16 + r = scale j of row r;
//   [3328, 3360)  the rows' F16 d; [3360, 3392) zero.
// 16.15 / 15.75 of the rows' own size. Rows past the last are zero (values 0, scales 0).
constexpr int64_t kQ6KPanelLowBytes = 32 * 64;
constexpr int64_t kQ6KPanelHigh = kQ6KPanelLowBytes;
constexpr int64_t kQ6KPanelScales = kQ6KPanelHigh + 16 * 64;
constexpr int64_t kQ6KPanelD = kQ6KPanelScales + 16 * 16;
constexpr int64_t kQ6KPanelBlockBytes = kQ6KPanelD + 64;
static_assert(kQ6KPanelBlockBytes % 64 == 0);
constexpr int64_t q6kPanelStride(int64_t nb) { return nb * kQ6KPanelBlockBytes; }
size_t panelsQ6_KBytes(int64_t rows, int64_t nb);
void packPanelsQ6_K(const BlockQ6_K* w, int64_t rows, int64_t nb, uint8_t* out);

} // namespace mb::kernels
