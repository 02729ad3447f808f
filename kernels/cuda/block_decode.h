// Decoders of GGUF weight blocks for the CUDA kernels, written once for host and device: bit for bit traits(type).toFloat.
//
// A plain C++ header as well as a CUDA one: without nvcc the qualifiers vanish, so the CPU
// tests run these very functions against kernels/cpu's dequantisers (tests/engine/
// device_decode_test.cpp). Every product and difference is the CPU's, in the CPU's order. In
// these formats every product that a difference or sum follows is exact in F32 (an F16 scale of
// 11 significant bits times sub-scales and quants of at most 11 more), so an FMA could not change
// a bit; on the device products still go through __fmul_rn, so that stays true by construction.
//
// Per type a decoder `D` has `Block` (kernels/quant_blocks.h; a 1-element stand-in for the
// plain float types), `kElems` (elements per block) and
//   element(block, e)      element e (0 <= e < kElems) of one block, as float;
//   group(block, j, out)   elements 32j .. 32j+31 (0 <= j < kElems / 32) into out[32]
// (block types only: every one has a multiple of 32 elements). withDecoder() is the one list of
// the types the device computes with.
#pragma once

#include "kernels/cpu/fp16.h" // the host side of fromHalf() and fromBf16()
#include "kernels/host_device.h"
#include "kernels/quant_blocks.h"
#include "kernels/tensor_type.h"

#include <cstdint>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace mb::kernels::decode {

// a * b rounded once, never fused with a following add (the CPU's unfused F32 order).
MB_HD float mul(float a, float b) { return mulRn(a, b); }

// IEEE half bits -> float (exact: every half is a float).
MB_HD float fromHalf(uint16_t bits) {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(bits));
#else
    return fp16ToFloat(bits);
#endif
}

MB_HD float fromBf16(uint16_t bits) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(static_cast<uint32_t>(bits) << 16);
#else
    return bf16ToFloat(bits);
#endif
}

// kIq4NlValues packed 8 to a word (byte k of word w is level 8w + k), so device code indexes
// registers instead of a host array it cannot read.
constexpr uint64_t packIq4Levels(int first) {
    uint64_t v = 0;
    for (int k = 0; k < 8; ++k) v |= static_cast<uint64_t>(static_cast<uint8_t>(kIq4NlValues[first + k])) << (8 * k);
    return v;
}
inline constexpr uint64_t kIq4LevelsLo = packIq4Levels(0);
inline constexpr uint64_t kIq4LevelsHi = packIq4Levels(8);
MB_HD float iq4Level(int nibble) {
    const uint64_t word = nibble < 8 ? kIq4LevelsLo : kIq4LevelsHi;
    return static_cast<float>(static_cast<int8_t>(static_cast<uint8_t>(word >> (8 * (nibble & 7)))));
}

// The nibble of element i (0..31) of a 32-element block packed as Q4_0: low nibbles of qs[0..15]
// are elements 0..15, high nibbles 16..31.
MB_HD int nibble32(const uint8_t* qs, int i) { return i < 16 ? (qs[i] & 0xF) : (qs[i - 16] >> 4); }

// The fifth bit of element i of a Q5_0/Q5_1 block (qh: 32 bits, little-endian), worth 16.
MB_HD int fifthBit(const uint8_t* qh, int i) { return ((qh[i / 8] >> (i % 8)) & 1) << 4; }

// ---- plain floats (one element per "block") ----

struct DecodeF32 {
    using Block = float;
    static constexpr int kElems = 1;
    MB_HD static float element(const Block& b, int) { return b; }
};
struct DecodeF16 {
    using Block = uint16_t;
    static constexpr int kElems = 1;
    MB_HD static float element(const Block& b, int) { return fromHalf(b); }
};
struct DecodeBF16 {
    using Block = uint16_t;
    static constexpr int kElems = 1;
    MB_HD static float element(const Block& b, int) { return fromBf16(b); }
};

// ---- 32-element blocks ----

// d * q.
struct DecodeQ8_0 {
    using Block = BlockQ8_0;
    static constexpr int kElems = 32;
    MB_HD static float element(const Block& b, int e) { return mul(fromHalf(b.d), static_cast<float>(b.qs[e])); }
    MB_HD static void group(const Block& b, int, float* out) {
        const float d = fromHalf(b.d);
        MB_UNROLL for (int i = 0; i < 32; ++i) out[i] = mul(d, static_cast<float>(b.qs[i]));
    }
};

