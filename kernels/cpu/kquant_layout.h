// Where each value and scale of a k-quant (and IQ4_XS) block lives: the one reading of the
// layouts in kernels/quant_blocks.h that the dequantisers and the portable dots share.
#pragma once

#include "kernels/cpu/quant.h"

namespace mb::kernels::layout {

// Element e (0..255) of a super-block as the integer the block's scale multiplies.

// Q2_K: 2 bits, 0..3, from byte (e / 128) * 32 + e % 32 at bit 2 * ((e % 128) / 32).
inline int q2(const BlockQ2_K& b, int e) { return (b.qs[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3; }
// Q3_K: Q2_K's bits minus 4 unless hmask[e % 32] has bit e / 32 set: -4..3.
inline int q3(const BlockQ3_K& b, int e) {
    const int low = (b.qs[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    return low - (((b.hmask[e % 32] >> (e / 32)) & 1) ? 0 : 4);
}
// Q4_K: the nibble of qs[(e / 64) * 32 + e % 32], low for even sub-blocks (e / 32), high for odd.
inline int q4(const uint8_t* qs, int e) { return (qs[(e / 64) * 32 + e % 32] >> (4 * ((e / 32) % 2))) & 0xF; }
// Q5_K: Q4_K's nibble plus 16 where qh[e % 32] has bit e / 32.
inline int q5(const BlockQ5_K& b, int e) { return q4(b.qs, e) | (((b.qh[e % 32] >> (e / 32)) & 1) << 4); }
// Q6_K: half h = e / 128, i = e % 128: 4 bits from ql[h * 64 + i % 64] (low nibble for i < 64),
// 2 bits from qh[h * 32 + i % 32] at bit 2 * (i / 32); minus 32: -32..31.
inline int q6(const BlockQ6_K& b, int e) {
    const int h = e / 128, i = e % 128;
    const int low = (b.ql[h * 64 + i % 64] >> (4 * (i / 64))) & 0xF;
    const int high = (b.qh[h * 32 + i % 32] >> (2 * (i / 32))) & 3;
    return (low | (high << 4)) - 32;
}
// All 256 of a Q6_K block's values as q6(b, e) + 32 (0..63), in one pass: per half h and l < 32,
// ql[64h + l] and ql[64h + 32 + l] give elements l, 32 + l (low nibbles), 64 + l, 96 + l (high),
// with qh[32h + l]'s bit pairs 0 to 3 in that order.
inline void q6Values(const BlockQ6_K& b, uint8_t (&q)[256]) {
    for (int h = 0; h < 2; ++h)
        for (int l = 0; l < 32; ++l) {
            const int a = b.ql[64 * h + l], c = b.ql[64 * h + 32 + l], bits = b.qh[32 * h + l];
            uint8_t* o = q + 128 * h + l;
            o[0] = static_cast<uint8_t>((a & 0xF) | ((bits & 3) << 4));
            o[32] = static_cast<uint8_t>((c & 0xF) | (((bits >> 2) & 3) << 4));
            o[64] = static_cast<uint8_t>((a >> 4) | (((bits >> 4) & 3) << 4));
            o[96] = static_cast<uint8_t>((c >> 4) | (((bits >> 6) & 3) << 4));
        }
}
// IQ4_XS: the level of element e (sub-block e / 32 of 16 bytes, low nibbles first), and sub-block
// s's 6-bit scale minus 32.
inline int iq4Xs(const BlockIq4Xs& b, int e) {
    const uint8_t byte = b.qs[(e / 32) * 16 + e % 16];
    return kIq4NlValues[(e % 32) < 16 ? (byte & 0xF) : (byte >> 4)];
}
inline int iq4XsScale(const BlockIq4Xs& b, int s) {
    return (((b.scalesL[s / 2] >> (4 * (s % 2))) & 0xF) | (((b.scalesH >> (2 * s)) & 3) << 4)) - 32;
}

} // namespace mb::kernels::layout
