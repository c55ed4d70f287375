// SPDX-License-Identifier: MIT
// AVX512-BF16 bf16 MXU kernel: register tiles of up to 6 rows x 4 vectors of 16 columns, one
// vdpbf16ps per accumulator vector and pair of k. Per lane vdpbf16ps adds the odd product of the
// pair, then the even one, each exact and rounded once to nearest even, with subnormal inputs
// read as zero and tiny results flushed to zero whatever MXCSR holds: exactly the card's bf16
// pair (bf16_numerics.hpp). The engine checks that on the host CPU before using this set
// (mxu_kernels.cpp). int8 and fp32 use the AVX512-VNNI and AVX-512F kernels. Everything after
// the pragma is compiled for AVX-512F + BF16 and runs only after a CPU check.
#if defined(__x86_64__)
#include <immintrin.h>

#include "mxu_kernels_avx512.hpp"
#include "mxu_kernels_tiles.hpp"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bf16"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bf16")
#endif

#include "mxu_kernels_simd_tile.hpp"
#include "mxu_kernels_zmm.hpp"

namespace tpu::engine {
namespace {

// A step is a whole pair of k.
struct PairMac : ZmmFloat {
    // The activation pair is broadcast from memory by the instruction itself.
    static Vec mac(Vec c, const uint32_t *a, Vec w) {
        asm("vdpbf16ps %[a]%{1to16%}, %[w], %[c]" : [c] "+v"(c) : [w] "v"(w), [a] "m"(*a));
        return c;
    }
};

template <int R, int V> using PairTile = tiles::SimdTile<PairMac, R, V>;

constexpr tiles::TileSet kPairTiles =
    tiles::make_tile_set<PairTile, kZmmTileRows, kZmmTileVectors>(PairMac::kLanes);

void bf16_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1) {
    tiles::run_tiles(kPairTiles, tiles::Operand::Bf16Pairs, tile, args, m0, m1, n0, n1);
}

} // namespace

const RowKernels kAvx512Bf16RowKernels{"avx512-bf16", avx512::int8_vnni_block, bf16_block,
                                       avx512::fp32_block};

} // namespace tpu::engine

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
