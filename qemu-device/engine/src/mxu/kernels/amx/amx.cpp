// SPDX-License-Identifier: MIT
// Intel AMX MXU kernels, written from the facts measured on an AMX host
// (tests/golden/amx-bf16/README.md): bf16 by tdpbf16ps, which computes one of the card's
// blocks of 32 k exactly (both chains and the combining add, DAZ/FTZ/RNE whatever MXCSR holds),
// and int8 by tdpbssd (exact int32 sums with wrap-around, in blocks of 64 k), walked by
// amx_block.hpp on the hardware's tiles, blocks of fewer rows than a step by the AVX-512
// kernels; fp32 uses the AVX-512F kernel. The set is offered only
// where amx_runnable() (mxu/kernels/amx/amx.hpp) and its start-up check pass. Everything after the
// pragma is compiled for AMX + AVX-512F and runs only after those checks.
#if defined(__x86_64__)
#include <immintrin.h>

// Everything amx_block.hpp needs besides its own code, before the target region.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mxu/kernels/avx/avx512.hpp"
#include "mxu/kernels/kernels.hpp"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,amx-tile,amx-bf16,amx-int8"))),        \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,amx-tile,amx-bf16,amx-int8")
#endif

#include "mxu/kernels/amx/amx_block.hpp"

namespace tpu::engine {
namespace {

// The tile configuration of palette 1: all eight tiles 16 rows of 64 bytes.
struct alignas(64) TileConfig {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
};

// The hardware's tiles. The intrinsics take literal tile numbers (they are pasted into the
// assembly), hence one specialisation per tile and per product the walk uses.
struct HwTiles {
    static void config() {
        TileConfig config;
        for (int t = 0; t < 8; t++) {
            config.colsb[t] = amx::kRowBytes;
            config.rows[t] = amx::kTileRows;
        }
        _tile_loadconfig(&config);
    }
    static void release() { _tile_release(); }
    template <int T> static void load(const void *p, uint64_t stride);
    template <int T> static void store(void *p, uint64_t stride);
    template <int T> static void zero();
    template <class Op, int C, int A, int W> static void dot() {
        if constexpr (Op::kFloat)
            bf16<C, A, W>();
        else
            int8<C, A, W>();
    }
    template <int C, int A, int W> static void bf16();
    template <int C, int A, int W> static void int8();
};

#define TPU_AMX_LOAD(t)                                                                            \
    template <> void HwTiles::load<t>(const void *p, uint64_t stride) {                            \
        _tile_loadd(t, p, long(stride));                                                           \
    }
#define TPU_AMX_ACC_TILE(t)                                                                        \
    template <> void HwTiles::store<t>(void *p, uint64_t stride) {                                 \
        _tile_stored(t, p, long(stride));                                                          \
    }                                                                                              \
    template <> void HwTiles::zero<t>() {                                                          \
        _tile_zero(t);                                                                             \
    }
TPU_AMX_LOAD(0)
TPU_AMX_LOAD(1)
TPU_AMX_LOAD(2)
TPU_AMX_LOAD(3)
TPU_AMX_LOAD(4)
TPU_AMX_LOAD(5)
TPU_AMX_LOAD(6)
TPU_AMX_LOAD(7)
TPU_AMX_ACC_TILE(0)
TPU_AMX_ACC_TILE(1)
TPU_AMX_ACC_TILE(2)
TPU_AMX_ACC_TILE(3)
#undef TPU_AMX_LOAD
#undef TPU_AMX_ACC_TILE

#define TPU_AMX_DOT(c, a, w)                                                                       \
    template <> void HwTiles::bf16<c, a, w>() {                                                    \
        _tile_dpbf16ps(c, a, w);                                                                   \
    }                                                                                              \
    template <> void HwTiles::int8<c, a, w>() {                                                    \
        _tile_dpbssd(c, a, w);                                                                     \
    }
TPU_AMX_DOT(0, 4, 6)
TPU_AMX_DOT(1, 4, 7)
TPU_AMX_DOT(2, 5, 6)
TPU_AMX_DOT(3, 5, 7)
#undef TPU_AMX_DOT

// Blocks of fewer rows than a step go to the AVX-512 kernels, which compute the same results
// (the card's arithmetic is defined exactly): configuring and releasing the tiles and moving a
// partial step's accumulators through a buffer costs more than such a block's products (a
// convolution's 28 x 1 x 32 MATMUL took 1.1 us with AMX, 0.25 us with AVX-512).
bool few_rows(uint32_t m0, uint32_t m1) {
    return m1 - m0 < amx::kStep;
}

void int8_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1) {
    static const bool vnni = __builtin_cpu_supports("avx512vnni");
    if (vnni && few_rows(m0, m1))
        return avx512::int8_vnni_block(tile, args, m0, m1, n0, n1);
    amx::block<HwTiles, amx::Int8Amx>(tile, args, m0, m1, n0, n1);
}

void bf16_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1) {
    // A tile of a few k too: AMX would run its 32-k steps over mostly zero padding.
    if (few_rows(m0, m1) || tile.k() <= avx512::kSmallK)
        return avx512::bf16_block(tile, args, m0, m1, n0, n1);
    amx::block<HwTiles, amx::Bf16Amx>(tile, args, m0, m1, n0, n1);
}

} // namespace

const RowKernels kAmxRowKernels{"amx", int8_block, bf16_block, avx512::fp32_block, 2 * amx::kStep};

} // namespace tpu::engine

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