// d * (q - 8).
struct DecodeQ4_0 {
    using Block = BlockQ4_0;
    static constexpr int kElems = 32;
    MB_HD static float element(const Block& b, int e) {
        return mul(fromHalf(b.d), static_cast<float>(nibble32(b.qs, e) - 8));
    }
    MB_HD static void group(const Block& b, int, float* out) {
        const float d = fromHalf(b.d);
        MB_UNROLL for (int i = 0; i < 32; ++i) out[i] = mul(d, static_cast<float>(nibble32(b.qs, i) - 8));
    }
};

// q * d + m.
struct DecodeQ4_1 {
    using Block = BlockQ4_1;
    static constexpr int kElems = 32;
    MB_HD static float element(const Block& b, int e) {
        return mul(static_cast<float>(nibble32(b.qs, e)), fromHalf(b.d)) + fromHalf(b.m);
    }
    MB_HD static void group(const Block& b, int, float* out) {
        const float d = fromHalf(b.d), m = fromHalf(b.m);
        MB_UNROLL for (int i = 0; i < 32; ++i) out[i] = mul(static_cast<float>(nibble32(b.qs, i)), d) + m;
    }
};

// (q - 16) * d, q five bits.
struct DecodeQ5_0 {
    using Block = BlockQ5_0;
    static constexpr int kElems = 32;
    MB_HD static float element(const Block& b, int e) {
        return mul(static_cast<float>((nibble32(b.qs, e) | fifthBit(b.qh, e)) - 16), fromHalf(b.d));
    }
    MB_HD static void group(const Block& b, int, float* out) {
        const float d = fromHalf(b.d);
        MB_UNROLL for (int i = 0; i < 32; ++i)
            out[i] = mul(static_cast<float>((nibble32(b.qs, i) | fifthBit(b.qh, i)) - 16), d);
    }
};

// q * d + m, q five bits.
struct DecodeQ5_1 {
    using Block = BlockQ5_1;
    static constexpr int kElems = 32;
    MB_HD static float element(const Block& b, int e) {
        return mul(static_cast<float>(nibble32(b.qs, e) | fifthBit(b.qh, e)), fromHalf(b.d)) + fromHalf(b.m);
    }
    MB_HD static void group(const Block& b, int, float* out) {
        const float d = fromHalf(b.d), m = fromHalf(b.m);
        MB_UNROLL for (int i = 0; i < 32; ++i)
            out[i] = mul(static_cast<float>(nibble32(b.qs, i) | fifthBit(b.qh, i)), d) + m;
    }
};

// d * level(q).
struct DecodeIq4Nl {
    using Block = BlockIq4Nl;
    static constexpr int kElems = 32;
    MB_HD static float element(const Block& b, int e) { return mul(fromHalf(b.d), iq4Level(nibble32(b.qs, e))); }
    MB_HD static void group(const Block& b, int, float* out) {
        const float d = fromHalf(b.d);
        MB_UNROLL for (int i = 0; i < 32; ++i) out[i] = mul(d, iq4Level(nibble32(b.qs, i)));
    }
};

// ---- 256-element super-blocks ----
// Positions follow kernels/quant_blocks.h (the reading of kernels/cpu/kquant_layout.h), values the
// products of quant_k.cpp in its order. Group j of a super-block is elements 32j .. 32j+31: one
// 32-element sub-block of Q4_K, Q5_K and IQ4_XS, two 16-element sub-blocks of Q2_K, Q3_K and Q6_K.

