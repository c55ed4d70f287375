// SPDX-License-Identifier: MIT
// The AMX kernels' walk over a block of a MATMUL, generic over the tile unit that runs it:
// Tiles::config() / release(), Tiles::load<T>(p, stride) / store<T>(p, stride) of tile T
// (16 rows of 64 bytes, rows `stride` bytes apart), Tiles::zero<T>(), Tiles::dot<Op, C, A, W>()
// for C += A x W with Op = Bf16Amx (tdpbf16ps) or Int8Amx (tdpbssd). amx.cpp instantiates it
// with the hardware's tiles; tests/engine/mxu/amx_layout_test.cpp with a software model of them, so
// the packing, padding and partial tiles are checked on hosts without AMX. A step covers 32
// output rows x 32 columns: 2 x 2 accumulator tiles (0-3), two activation tiles (4, 5: 16 rows x
// one block of k) and two weight tiles (6, 7: 16 rows of the weight tile's pairs or quads x 16
// columns, straight from the WeightTile, padded past K with -0 / 0; columns past N read other
// columns' weights, whose outputs are never stored). Activations are read in place when K is
// whole blocks (else packed with +0 / 0 past K and the step's rows); a whole step's
// accumulators are loaded and stored in place, a partial one's through a small buffer, so
// partial tiles need no other configuration. NaN results are stored as the canonical NaN.
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

// Rows [m, m + 16) of args as one tile operand straight from the activations: they must be one
// group (one stride apart) and K whole tile rows, so that no load reads past a row's K.
template <class Op>
bool direct_rows(const MatmulArgs &args, uint32_t k, uint32_t m, const uint8_t **rows) {
    const uint32_t group = args.row_group ? args.row_group : args.rows;
    if (k % Op::kBlockK != 0 || m / group != (m + kTileRows - 1) / group)
        return false;
    *rows = args.src_row(m);
    return true;
}

// A step's activations (two tiles of 16 rows): straight from the source where direct_rows()
// allows both, else packed into buf, zero past K and past the step's rows.
template <class Op> struct StepRows {
    const uint8_t *half[2];
    uint64_t stride;

    StepRows(const MatmulArgs &args, uint32_t k, uint32_t m, uint32_t rows,
             std::vector<uint8_t> &buf) {
        if (rows == kStep && direct_rows<Op>(args, k, m, &half[0]) &&
            direct_rows<Op>(args, k, m + kTileRows, &half[1])) {
            stride = args.src_stride;
            return;
        }
        stride = uint64_t(k + Op::kBlockK - 1) / Op::kBlockK * kRowBytes;
        buf.assign(kStep * stride, 0);
        for (uint32_t r = 0; r < rows; r++)
            std::memcpy(&buf[r * stride], args.src_row(m + r), uint64_t(k) * Op::kElemBytes);
        half[0] = buf.data();
        half[1] = half[0] + kTileRows * stride;
    }
};

// Tiles 0-3 += the step's activations x weight columns [n, n + 32) (tiles 1 and 3 only if
// wide, tiles 2 and 3 only if tall), one block of k at a time.
template <class Tiles, class Op>
void dot_blocks(const StepRows<Op> &a, const uint8_t *w, uint64_t ldw, uint32_t blocks, bool tall,
                bool wide) {
    for (uint32_t b = 0; b < blocks; b++) {
        const uint8_t *wb = w + uint64_t(b) * kTileRows * ldw;
        Tiles::template load<4>(a.half[0] + b * kRowBytes, a.stride);
        Tiles::template load<6>(wb, ldw);
        Tiles::template dot<Op, 0, 4, 6>();
        if (wide) {
            Tiles::template load<7>(wb + kRowBytes, ldw);
            Tiles::template dot<Op, 1, 4, 7>();
        }
        if (tall) {
            Tiles::template load<5>(a.half[1] + b * kRowBytes, a.stride);
            Tiles::template dot<Op, 2, 5, 6>();
            if (wide)
                Tiles::template dot<Op, 3, 5, 7>();
        }
    }
}

