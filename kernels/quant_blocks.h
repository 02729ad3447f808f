// Byte layouts of GGUF's quantised blocks (ggml's published formats), one struct per type.
#pragma once

#include <cstdint>

namespace mb::kernels {

// Elements per block of the legacy formats (Q4_0 ... Q8_0, IQ4_NL) and of the k-quants.
constexpr int64_t kQ8_0BlockSize = 32;
constexpr int64_t kQ4_0BlockSize = 32;
constexpr int64_t kLegacyBlockSize = 32;
constexpr int64_t kSuperBlockSize = 256; // QK_K: every k-quant and IQ4_XS

// Every F16 field is stored as raw bits (uint16_t) and read with fp16ToFloat.

// Q8_0: value = d * qs[i]. 34 bytes.
struct BlockQ8_0 {
    uint16_t d;
    int8_t qs[kQ8_0BlockSize];
};
static_assert(sizeof(BlockQ8_0) == 34);

// Q4_0: value = d * (q - 8). Element j is the low nibble of qs[j] for j < 16 and the high
// nibble of qs[j - 16] after. 18 bytes.
struct BlockQ4_0 {
    uint16_t d;
    uint8_t qs[kQ4_0BlockSize / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

// Q4_1: value = q * d + m, nibbles as Q4_0. 20 bytes.
struct BlockQ4_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qs[16];
};
static_assert(sizeof(BlockQ4_1) == 20);

// Q5_0: value = d * (q - 16), q = nibble (as Q4_0) | bit j of qh (little-endian 32 bits) << 4.
// 22 bytes.
struct BlockQ5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[16];
};
static_assert(sizeof(BlockQ5_0) == 22);

// Q5_1: value = q * d + m, q as Q5_0 (no offset). 24 bytes.
struct BlockQ5_1 {
    uint16_t d;
    uint16_t m;
    uint8_t qh[4];
    uint8_t qs[16];
};
static_assert(sizeof(BlockQ5_1) == 24);

// IQ4_NL: value = d * kIq4NlValues[nibble], nibbles as Q4_0. 18 bytes.
struct BlockIq4Nl {
    uint16_t d;
    uint8_t qs[16];
};
static_assert(sizeof(BlockIq4Nl) == 18);

// The 16 non-linear levels of IQ4_NL and IQ4_XS.
inline constexpr int8_t kIq4NlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

// Q2_K: 16 sub-blocks of 16. scales[s]: low nibble the scale, high nibble the min (4 bits
// each); value = d * sc * q - dmin * m, q 2 bits. Element e: q = qs[(e / 128) * 32 + e % 32]
// >> (2 * ((e % 128) / 32)) & 3, sub-block e / 16. 84 bytes.
struct BlockQ2_K {
    uint8_t scales[16];
    uint8_t qs[64];
    uint16_t d;
    uint16_t dmin;
};
static_assert(sizeof(BlockQ2_K) == 84);

// Q3_K: 16 sub-blocks of 16 with 6-bit signed scales (offset 32) packed in 12 bytes: low 4 bits
// of scale s in scales[s % 8] (low nibble for s < 8, high after), high 2 bits in scales[8 + s % 4]
// at bit 2 * (s / 4). q = 2 low bits (as Q2_K) | hmask bit << 2, minus 4; element e's high bit is
// hmask[e % 32] bit e / 32. value = d * (scale - 32) * (q - 4). 110 bytes.
struct BlockQ3_K {
    uint8_t hmask[32];
    uint8_t qs[64];
    uint8_t scales[12];
    uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

// Q4_K: 8 sub-blocks of 32 with 6-bit scales and mins packed in 12 bytes (scaleMinK4).
// value = d * sc * q - dmin * m; element e: q = nibble of qs[(e / 64) * 32 + e % 32], low for
// even sub-blocks (e / 32), high for odd. 144 bytes.
struct BlockQ4_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qs[128];
};
static_assert(sizeof(BlockQ4_K) == 144);

// Q5_K: Q4_K's layout plus a fifth bit: qh[e % 32] bit e / 32, worth 16. 176 bytes.
struct BlockQ5_K {
    uint16_t d;
    uint16_t dmin;
    uint8_t scales[12];
    uint8_t qh[32];
    uint8_t qs[128];
};
static_assert(sizeof(BlockQ5_K) == 176);

// Q6_K: 16 sub-blocks of 16 with signed 8-bit scales; q 6 bits minus 32; value = d * sc * q.
// Element e, half h = e / 128, i = e % 128: low 4 bits from ql[h * 64 + i % 64] (low nibble
// for i < 64, high after), high 2 bits from qh[h * 32 + i % 32] at bit 2 * (i / 32). 210 bytes.
struct BlockQ6_K {
    uint8_t ql[128];
    uint8_t qh[64];
    int8_t scales[16];
    uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);

// Q8_K (activations of k-quant products): value = d * qs[i]; bsums[j] = sum of qs[16j..16j+15].
// 292 bytes.
struct BlockQ8_K {
    float d;
    int8_t qs[kSuperBlockSize];
    int16_t bsums[kSuperBlockSize / 16];
};
static_assert(sizeof(BlockQ8_K) == 292);

// Per Q8_0 activation block, what the Q4_1, Q5_0, Q5_1 and IQ4_NL products read besides its
// bytes (activationSums, kernels/cpu/quant_legacy.h): the block's F16 scale as F32, and that
// scale times the sum of its 32 values (exact in F32: at most 13 bits times an F16's 11).
// Made once per token and product, not stored in files.
struct Q8Sums {
    float d;
    float s;
};

// IQ4_XS: 8 sub-blocks of 32 as IQ4_NL with 6-bit scales (offset 32): low 4 bits in
// scalesL[s / 2] (nibble s % 2), high 2 bits in scalesH at bit 2 * s. 136 bytes.
struct BlockIq4Xs {
    uint16_t d;
    uint16_t scalesH;
    uint8_t scalesL[4];
    uint8_t qs[128];
};
static_assert(sizeof(BlockIq4Xs) == 136);

} // namespace mb::kernels
