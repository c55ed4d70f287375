// SPDX-License-Identifier: MIT
// AVX512-BF16 bf16 MXU kernel at vdpbf16ps's full rate on the card's block arithmetic
// (mxu/bf16_numerics.hpp): register tiles of up to 6 rows x 2 vectors of 16 columns, each with an
// even and an odd chain (24 zmm). Per lane vdpbf16ps adds the product of the high halves of
// its pair, then the low halves, each exact and rounded once to nearest even, with subnormal
// inputs read as zero and tiny results flushed whatever MXCSR holds: so a pair (x[k] high,
// x[k + 2] low) is two steps of one chain, and per quad of k one vdpbf16ps advances the even
// chain (k, k + 2) and one the odd chain (k + 1, k + 3) (weights packed by WeightTile, the
// activations by the tile walk). Every 32 k the chains are added to the accumulators with
// MXCSR FTZ|DAZ set. The engine checks all of it on the host CPU before using this set
// (mxu/kernels/check/check.hpp). int8 and fp32 use the AVX512-VNNI and AVX-512F kernels. Everything
// after the pragma is compiled for AVX-512F + BF16 and runs only after a CPU check.
#if defined(__x86_64__)
#include <immintrin.h>

#include "mxu/bf16_numerics.hpp"
#include "mxu/kernels/avx/avx512.hpp"
#include "mxu/kernels/tiles.hpp"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bf16"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bf16")
#endif

#include "mxu/kernels/avx/zmm.hpp"
#include "mxu/kernels/simd_tile.hpp"

namespace tpu::engine {
namespace {

// A step is two k of one chain; the steps alternate between the chains.
struct ChainMac : ZmmFloat {
    static constexpr uint32_t kBlockSteps = bf16::kBlock / 2;
    // The activation pair is broadcast into a register, which the compiler shares between the
    // products of its row.
    static Vec mac(Vec c, const uint32_t *a, Vec w) {
        asm("vdpbf16ps %[a], %[w], %[c]"
            : [c] "+v"(c)
            : [w] "v"(w), [a] "v"(_mm512_set1_epi32(int32_t(*a))));
        return c;
    }
};

template <int R, int V> using ChainTile = tiles::SimdTile<ChainMac, R, V>;

constexpr tiles::TileSet kChainTiles =
    tiles::make_tile_set<ChainTile, kZmmTileRows, kZmmChainVectors>(ChainMac::kLanes);

void bf16_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1) {
    if (tile.k() <= avx512::kSmallK)
        return avx512::bf16_small_k_block(tile, args, m0, m1, n0, n1);
    bf16::FlushDenormalsScope ftz_daz; // for the combining adds
    tiles::run_tiles(kChainTiles, tiles::Operand::Bf16Quads, tile, args, m0, m1, n0, n1);
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