// NaN results as the canonical NaN, in `rows` rows of 32 words `stride` bytes apart.
inline void canonicalize_nans(uint8_t *p, uint64_t stride, uint32_t rows) {
    for (uint32_t r = 0; r < rows; r++) {
        uint32_t *row = reinterpret_cast<uint32_t *>(p + r * stride);
        for (uint32_t i = 0; i < kStep; i++)
            row[i] = (row[i] & 0x7fffffffu) > 0x7f800000u ? kCanonicalNan : row[i];
    }
}

// A whole step of 32 x 32 accumulators, which the tiles load and store in place.
template <class Tiles, class Op>
void full_step(const MatmulArgs &args, const StepRows<Op> &a, const uint8_t *w, uint64_t ldw,
               uint32_t blocks, uint32_t m, uint32_t n) {
    uint8_t *c = args.acc + m * args.acc_stride + 4 * uint64_t(n);
    uint8_t *c_low = c + kTileRows * args.acc_stride;
    if (args.accumulate) {
        Tiles::template load<0>(c, args.acc_stride);
        Tiles::template load<1>(c + kRowBytes, args.acc_stride);
        Tiles::template load<2>(c_low, args.acc_stride);
        Tiles::template load<3>(c_low + kRowBytes, args.acc_stride);
    } else {
        Tiles::template zero<0>();
        Tiles::template zero<1>();
        Tiles::template zero<2>();
        Tiles::template zero<3>();
    }
    dot_blocks<Tiles, Op>(a, w, ldw, blocks, true, true);
    Tiles::template store<0>(c, args.acc_stride);
    Tiles::template store<1>(c + kRowBytes, args.acc_stride);
    Tiles::template store<2>(c_low, args.acc_stride);
    Tiles::template store<3>(c_low + kRowBytes, args.acc_stride);
    if constexpr (Op::kFloat)
        canonicalize_nans(c, args.acc_stride, kStep);
}

// A partial step (rows or cols below 32): the accumulators go through a buffer of 2 x 2 tiles,
// zero outside the step.
template <class Tiles, class Op>
void partial_step(const MatmulArgs &args, const StepRows<Op> &a, const uint8_t *w, uint64_t ldw,
                  uint32_t blocks, uint32_t m, uint32_t rows, uint32_t n, uint32_t cols) {
    alignas(64) uint32_t c[4][kTileWords] = {};
    for (uint32_t r = 0; r < rows && args.accumulate; r++) {
        const uint8_t *row = args.acc + (m + r) * args.acc_stride + 4 * uint64_t(n);
        for (uint32_t half = 0; half < 2 && 16 * half < cols; half++)
            std::memcpy(&c[(r / 16) * 2 + half][(r % 16) * 16], row + 64 * half,
                        4 * std::min(16u, cols - 16 * half));
    }
    Tiles::template load<0>(c[0], kRowBytes);
    Tiles::template load<1>(c[1], kRowBytes);
    Tiles::template load<2>(c[2], kRowBytes);
    Tiles::template load<3>(c[3], kRowBytes);
    dot_blocks<Tiles, Op>(a, w, ldw, blocks, rows > 16, cols > 16);
    Tiles::template store<0>(c[0], kRowBytes);
    Tiles::template store<1>(c[1], kRowBytes);
    Tiles::template store<2>(c[2], kRowBytes);
    Tiles::template store<3>(c[3], kRowBytes);
    if constexpr (Op::kFloat)
        canonicalize_nans(reinterpret_cast<uint8_t *>(c), 2 * kRowBytes, 32);
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
    thread_local std::vector<uint8_t> a_buf;

    Tiles::config();
    for (uint32_t m = m0; m < m1; m += kStep) {
        const uint32_t rows = std::min(kStep, m1 - m);
        const StepRows<Op> a(args, k, m, rows, a_buf);
        for (uint32_t n = n0; n < n1; n += kStep) {
            const uint32_t cols = std::min(kStep, n1 - n);
            if (rows == kStep && cols == kStep)
                full_step<Tiles, Op>(args, a, w + 4 * uint64_t(n), ldw, blocks, m, n);
            else
                partial_step<Tiles, Op>(args, a, w + 4 * uint64_t(n), ldw, blocks, m, rows, n,
                                        cols);
        }
    }
    Tiles::release();
}

} // namespace tpu::engine::amx
