// Repacking Q4_K and Q6_K matrices into 16-row panels (the layouts of kernels/cpu/panels_k.h).
#include "kernels/cpu/panels_k.h"

#include "kernels/cpu/kquant_layout.h"
#include "kernels/cpu/panels.h"

#include <cstring>

namespace mb::kernels {

namespace {

// fill(block, lane, out) for each super-block of each row (block null past the last row), out
// the panel's bytes of that super-block.
template <class Block, class Fill>
void packSuperBlocks(const Block* w, int64_t rows, int64_t nb, int64_t blockBytes, uint8_t* out, Fill fill) {
    const int64_t panels = (rows + kPanelRows - 1) / kPanelRows;
    std::memset(out, 0, static_cast<size_t>(panels * nb * blockBytes));
    for (int64_t p = 0; p < panels; ++p)
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t* dst = out + (p * nb + b) * blockBytes;
            for (int lane = 0; lane < kPanelRows; ++lane) {
                const int64_t r = p * kPanelRows + lane;
                if (r < rows) fill(w[r * nb + b], lane, dst);
            }
        }
}

void putHalf(uint8_t* at, uint16_t h) { std::memcpy(at, &h, 2); }

} // namespace

size_t panelsQ4_KBytes(int64_t rows, int64_t nb) { return blockPanelsBytes(rows, nb, q4kPanelStride(nb)); }

void packPanelsQ4_K(const BlockQ4_K* w, int64_t rows, int64_t nb, uint8_t* out) {
    packSuperBlocks(w, rows, nb, kQ4KPanelBlockBytes, out, [](const BlockQ4_K& src, int lane, uint8_t* dst) {
        for (int c = 0; c < 4; ++c)
            for (int g = 0; g < 8; ++g) std::memcpy(dst + (8 * c + g) * 64 + 4 * lane, src.qs + 32 * c + 4 * g, 4);
        for (int j = 0; j < 8; ++j) {
            uint8_t scale = 0, min = 0;
            scaleMinK4(j, src.scales, scale, min);
            dst[kQ4KPanelScales + j * 16 + lane] = scale;
            dst[kQ4KPanelMins + (j / 2) * 32 + 2 * lane + j % 2] = min;
        }
        putHalf(dst + kQ4KPanelD + 2 * lane, src.d);
        putHalf(dst + kQ4KPanelDmin + 2 * lane, src.dmin);
    });
}

size_t panelsQ6_KBytes(int64_t rows, int64_t nb) { return blockPanelsBytes(rows, nb, q6kPanelStride(nb)); }

void packPanelsQ6_K(const BlockQ6_K* w, int64_t rows, int64_t nb, uint8_t* out) {
    packSuperBlocks(w, rows, nb, kQ6KPanelBlockBytes, out, [](const BlockQ6_K& src, int lane, uint8_t* dst) {
        uint8_t q[kSuperBlockSize]; // the 6-bit values 0..63 in element order
        layout::q6Values(src, q);
        for (int j = 0; j < 16; ++j)
            for (int g = 0; g < 4; ++g) {
                // Elements 16j + 4g.. : low nibbles in group 4 (j / 2) + g (high half for odd j),
                // upper bits in group j at bit pair g.
                uint8_t* low = dst + (4 * (j / 2) + g) * 64 + 4 * lane;
                uint8_t* high = dst + kQ6KPanelHigh + j * 64 + 4 * lane;
                for (int i = 0; i < 4; ++i) {
                    const uint8_t v = q[16 * j + 4 * g + i];
                    low[i] |= static_cast<uint8_t>((v & 0xF) << (4 * (j % 2)));
                    high[i] |= static_cast<uint8_t>((v >> 4) << (2 * g));
                }
            }
        for (int j = 0; j < 16; ++j) dst[kQ6KPanelScales + j * 16 + lane] = static_cast<uint8_t>(src.scales[j]);
        putHalf(dst + kQ6KPanelD + 2 * lane, src.d);
    });
}

} // namespace mb::kernels
