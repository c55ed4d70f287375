// SPDX-License-Identifier: MIT
// Intel AMX MXU kernels, written from the facts measured on an AMX host
// (tests/golden/amx-bf16/README.md): bf16 by tdpbf16ps, which computes one of the card's
// blocks of 32 k exactly (both chains and the combining add, DAZ/FTZ/RNE whatever MXCSR holds),
// and int8 by tdpbssd (exact int32 sums with wrap-around, in blocks of 64 k). A step covers 32
// output rows x 32 columns: 2 x 2 accumulator tiles (tmm0-3), two activation tiles (tmm4-5:
// 16 rows x one block of k, packed with +0 / 0 padding past K and M) and two weight tiles
// (tmm6-7: 16 rows of the tile's pairs or quads x 16 columns, straight from the WeightTile,
// padded past K with -0 / 0). Accumulators go through a small buffer, so partial tiles need no
// other configuration and NaN results are stored as the canonical NaN. fp32 uses the AVX-512F
// kernel, and the set is offered only where amx_runnable() (mxu/kernels/amx.hpp) and its
// start-up check pass. Everything after the pragma is compiled for AMX + AVX-512F and runs
// only after those checks.
#if defined(__x86_64__)
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "mxu/kernels/avx512.hpp"
#include "mxu/kernels/tiles.hpp"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,amx-tile,amx-bf16,amx-int8"))),        \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,amx-tile,amx-bf16,amx-int8")
#endif

namespace tpu::engine {
namespace {

constexpr uint32_t kTileRows = 16;   // rows of every tile
constexpr uint32_t kRowBytes = 64;   // bytes of every tile row
constexpr uint32_t kStep = 32;       // output rows and columns of one step (2 x 2 tiles)
constexpr uint32_t kTileWords = 256; // 16 x 16 accumulators of a tile

// The tile configuration of palette 1: all eight tiles 16 rows of 64 bytes.
struct alignas(64) TileConfig {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
};

TileConfig full_tiles() {
    TileConfig config;
    for (int t = 0; t < 8; t++) {
        config.colsb[t] = kRowBytes;
        config.rows[t] = kTileRows;
    }
    return config;
}

struct Bf16Amx {
    static constexpr uint32_t kElemBytes = 2;
    static constexpr uint32_t kBlockK = 32; // k per tile row of activations
    static constexpr bool kFloat = true;
    static const uint32_t *weights(const WeightTile &tile) { return tile.bf16_amx_pairs(); }
};

struct Int8Amx {
    static constexpr uint32_t kElemBytes = 1;
    static constexpr uint32_t kBlockK = 64;
    static constexpr bool kFloat = false;
    static const uint32_t *weights(const WeightTile &tile) { return tile.int8_quads(); }
};

// Copies rows [m, m + rows) x columns [n, n + cols) of the accumulators into the 2 x 2 tile
// buffers (zero elsewhere, or everywhere without ACCUMULATE).
void load_acc(const MatmulArgs &args, uint32_t m, uint32_t rows, uint32_t n, uint32_t cols,
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
            for (uint32_t i = 0; i < kTileWords; i += 16) {
                const __m512 v = _mm512_loadu_ps(&c[t][i]);
                const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
                _mm512_mask_storeu_epi32(&c[t][i], nan, _mm512_set1_epi32(int(kCanonicalNan)));
            }
    }
    for (uint32_t r = 0; r < rows; r++) {
        uint8_t *row = args.acc + (m + r) * args.acc_stride + 4 * uint64_t(n);
        for (uint32_t half = 0; half < 2 && 16 * half < cols; half++)
            std::memcpy(row + 64 * half, &c[(r / 16) * 2 + half][(r % 16) * 16],
                        4 * std::min(16u, cols - 16 * half));
    }
}

// Tile c += tile a x tile w: tdpbf16ps or tdpbssd. The intrinsics take literal tile numbers
// (they are pasted into the assembly), hence a macro.
#define TPU_AMX_DOT(T, c, a, w)                                                                    \
    do {                                                                                           \
        if constexpr (T::kFloat)                                                                   \
            _tile_dpbf16ps(c, a, w);                                                               \
        else                                                                                       \
            _tile_dpbssd(c, a, w);                                                                 \
    } while (0)

template <class T>
void amx_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
               uint32_t n0, uint32_t n1) {
    const uint32_t k = tile.k();
    const uint64_t ldw = 4 * uint64_t(tile.n()); // bytes per row of pairs / quads
    const auto *w = reinterpret_cast<const uint8_t *>(T::weights(tile));
    const uint32_t blocks = (k + T::kBlockK - 1) / T::kBlockK;
    const uint64_t a_row = uint64_t(blocks) * kRowBytes; // bytes per packed activation row
    // 32 rows of activations, zero past K and past the block's rows.
    thread_local std::vector<uint8_t> a_buf;
    a_buf.resize(kStep * a_row);
    alignas(64) uint32_t c[4][kTileWords];

    const TileConfig config = full_tiles();
    _tile_loadconfig(&config);
    for (uint32_t m = m0; m < m1; m += kStep) {
        const uint32_t rows = std::min(kStep, m1 - m);
        std::fill(a_buf.begin(), a_buf.end(), uint8_t(0));
        for (uint32_t r = 0; r < rows; r++)
            std::memcpy(&a_buf[r * a_row], args.src_row(m + r), uint64_t(k) * T::kElemBytes);
        const uint8_t *a0 = a_buf.data();
        const uint8_t *a1 = a0 + kTileRows * a_row;
        for (uint32_t n = n0; n < n1; n += kStep) {
            const uint32_t cols = std::min(kStep, n1 - n);
            load_acc(args, m, rows, n, cols, c);
            _tile_loadd(0, c[0], kRowBytes);
            _tile_loadd(1, c[1], kRowBytes);
            _tile_loadd(2, c[2], kRowBytes);
            _tile_loadd(3, c[3], kRowBytes);
            // Columns past n1 (and rows past m1) compute values that are never stored.
            for (uint32_t b = 0; b < blocks; b++) {
                const uint8_t *wb = w + uint64_t(b) * kTileRows * ldw + 4 * uint64_t(n);
                _tile_loadd(4, a0 + b * kRowBytes, a_row);
                _tile_loadd(6, wb, ldw);
                TPU_AMX_DOT(T, 0, 4, 6);
                if (cols > 16) {
                    _tile_loadd(7, wb + 64, ldw);
                    TPU_AMX_DOT(T, 1, 4, 7);
                }
                if (rows > 16) {
                    _tile_loadd(5, a1 + b * kRowBytes, a_row);
                    TPU_AMX_DOT(T, 2, 5, 6);
                    if (cols > 16)
                        TPU_AMX_DOT(T, 3, 5, 7);
                }
            }
            _tile_stored(0, c[0], kRowBytes);
            _tile_stored(1, c[1], kRowBytes);
            _tile_stored(2, c[2], kRowBytes);
            _tile_stored(3, c[3], kRowBytes);
            store_acc<T::kFloat>(args, m, rows, n, cols, c);
        }
    }
    _tile_release();
}

#undef TPU_AMX_DOT

} // namespace

const RowKernels kAmxRowKernels{"amx", amx_block<Int8Amx>, amx_block<Bf16Amx>, avx512::fp32_block};

} // namespace tpu::engine

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
