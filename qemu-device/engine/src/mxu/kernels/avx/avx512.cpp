// SPDX-License-Identifier: MIT
// AVX-512F MXU kernels: register tiles of up to 6 rows x 4 vectors of 16 columns (24 zmm
// accumulators), each row's activation broadcast once per step into a register. fp32 keeps
// one fma chain per output element in ascending k; int8 multiplies sign-extended 32-bit words
// (exact modulo 2^32). bf16 keeps the card's two chains per output (6 rows x 2 vectors, 24 zmm)
// over each block of 32 k with MXCSR set to flush and treat denormals as zero, which makes each
// fma the card's bf16 step and each add its combining add (mxu/bf16_numerics.hpp). Everything after
// the pragma is compiled for AVX-512F and runs only after a CPU check.
#if defined(__x86_64__)
#include <immintrin.h>

#include <bit>

#include "mxu/bf16_numerics.hpp"
#include "mxu/kernels/avx/avx512.hpp"
#include "mxu/kernels/tiles.hpp"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif

#include "mxu/kernels/avx/zmm.hpp"
#include "mxu/kernels/simd_tile.hpp"

namespace tpu::engine {
namespace {

struct FpMac : ZmmFloat {
    // The activation is broadcast into a register, which the compiler shares between the
    // multiplies of its row.
    static Vec mac(Vec c, const uint32_t *a, Vec w) {
        return _mm512_fmadd_ps(_mm512_set1_ps(std::bit_cast<float>(*a)), w, c);
    }
};

// bf16: the same fma, one step per k, in the card's blocks of an even and an odd chain.
struct Bf16Mac : FpMac {
    static constexpr uint32_t kBlockSteps = bf16::kBlock;
};

struct IntWordMac : ZmmInt {
    static Vec mac(Vec c, const uint32_t *a, Vec w) {
        return _mm512_add_epi32(c, _mm512_mullo_epi32(_mm512_set1_epi32(int32_t(*a)), w));
    }
};

template <int R, int V> using FpTile = tiles::SimdTile<FpMac, R, V>;
template <int R, int V> using Bf16Tile = tiles::SimdTile<Bf16Mac, R, V>;
template <int R, int V> using IntWordTile = tiles::SimdTile<IntWordMac, R, V>;

constexpr tiles::TileSet kFpTiles =
    tiles::make_tile_set<FpTile, kZmmTileRows, kZmmTileVectors>(Zmm::kLanes);
constexpr tiles::TileSet kBf16Tiles =
    tiles::make_tile_set<Bf16Tile, kZmmTileRows, kZmmChainVectors>(Zmm::kLanes);
constexpr tiles::TileSet kIntWordTiles =
    tiles::make_tile_set<IntWordTile, kZmmTileRows, kZmmTileVectors>(Zmm::kLanes);

void int8_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1) {
    tiles::run_tiles(kIntWordTiles, tiles::Operand::Int8Words, tile, args, m0, m1, n0, n1);
}

} // namespace

namespace avx512 {

void bf16_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1) {
    if (tile.k() <= kSmallK)
        return bf16_small_k_block(tile, args, m0, m1, n0, n1);
    bf16::FlushDenormalsScope ftz_daz;
    tiles::run_tiles(kBf16Tiles, tiles::Operand::Bf16, tile, args, m0, m1, n0, n1);
}

void fp32_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1) {
    tiles::run_tiles(kFpTiles, tiles::Operand::Fp32, tile, args, m0, m1, n0, n1);
}

} // namespace avx512

const RowKernels kAvx512RowKernels{"avx512", int8_block, avx512::bf16_block, avx512::fp32_block};

} // namespace tpu::engine

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