// The 2-bit field of element e shared by Q2_K and Q3_K: byte (e / 128) * 32 + e % 32, bits
// 2 * ((e % 128) / 32).
MB_HD int twoBits(const uint8_t* qs, int e) { return (qs[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3; }

// Q4_K/Q5_K's 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes.
MB_HD void scaleMinK4(int j, const uint8_t* q, int& scale, int& min) {
    if (j < 4) {
        scale = q[j] & 63;
        min = q[j + 4] & 63;
    } else {
        scale = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
        min = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
    }
}

// d * sc * q - dmin * m per 16-element sub-block (sc low nibble, m high nibble of scales[s]).
struct DecodeQ2_K {
    using Block = BlockQ2_K;
    static constexpr int kElems = 256;
    MB_HD static float element(const Block& b, int e) {
        const int sm = b.scales[e / 16];
        const float dl = mul(fromHalf(b.d), static_cast<float>(sm & 0xF));
        const float ml = mul(fromHalf(b.dmin), static_cast<float>(sm >> 4));
        return mul(dl, static_cast<float>(twoBits(b.qs, e))) - ml;
    }
    MB_HD static void group(const Block& b, int j, float* out) {
        const float d = fromHalf(b.d), dmin = fromHalf(b.dmin);
        MB_UNROLL for (int h = 0; h < 2; ++h) {
            const int sm = b.scales[2 * j + h];
            const float dl = mul(d, static_cast<float>(sm & 0xF)), ml = mul(dmin, static_cast<float>(sm >> 4));
            MB_UNROLL for (int i = 0; i < 16; ++i)
                out[16 * h + i] = mul(dl, static_cast<float>(twoBits(b.qs, 32 * j + 16 * h + i))) - ml;
        }
    }
};

// d * (scale - 32) * q, q = the two low bits minus 4 unless the hmask bit is set; 6-bit scales
// per 16-element sub-block.
struct DecodeQ3_K {
    using Block = BlockQ3_K;
    static constexpr int kElems = 256;
    MB_HD static int scale(const uint8_t* scales, int s) {
        const int low = s < 8 ? (scales[s] & 0xF) : (scales[s - 8] >> 4);
        const int high = (scales[8 + s % 4] >> (2 * (s / 4))) & 3;
        return low | (high << 4);
    }
    MB_HD static int value(const Block& b, int e) {
        return twoBits(b.qs, e) - (((b.hmask[e % 32] >> (e / 32)) & 1) ? 0 : 4);
    }
    MB_HD static float element(const Block& b, int e) {
        const float dl = mul(fromHalf(b.d), static_cast<float>(scale(b.scales, e / 16) - 32));
        return mul(dl, static_cast<float>(value(b, e)));
    }
    MB_HD static void group(const Block& b, int j, float* out) {
        const float d = fromHalf(b.d);
        MB_UNROLL for (int h = 0; h < 2; ++h) {
            const float dl = mul(d, static_cast<float>(scale(b.scales, 2 * j + h) - 32));
            MB_UNROLL for (int i = 0; i < 16; ++i) out[16 * h + i] = mul(dl, static_cast<float>(value(b, 32 * j + 16 * h + i)));
        }
    }
};

// Q4_K and Q5_K: d * sc * q - dmin * m per 32-element sub-block; Bits(b, e) is q.
template <class B, int (*Bits)(const B&, int)>
struct DecodeK4Or5 {
    using Block = B;
    static constexpr int kElems = 256;
    MB_HD static float element(const Block& b, int e) {
        int sc = 0, m = 0;
        scaleMinK4(e / 32, b.scales, sc, m);
        const float dl = mul(fromHalf(b.d), static_cast<float>(sc)), ml = mul(fromHalf(b.dmin), static_cast<float>(m));
        return mul(dl, static_cast<float>(Bits(b, e))) - ml;
    }
    MB_HD static void group(const Block& b, int j, float* out) {
        int sc = 0, m = 0;
        scaleMinK4(j, b.scales, sc, m);
        const float dl = mul(fromHalf(b.d), static_cast<float>(sc)), ml = mul(fromHalf(b.dmin), static_cast<float>(m));
        MB_UNROLL for (int i = 0; i < 32; ++i) out[i] = mul(dl, static_cast<float>(Bits(b, 32 * j + i))) - ml;
    }
};
// The nibble of qs[(e / 64) * 32 + e % 32]: low for even sub-blocks, high for odd.
MB_HD int q4KBits(const BlockQ4_K& b, int e) { return (b.qs[(e / 64) * 32 + e % 32] >> (4 * ((e / 32) % 2))) & 0xF; }
// Q4_K's nibble plus 16 where qh[e % 32] has bit e / 32.
MB_HD int q5KBits(const BlockQ5_K& b, int e) {
    const int low = (b.qs[(e / 64) * 32 + e % 32] >> (4 * ((e / 32) % 2))) & 0xF;
    return low | (((b.qh[e % 32] >> (e / 32)) & 1) << 4);
}
using DecodeQ4_K = DecodeK4Or5<BlockQ4_K, q4KBits>;
using DecodeQ5_K = DecodeK4Or5<BlockQ5_K, q5KBits>;

// d * sc * (q - 32): 4 bits from ql, 2 from qh, signed 8-bit scale per 16-element sub-block.
struct DecodeQ6_K {
    using Block = BlockQ6_K;
    static constexpr int kElems = 256;
    MB_HD static int value(const Block& b, int e) {
        const int h = e / 128, i = e % 128;
        const int low = (b.ql[h * 64 + i % 64] >> (4 * (i / 64))) & 0xF;
        const int high = (b.qh[h * 32 + i % 32] >> (2 * (i / 32))) & 3;
        return (low | (high << 4)) - 32;
    }
    MB_HD static float element(const Block& b, int e) {
        return mul(mul(fromHalf(b.d), static_cast<float>(b.scales[e / 16])), static_cast<float>(value(b, e)));
    }
    MB_HD static void group(const Block& b, int j, float* out) {
        const float d = fromHalf(b.d);
        MB_UNROLL for (int h = 0; h < 2; ++h) {
            const float dl = mul(d, static_cast<float>(b.scales[2 * j + h]));
            MB_UNROLL for (int i = 0; i < 16; ++i) out[16 * h + i] = mul(dl, static_cast<float>(value(b, 32 * j + 16 * h + i)));
        }
    }
};

// d * (scale - 32) * level(q): IQ4_NL's levels in 32-element sub-blocks with 6-bit scales.
struct DecodeIq4Xs {
    using Block = BlockIq4Xs;
    static constexpr int kElems = 256;
    MB_HD static int scale(const Block& b, int s) {
        return (((b.scalesL[s / 2] >> (4 * (s % 2))) & 0xF) | (((b.scalesH >> (2 * s)) & 3) << 4)) - 32;
    }
    MB_HD static float element(const Block& b, int e) {
        const float dl = mul(fromHalf(b.d), static_cast<float>(scale(b, e / 32)));
        return mul(dl, iq4Level(nibble32(b.qs + (e / 32) * 16, e % 32)));
    }
    MB_HD static void group(const Block& b, int j, float* out) {
        const float dl = mul(fromHalf(b.d), static_cast<float>(scale(b, j)));
        MB_UNROLL for (int i = 0; i < 32; ++i) out[i] = mul(dl, iq4Level(nibble32(b.qs + j * 16, i)));
    }
};

// Calls fn(D{}) with the decoder of `type` and returns true, or returns false for a type the
// device does not compute with (Q8_K: activations only). The one list of device weight types;
// no default, so -Wswitch names a new enumerator here, and tests/engine/device_decode_test.cpp
// checks every row of the tensor-type table against it. Host code (the launchers' dispatch).
template <class Fn>
bool withDecoder(TensorType type, Fn&& fn) {
    switch (type) {
    case TensorType::F32: fn(DecodeF32{}); return true;
    case TensorType::F16: fn(DecodeF16{}); return true;
    case TensorType::BF16: fn(DecodeBF16{}); return true;
    case TensorType::Q8_0: fn(DecodeQ8_0{}); return true;
    case TensorType::Q4_0: fn(DecodeQ4_0{}); return true;
    case TensorType::Q4_1: fn(DecodeQ4_1{}); return true;
    case TensorType::Q5_0: fn(DecodeQ5_0{}); return true;
    case TensorType::Q5_1: fn(DecodeQ5_1{}); return true;
    case TensorType::IQ4_NL: fn(DecodeIq4Nl{}); return true;
    case TensorType::Q2_K: fn(DecodeQ2_K{}); return true;
    case TensorType::Q3_K: fn(DecodeQ3_K{}); return true;
    case TensorType::Q4_K: fn(DecodeQ4_K{}); return true;
    case TensorType::Q5_K: fn(DecodeQ5_K{}); return true;
    case TensorType::Q6_K: fn(DecodeQ6_K{}); return true;
    case TensorType::IQ4_XS: fn(DecodeIq4Xs{}); return true;
    case TensorType::Q8_K: return false;
    }
    return false; // an id outside the enumeration
}

// True when the device computes with `type`, and its decoder's block is the table's row
// (elements and bytes per block), so rows are sized by rowBytes() alike on host and device.
inline bool deviceDecodes(TensorType type) {
    bool geometry = false;
    const bool known = withDecoder(type, [&](auto d) {
        using D = decltype(d);
        geometry = D::kElems == blockSize(type) && sizeof(typename D::Block) == blockBytes(type);
    });
    return known && geometry;
}

// Element i of a row of D's blocks starting at `row`.
template <class D>
MB_HD float rowElement(const uint8_t* row, int64_t i) {
    const auto* blocks = reinterpret_cast<const typename D::Block*>(row);
    return D::element(blocks[i / D::kElems], static_cast<int>(i % D::kElems));
}

// Elements 32g .. 32g+31 of a row of D's blocks (a block type) into out[32].
template <class D>
MB_HD void rowGroup(const uint8_t* row, int64_t g, float* out) {
    constexpr int kGroups = D::kElems / 32;
    const auto* blocks = reinterpret_cast<const typename D::Block*>(row);
    D::group(blocks[g / kGroups], static_cast<int>(g % kGroups), out);
}

} // namespace mb::kernels::decode
