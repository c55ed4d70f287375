// SPDX-License-Identifier: MIT
// AVX-512F MXU kernels: register tiles of up to 6 rows x 4 vectors of 16 columns (24 zmm
// accumulators), each activation broadcast from the packed buffer into its multiplies. fp32 keeps
// one fma chain per output element in ascending k; bf16 walks k in pairs, odd first, with MXCSR
// set to flush and treat denormals as zero, which makes each fma the card's bf16 step
// (bf16_numerics.hpp); int8 multiplies sign-extended 32-bit words (exact modulo 2^32). Everything
// after the pragma is compiled for AVX-512F and runs only after a CPU check.
#if defined(__x86_64__)
#include <immintrin.h>

#include <bit>

#include "bf16_numerics.hpp"
#include "mxu_kernels_avx512.hpp"
#include "mxu_kernels_tiles.hpp"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif

#include "mxu_kernels_simd_tile.hpp"

namespace tpu::engine {
namespace {

constexpr int kTileRows = 6;
constexpr int kTileVectors = 4;

struct Zmm {
    using Mask = __mmask16;
    static constexpr int kLanes = 16;
    static constexpr bool kOddFirst = false;
    static Mask mask(uint32_t lanes) {
        return lanes >= kLanes ? Mask(0xffff) : Mask((1u << lanes) - 1);
    }
};

struct FpMac : Zmm {
    using Vec = __m512;
    static Vec zero() { return _mm512_setzero_ps(); }
    template <bool Partial> static Vec load(Mask m, const void *p) {
        return Partial ? _mm512_maskz_loadu_ps(m, p) : _mm512_loadu_ps(p);
    }
    // NaN results are stored as the canonical NaN.
    template <bool Partial> static void store(void *p, Mask m, Vec v) {
        __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        v = _mm512_mask_mov_ps(v, nan, _mm512_castsi512_ps(_mm512_set1_epi32(kCanonicalNan)));
        if (Partial)
            _mm512_mask_storeu_ps(p, m, v);
        else
            _mm512_storeu_ps(p, v);
    }
    static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
    // The activation is broadcast from memory by the fma itself (GCC would not fold it).
    static Vec mac(Vec c, const uint32_t *a, Vec w) {
        asm("vfmadd231ps %[a]%{1to16%}, %[w], %[c]" : [c] "+v"(c) : [w] "v"(w), [a] "m"(*a));
        return c;
    }
};

// bf16: the same fma, steps in pairs with the odd one first.
struct Bf16Mac : FpMac {
    static constexpr bool kOddFirst = true;
};

struct IntWordMac : Zmm {
    using Vec = __m512i;
    static Vec zero() { return _mm512_setzero_si512(); }
    template <bool Partial> static Vec load(Mask m, const void *p) {
        return Partial ? _mm512_maskz_loadu_epi32(m, p) : _mm512_loadu_si512(p);
    }
    template <bool Partial> static void store(void *p, Mask m, Vec v) {
        if (Partial)
            _mm512_mask_storeu_epi32(p, m, v);
        else
            _mm512_storeu_si512(p, v);
    }
    static Vec add(Vec a, Vec b) { return _mm512_add_epi32(a, b); }
    static Vec mac(Vec c, const uint32_t *a, Vec w) {
        return _mm512_add_epi32(c, _mm512_mullo_epi32(_mm512_set1_epi32(int32_t(*a)), w));
    }
};

template <int R, int V> using FpTile = tiles::SimdTile<FpMac, R, V>;
template <int R, int V> using Bf16Tile = tiles::SimdTile<Bf16Mac, R, V>;
template <int R, int V> using IntWordTile = tiles::SimdTile<IntWordMac, R, V>;

constexpr tiles::TileSet kFpTiles =
    tiles::make_tile_set<FpTile, kTileRows, kTileVectors>(Zmm::kLanes);
constexpr tiles::TileSet kBf16Tiles =
    tiles::make_tile_set<Bf16Tile, kTileRows, kTileVectors>(Zmm::kLanes);
constexpr tiles::TileSet kIntWordTiles =
    tiles::make_tile_set<IntWordTile, kTileRows, kTileVectors>(Zmm::kLanes);

void int8_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1) {
    tiles::run_tiles(kIntWordTiles, tiles::Operand::Int8Words, tile, args, m0, m1, n0, n1);
}

} // namespace

namespace avx512 {

void bf16_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1) {
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
