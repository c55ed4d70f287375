// SPDX-License-Identifier: MIT
// Register tiles: the common structure of the vector MXU kernels. A block of a MATMUL is cut
// into tiles of up to `rows` accumulator rows x `vectors` SIMD vectors of columns; a tile keeps
// its accumulators in registers while it walks the steps of k in ascending order. A step is one
// k (int8 words, bf16, fp32), two k of one bf16 chain (vdpbf16ps: k and k + 2) or a quad of 4 k
// (int8 with vpdpbusd). The activations of a tile's rows are first packed into 32-bit words,
// row by row (bf16 widened to fp32 or paired by chain, int8 sign-extended, or quads biased to
// unsigned bytes), so every step broadcasts them from one small buffer.
#pragma once

#include <cstdint>
#include <utility>

#include "mxu/mxu_types.hpp"
#include "mxu/weight_tile.hpp"

namespace tpu::engine::tiles {

inline constexpr uint32_t kMaxRows = 8;
inline constexpr uint32_t kMaxVectors = 4;
// Steps of activations packed at once (the accumulators go through memory between chunks,
// which is exact: stores and loads of fp32 and int32 do not round). A multiple of the steps of
// a bf16 block (32 or 16), so chunks start at blocks. 64 keeps a 6 x 4 zmm tile's weight panel
// (16 KiB of fp32) and the packed rows (12 KiB) in a 48 KiB L1 cache together: on an Intel Xeon
// fp32 at 2048^3 went from 0.62 to 0.69 of oneDNN (128 steps), 32 steps gave no more.
inline constexpr uint32_t kStepChunk = 64;
// Rows packed at once.
inline constexpr uint32_t kPanelRows = 48;
// Bytes of weights (steps x N words) that every panel of a block walks before the next steps:
// a long chain's weights (fp32 at K = 4096 x 128 columns: 2 MiB) would otherwise be read back
// from beyond the L2 cache by every panel. Blocks of several panels (FastMxu) reuse each range.
inline constexpr uint64_t kL2WeightBytes = 512 << 10;

// One tile: for each step s < steps, row r, column c < cols:
//   acc[r][c] = mac(acc[r][c], a[r * a_stride + s], w[s * ldw + c])
// where acc row r is at acc + r * acc_stride. The accumulators start from memory if load_acc
// (else 0), plus bias[c] if bias is not null. cols is at most vectors x lanes and more than
// (vectors - 1) x lanes: only the last vector may be partial. a is a panel of packed
// activations (a_stride kStepChunk) or, for fp32, the activation rows themselves.
using TileFn = void (*)(const uint32_t *a, uint64_t a_stride, uint32_t steps, const uint32_t *w,
                        uint64_t ldw, uint8_t *acc, uint64_t acc_stride, uint32_t cols,
                        bool load_acc, const int32_t *bias);

struct TileSet {
    uint32_t rows;                    // most rows of a tile, <= kMaxRows
    uint32_t vectors;                 // most vectors of a tile, <= kMaxVectors
    uint32_t lanes;                   // 32-bit lanes per vector
    TileFn fn[kMaxRows][kMaxVectors]; // fn[r - 1][v - 1]: r rows, v vectors
};

// Sets row fn[R - 1] of a tile set from Tile<R, V>::run for V = 1..sizeof...(V).
template <template <int, int> class Tile, int R, int... V>
constexpr void fill_tile_row(TileFn *row, std::integer_sequence<int, V...>) {
    ((row[V] = &Tile<R, V + 1>::run), ...);
}

template <template <int, int> class Tile, int Vectors, int... R>
constexpr void fill_tile_rows(TileSet &set, std::integer_sequence<int, R...>) {
    (fill_tile_row<Tile, R + 1>(set.fn[R], std::make_integer_sequence<int, Vectors>{}), ...);
}

// A tile set of Tile<R, V>::run for R = 1..Rows, V = 1..Vectors.
template <template <int, int> class Tile, int Rows, int Vectors>
constexpr TileSet make_tile_set(uint32_t lanes) {
    TileSet set{Rows, Vectors, lanes, {}};
    fill_tile_rows<Tile, Vectors>(set, std::make_integer_sequence<int, Rows>{});
    return set;
}

// How a block's activations become tile operands, and which weights they meet.
enum class Operand {
    Int8Words, // sign-extended int8 x tile.words()
    Int8Quads, // quads of (a + 128) as unsigned bytes x tile.int8_quads(), with tile.int8_bias()
    Bf16,      // bf16 widened to fp32 x tile.words() (the kernel keeps the card's chains)
    Bf16Quads, // per quad q of k, the words (a[4q] high, a[4q + 2] low) and (a[4q + 1] high,
               // a[4q + 3] low) x tile.bf16_quads(); k >= K is +0 (its weight -0, so the pad
               // adds -0 to its chain: no change)
    Fp32,      // fp32 x tile.words()
};

// Rows [m0, m1) x columns [n0, n1) of args against tile, with the tiles of set.
void run_tiles(const TileSet &set, Operand operand, const WeightTile &tile, const MatmulArgs &args,
               uint32_t m0, uint32_t m1, uint32_t n0, uint32_t n1);

} // namespace tpu::engine::tiles
