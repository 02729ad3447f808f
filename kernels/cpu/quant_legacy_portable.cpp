// Portable Q4_1, Q5_0, Q5_1 and IQ4_NL x Q8_0 dots: the reference the SIMD tiles are tested
// against, and the activation block sums the formats with a min read.
#include "kernels/cpu/fp16.h"
#include "kernels/cpu/quant_legacy.h"

#include <cstring>

namespace mb::kernels {

void activationSums(const BlockQ8_0* x, int64_t nb, Q8Sums* xs) {
    for (int64_t b = 0; b < nb; ++b) {
        int32_t sum = 0;
        for (int8_t q : x[b].qs) sum += q;
        xs[b].d = fp16ToFloat(x[b].d);
        xs[b].s = xs[b].d * static_cast<float>(sum); // exact: |sum| < 2^12, d 11 bits
    }
}

namespace portable {

namespace {

// The 4-bit value of element j (0..31): the low nibble of qs[j] for j < 16, else the high
// nibble of qs[j - 16].
inline int nibble(const uint8_t* qs, int j) { return j < 16 ? (qs[j] & 0xF) : (qs[j - 16] >> 4); }
// Q5_0 and Q5_1's fifth bit of element j: bit j of qh (32 bits, little-endian), worth 16.
inline int fifth(const uint8_t* qhBytes, int j) {
    uint32_t qh = 0;
    std::memcpy(&qh, qhBytes, 4);
    return static_cast<int>((qh >> j) & 1) << 4;
}

// Per block the exact sum of value(block, j) * x.qs[j], scaled by dw * dx; plus mw * xs for the
// formats with a min (a member m).
template <class Block, class Value>
float dot(const Block* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb, Value value) {
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
        int32_t sum = 0;
        for (int j = 0; j < 32; ++j) sum += value(w[b], j) * x[b].qs[j];
        s += fp16ToFloat(w[b].d) * fp16ToFloat(x[b].d) * static_cast<float>(sum);
        if constexpr (requires { w[b].m; }) s += fp16ToFloat(w[b].m) * xs[b].s;
    }
    return s;
}

template <class Block, class Dot>
void gemm(Dot d, const Block* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
          int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    for (int64_t t = 0; t < tokens; ++t)
        for (int64_t r = 0; r < rows; ++r)
            y[t * ldy + r] = d(w + r * ldw, x + t * ldx, xs + t * ldx, nb);
}

} // namespace

float dotQ4_1(const BlockQ4_1* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb) {
    return dot(w, x, xs, nb, [](const BlockQ4_1& b, int j) { return nibble(b.qs, j); });
}

float dotQ5_0(const BlockQ5_0* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb) {
    return dot(w, x, xs, nb, [](const BlockQ5_0& b, int j) { return (nibble(b.qs, j) | fifth(b.qh, j)) - 16; });
}

float dotQ5_1(const BlockQ5_1* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb) {
    return dot(w, x, xs, nb, [](const BlockQ5_1& b, int j) { return nibble(b.qs, j) | fifth(b.qh, j); });
}

float dotIq4Nl(const BlockIq4Nl* w, const BlockQ8_0* x, const Q8Sums* xs, int64_t nb) {
    return dot(w, x, xs, nb, [](const BlockIq4Nl& b, int j) { return static_cast<int>(kIq4NlValues[nibble(b.qs, j)]); });
}

void gemmQ4_1(const BlockQ4_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(dotQ4_1, w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

void gemmQ5_0(const BlockQ5_0* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(dotQ5_0, w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

void gemmQ5_1(const BlockQ5_1* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
              int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(dotQ5_1, w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

void gemmIq4Nl(const BlockIq4Nl* w, int64_t ldw, const BlockQ8_0* x, const Q8Sums* xs, int64_t ldx, int64_t nb,
               int64_t rows, int64_t tokens, float* y, int64_t ldy) {
    gemm(dotIq4Nl, w, ldw, x, xs, ldx, nb, rows, tokens, y, ldy);
}

} // namespace portable

} // namespace mb::kernels
