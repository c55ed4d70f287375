// SPDX-License-Identifier: MIT
// AVX512-VNNI int8 MXU kernel: register tiles of up to 6 rows x 4 vectors of 16 columns, one
// vpdpbusd per accumulator vector and quad of k. vpdpbusd multiplies unsigned by signed bytes,
// so activations are biased by +128 when packed and the tile's column sums times -128 are added
// once (exact modulo 2^32). bf16 and fp32 use the AVX-512F kernels; the AVX512-BF16 kernel set
// shares this int8 kernel. Everything after the pragma
// is compiled for AVX-512F + VNNI and runs only after a CPU check.
#if defined(__x86_64__)
#include <immintrin.h>

#include "mxu/kernels/avx/avx512.hpp"
#include "mxu/kernels/tiles.hpp"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512vnni"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vnni")
#endif

#include "mxu/kernels/avx/zmm.hpp"
#include "mxu/kernels/simd_tile.hpp"

namespace tpu::engine {
namespace {

struct QuadMac : ZmmInt {
    // Four unsigned activation bytes times four signed weight bytes per lane, summed into the
    // lane without saturation. Written as asm: GCC 12 spills the accumulator tile around the
    // intrinsic (about a third of the speed).
    static Vec mac(Vec c, const uint32_t *a, Vec w) {
        asm("vpdpbusd %2, %1, %0" : "+v"(c) : "v"(_mm512_set1_epi32(int32_t(*a))), "v"(w));
        return c;
    }
};

template <int R, int V> using QuadTile = tiles::SimdTile<QuadMac, R, V>;

constexpr tiles::TileSet kQuadTiles =
    tiles::make_tile_set<QuadTile, kZmmTileRows, kZmmTileVectors>(QuadMac::kLanes);

} // namespace

namespace avx512 {

void int8_vnni_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                     uint32_t n0, uint32_t n1) {
    tiles::run_tiles(kQuadTiles, tiles::Operand::Int8Quads, tile, args, m0, m1, n0, n1);
}

} // namespace avx512

const RowKernels kAvx512VnniRowKernels{"avx512-vnni", avx512::int8_vnni_block, avx512::bf16_block,
                                       avx512::fp32_block};

} // namespace tpu::engine

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
