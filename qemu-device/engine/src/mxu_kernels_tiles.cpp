// SPDX-License-Identifier: MIT
// The tile walk of the vector MXU kernels: activation packing, then tiles over rows and
// columns, one chunk of steps at a time. Plain code: the SIMD work happens in the TileFns.
#include "mxu_kernels_tiles.hpp"

#include <algorithm>
#include <cstring>

namespace tpu::engine::tiles {
namespace {

// Packs steps [s0, s0 + count) of rows [m, m + rows) into a[r * kStepChunk + (s - s0)].
void pack(Operand operand, const MatmulArgs &args, uint32_t k, uint32_t m, uint32_t rows,
          uint32_t s0, uint32_t count, uint32_t *a) {
    for (uint32_t r = 0; r < rows; r++) {
        const uint8_t *__restrict src = args.src_row(m + r);
        uint32_t *__restrict out = a + r * kStepChunk;
        switch (operand) {
        case Operand::Int8Words:
            for (uint32_t s = 0; s < count; s++)
                out[s] = uint32_t(int32_t(int8_t(src[s0 + s])));
            break;
        case Operand::Int8Quads: {
            // Whole quads, then the last one padded (padding meets zero weights).
            const uint32_t whole = std::min(count, k / 4 - std::min(k / 4, s0));
            std::memcpy(out, src + 4 * uint64_t(s0), 4 * uint64_t(whole));
            if (whole < count) {
                out[whole] = 0;
                std::memcpy(&out[whole], src + 4 * uint64_t(s0 + whole), k % 4);
            }
            for (uint32_t s = 0; s < count; s++)
                out[s] ^= 0x80808080u;
            break;
        }
        case Operand::Bf16: {
            const uint8_t *__restrict row = src + 2 * uint64_t(s0);
            for (uint32_t s = 0; s < count; s++) {
                uint16_t bits;
                std::memcpy(&bits, row + 2 * s, sizeof(bits));
                out[s] = uint32_t(bits) << 16;
            }
            break;
        }
        case Operand::Bf16Pairs: {
            // Whole pairs, then the last one padded with +0.
            const uint32_t whole = std::min(count, k / 2 - std::min(k / 2, s0));
            std::memcpy(out, src + 4 * uint64_t(s0), 4 * uint64_t(whole));
            if (whole < count) {
                out[whole] = 0;
                std::memcpy(&out[whole], src + 4 * uint64_t(s0 + whole), 2);
            }
            break;
        }
        case Operand::Fp32:
            std::memcpy(out, src + 4 * uint64_t(s0), 4 * uint64_t(count));
            break;
        }
    }
}

// Asks for the accumulators and activations of rows [m0, m1) to be brought into the cache
// while the current rows compute: in a tiled matmul they are rows of large strided matrices,
// which the hardware prefetchers do not follow from row to row.
void prefetch_rows(const MatmulArgs &args, uint32_t m0, uint32_t m1, uint64_t src_bytes,
                   uint64_t acc_offset, uint64_t acc_bytes) {
    constexpr uint64_t kLine = 64;
    for (uint32_t m = m0; m < m1; m++) {
        const uint8_t *src = args.src_row(m);
        const uint8_t *acc = args.acc + m * args.acc_stride + acc_offset;
        for (uint64_t i = 0; i < src_bytes; i += kLine)
            __builtin_prefetch(src + i);
        for (uint64_t i = 0; i < acc_bytes; i += kLine)
            __builtin_prefetch(acc + i, 1);
    }
}

} // namespace

void run_tiles(const TileSet &set, Operand operand, const WeightTile &tile, const MatmulArgs &args,
               uint32_t m0, uint32_t m1, uint32_t n0, uint32_t n1) {
    const uint32_t k = tile.k();
    const uint32_t n = tile.n();
    const bool quads = operand == Operand::Int8Quads;
    const bool pairs = operand == Operand::Bf16Pairs;
    const uint32_t steps = quads ? (k + 3) / 4 : pairs ? (k + 1) / 2 : k;
    const uint32_t *w = quads ? tile.int8_quads() : pairs ? tile.bf16_pairs() : tile.words();
    const uint32_t tile_cols = set.vectors * set.lanes;
    const uint64_t src_bytes = uint64_t(k) * mxu_elem_bytes(tile.type());
    // The activations of up to kPanelRows rows: a[row][step].
    alignas(64) uint32_t a[kPanelRows * kStepChunk];

    for (uint32_t p0 = m0; p0 < m1; p0 += kPanelRows) {
        const uint32_t p1 = std::min(m1, p0 + kPanelRows);
        prefetch_rows(args, p1, std::min(m1, p1 + kPanelRows), src_bytes, 4 * uint64_t(n0),
                      4 * uint64_t(n1 - n0));
        for (uint32_t s0 = 0; s0 < steps; s0 += kStepChunk) {
            const uint32_t count = std::min(kStepChunk, steps - s0);
            pack(operand, args, k, p0, p1 - p0, s0, count, a);
            const bool load_acc = args.accumulate || s0 > 0;
            // Columns outermost, so one column panel of weights stays in the L1 cache while
            // every row tile goes through it.
            for (uint32_t c0 = n0; c0 < n1; c0 += tile_cols) {
                const uint32_t cols = std::min(tile_cols, n1 - c0);
                const uint32_t vectors = (cols + set.lanes - 1) / set.lanes;
                const int32_t *bias = quads && s0 == 0 ? tile.int8_bias() + c0 : nullptr;
                for (uint32_t m = p0; m < p1; m += set.rows) {
                    const uint32_t rows = std::min(set.rows, p1 - m);
                    set.fn[rows - 1][vectors - 1](a + (m - p0) * kStepChunk, count,
                                                  w + uint64_t(s0) * n + c0, n,
                                                  args.acc + m * args.acc_stride + 4 * uint64_t(c0),
                                                  args.acc_stride, cols, load_acc, bias);
                }
            }
        }
    }
}

} // namespace tpu::engine::tiles
