// SPDX-License-Identifier: MIT
// Intel AMX MXU kernels, written from the facts measured on an AMX host
// (tests/golden/amx-bf16/README.md): bf16 by tdpbf16ps, which computes one of the card's
// blocks of 32 k exactly (both chains and the combining add, DAZ/FTZ/RNE whatever MXCSR holds),
// and int8 by tdpbssd (exact int32 sums with wrap-around, in blocks of 64 k), walked by
// amx_block.hpp on the hardware's tiles; fp32 uses the AVX-512F kernel. The set is offered only
// where amx_runnable() (mxu/kernels/amx.hpp) and its start-up check pass. Everything after the
// pragma is compiled for AMX + AVX-512F and runs only after those checks.
#if defined(__x86_64__)
#include <immintrin.h>

// Everything amx_block.hpp needs besides its own code, before the target region.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "mxu/kernels/avx512.hpp"
#include "mxu/kernels/kernels.hpp"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,amx-tile,amx-bf16,amx-int8"))),        \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,amx-tile,amx-bf16,amx-int8")
#endif

#include "mxu/kernels/amx_block.hpp"

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

} // namespace

const RowKernels kAmxRowKernels{"amx", amx::block<HwTiles, amx::Int8Amx>,
                                amx::block<HwTiles, amx::Bf16Amx>, avx512::fp32_block,
                                2 * amx::kStep};

} // namespace tpu::engine

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
