// SPDX-License-Identifier: MIT
// The AMX kernels' walk over a block of a MATMUL, generic over the tile unit that runs it:
// Tiles::config() / release(), Tiles::load<T>(p, stride) / store<T>(p, stride) of tile T
// (16 rows of 64 bytes, rows `stride` bytes apart), Tiles::dot<Op, C, A, W>() for
// C += A x W with Op = Bf16Amx (tdpbf16ps) or Int8Amx (tdpbssd). amx.cpp instantiates it with
// the hardware's tiles; tests/engine/amx_layout_test.cpp with a software model of them, so the
// packing, padding and partial tiles are checked on hosts without AMX. A step covers 32 output
// rows x 32 columns: 2 x 2 accumulator tiles (0-3), two activation tiles (4, 5: 16 rows x one
// block of k, packed with +0 / 0 past K and M) and two weight tiles (6, 7: 16 rows of the
// weight tile's pairs or quads x 16 columns, straight from the WeightTile, padded past K with
// -0 / 0; columns past N read other columns' weights, whose outputs are never stored).
// Accumulators go through a small buffer, so partial tiles need no other configuration, and
// NaN results are stored as the canonical NaN.
// Include only where the instantiating backend's instruction set is enabled.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mxu/kernels/kernels.hpp"

namespace tpu::engine::amx {

inline constexpr uint32_t kTileRows = 16;   // rows of every tile
inline constexpr uint32_t kRowBytes = 64;   // bytes of every tile row
inline constexpr uint32_t kStep = 32;       // output rows and columns of one step (2 x 2 tiles)
inline constexpr uint32_t kTileWords = 256; // 16 x 16 accumulators of a tile

// tdpbf16ps on pairs (W[2p][n] low, W[2p + 1][n] high): one tile row of activations is one
// block of 32 k.
struct Bf16Amx {
    static constexpr uint32_t kElemBytes = 2;
    static constexpr uint32_t kBlockK = 32;
    static constexpr bool kFloat = true;
    static const uint32_t *weights(const WeightTile &tile) { return tile.bf16_amx_pairs(); }
};

// tdpbssd on quads of int8 k: one tile row of activations is 64 k.
struct Int8Amx {
    static constexpr uint32_t kElemBytes = 1;
    static constexpr uint32_t kBlockK = 64;
    static constexpr bool kFloat = false;
    static const uint32_t *weights(const WeightTile &tile) { return tile.int8_quads(); }
};

// Copies rows [m, m + rows) x columns [n, n + cols) of the accumulators into the 2 x 2 tile
// buffers (zero elsewhere, or everywhere without ACCUMULATE).
inline void load_acc(const MatmulArgs &args, uint32_t m, uint32_t rows, uint32_t n, uint32_t cols,
                     uint32_t (*c)[kTileWords]) {
    std::memset(c, 0, 4 * sizeof(*c));
    if (!args.accumulate)
        return;
    for (uint32_t r = 0; r < rows; r++) {
        const uint8_t *row = args.acc + (m + r) * args.acc_stride + 4 * uint64_t(n);
        for (uint32_t half = 0; half < 2 && 16 * half < cols; half++)
            std::memcpy(&c[(r / 16) * 2 + half][(r % 16) * 16], row + 64 * half,
                        4 * std::min(16u, cols - 16 * half));
    }
}

// The inverse, NaN made canonical for floating-point results.
template <bool Float>
void store_acc(const MatmulArgs &args, uint32_t m, uint32_t rows, uint32_t n, uint32_t cols,
               uint32_t (*c)[kTileWords]) {
    if constexpr (Float) {
        for (int t = 0; t < 4; t++)
            for (uint32_t i = 0; i < kTileWords; i++)
                if ((c[t][i] & 0x7fffffffu) > 0x7f800000u)
                    c[t][i] = kCanonicalNan;
    }
    for (uint32_t r = 0; r < rows; r++) {
        uint8_t *row = args.acc + (m + r) * args.acc_stride + 4 * uint64_t(n);
        for (uint32_t half = 0; half < 2 && 16 * half < cols; half++)
            std::memcpy(row + 64 * half, &c[(r / 16) * 2 + half][(r % 16) * 16],
                        4 * std::min(16u, cols - 16 * half));
    }
}

// Rows [m0, m1) x columns [n0, n1) of args against tile (the BlockKernel contract).
template <class Tiles, class Op>
void block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1, uint32_t n0,
           uint32_t n1) {
    const uint32_t k = tile.k();
    const uint64_t ldw = 4 * uint64_t(tile.n()); // bytes per row of pairs / quads
    const auto *w = reinterpret_cast<const uint8_t *>(Op::weights(tile));
    const uint32_t blocks = (k + Op::kBlockK - 1) / Op::kBlockK;
    const uint64_t a_row = uint64_t(blocks) * kRowBytes; // bytes per packed activation row
    // 32 rows of activations, zero past K and past the block's rows.
    thread_local std::vector<uint8_t> a_buf;
    a_buf.resize(kStep * a_row);
    alignas(64) uint32_t c[4][kTileWords];

    Tiles::config();
    for (uint32_t m = m0; m < m1; m += kStep) {
        const uint32_t rows = std::min(kStep, m1 - m);
        std::fill(a_buf.begin(), a_buf.end(), uint8_t(0));
        for (uint32_t r = 0; r < rows; r++)
            std::memcpy(&a_buf[r * a_row], args.src_row(m + r), uint64_t(k) * Op::kElemBytes);
        const uint8_t *a0 = a_buf.data();
        const uint8_t *a1 = a0 + kTileRows * a_row;
        for (uint32_t n = n0; n < n1; n += kStep) {
            const uint32_t cols = std::min(kStep, n1 - n);
            load_acc(args, m, rows, n, cols, c);
            Tiles::template load<0>(c[0], kRowBytes);
            Tiles::template load<1>(c[1], kRowBytes);
            Tiles::template load<2>(c[2], kRowBytes);
            Tiles::template load<3>(c[3], kRowBytes);
            for (uint32_t b = 0; b < blocks; b++) {
                const uint8_t *wb = w + uint64_t(b) * kTileRows * ldw + 4 * uint64_t(n);
                Tiles::template load<4>(a0 + b * kRowBytes, a_row);
                Tiles::template load<6>(wb, ldw);
                Tiles::template dot<Op, 0, 4, 6>();
                if (cols > 16) {
                    Tiles::template load<7>(wb + 64, ldw);
                    Tiles::template dot<Op, 1, 4, 7>();
                }
                if (rows > 16) {
                    Tiles::template load<5>(a1 + b * kRowBytes, a_row);
                    Tiles::template dot<Op, 2, 5, 6>();
                    if (cols > 16)
                        Tiles::template dot<Op, 3, 5, 7>();
                }
            }
            Tiles::template store<0>(c[0], kRowBytes);
            Tiles::template store<1>(c[1], kRowBytes);
            Tiles::template store<2>(c[2], kRowBytes);
            Tiles::template store<3>(c[3], kRowBytes);
            store_acc<Op::kFloat>(args, m, rows, n, cols, c);
        }
    }
    Tiles::release();
}

} // namespace tpu::engine::amx
