// SPDX-License-Identifier: MIT
// AVX2+FMA MXU kernels: register tiles of up to 4 rows x 3 vectors of 8 columns (12 ymm
// accumulators), each activation broadcast from the packed buffer. fp32 keeps one fma chain per
// output element in ascending k; int8 multiplies sign-extended 32-bit words (exact modulo
// 2^32). bf16 keeps the card's two chains per output (3 rows x 2 vectors, 12 ymm) over each
// block of 32 k with MXCSR set to flush and treat denormals as zero, which makes each fma the
// card's bf16 step and each add its combining add (mxu/bf16_numerics.hpp). Everything after the
// pragma is compiled for AVX2+FMA and runs only after a CPU check.
#if defined(__x86_64__)
#include <immintrin.h>

#include <bit>

#include "mxu/bf16_numerics.hpp"
#include "mxu/kernels/kernels.hpp"
#include "mxu/kernels/tiles.hpp"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif

#include "mxu/kernels/simd_tile.hpp"

namespace tpu::engine {
namespace {

constexpr int kTileRows = 4;
constexpr int kTileVectors = 3;
constexpr int kChainRows = 3; // bf16: 3 rows x 2 vectors x 2 chains = 12 ymm
constexpr int kChainVectors = 2;

// Masks are vectors: lane i enabled iff its top bit is set.
struct Ymm {
    using Mask = __m256i;
    static constexpr int kLanes = 8;
    static constexpr uint32_t kBlockSteps = 0;
    static Mask mask(uint32_t lanes) {
        __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(lanes < 8 ? lanes : 8)), index);
    }
};

struct FpMac : Ymm {
    using Vec = __m256;
    static Vec zero() { return _mm256_setzero_ps(); }
    template <bool Partial> static Vec load(Mask m, const void *p) {
        return Partial ? _mm256_maskload_ps(static_cast<const float *>(p), m)
                       : _mm256_loadu_ps(static_cast<const float *>(p));
    }
    // NaN results are stored as the canonical NaN.
    template <bool Partial> static void store(void *p, Mask m, Vec v) {
        __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
        v = _mm256_blendv_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(kCanonicalNan)), nan);
        store_raw<Partial>(p, m, v);
    }
    template <bool Partial> static void store_raw(void *p, Mask m, Vec v) {
        if (Partial)
            _mm256_maskstore_ps(static_cast<float *>(p), m, v);
        else
            _mm256_storeu_ps(static_cast<float *>(p), v);
    }
    static Vec add(Vec a, Vec b) { return _mm256_add_ps(a, b); }
    static Vec mac(Vec c, const uint32_t *a, Vec w) {
        return _mm256_fmadd_ps(_mm256_set1_ps(std::bit_cast<float>(*a)), w, c);
    }
};

// bf16: the same fma, one step per k, in the card's blocks of an even and an odd chain.
struct Bf16Mac : FpMac {
    static constexpr uint32_t kBlockSteps = bf16::kBlock;
};

struct IntWordMac : Ymm {
    using Vec = __m256i;
    static Vec zero() { return _mm256_setzero_si256(); }
    template <bool Partial> static Vec load(Mask m, const void *p) {
        return Partial ? _mm256_maskload_epi32(static_cast<const int *>(p), m)
                       : _mm256_loadu_si256(static_cast<const __m256i *>(p));
    }
    template <bool Partial> static void store(void *p, Mask m, Vec v) {
        if (Partial)
            _mm256_maskstore_epi32(static_cast<int *>(p), m, v);
        else
            _mm256_storeu_si256(static_cast<__m256i *>(p), v);
    }
    static Vec add(Vec a, Vec b) { return _mm256_add_epi32(a, b); }
    static Vec mac(Vec c, const uint32_t *a, Vec w) {
        return _mm256_add_epi32(c, _mm256_mullo_epi32(_mm256_set1_epi32(int32_t(*a)), w));
    }
};

template <int R, int V> using FpTile = tiles::SimdTile<FpMac, R, V>;
template <int R, int V> using Bf16Tile = tiles::SimdTile<Bf16Mac, R, V>;
template <int R, int V> using IntWordTile = tiles::SimdTile<IntWordMac, R, V>;

constexpr tiles::TileSet kFpTiles =
    tiles::make_tile_set<FpTile, kTileRows, kTileVectors>(Ymm::kLanes);
constexpr tiles::TileSet kBf16Tiles =
    tiles::make_tile_set<Bf16Tile, kChainRows, kChainVectors>(Ymm::kLanes);
constexpr tiles::TileSet kIntWordTiles =
    tiles::make_tile_set<IntWordTile, kTileRows, kTileVectors>(Ymm::kLanes);

template <const tiles::TileSet &Set, tiles::Operand Operand>
void block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1, uint32_t n0,
           uint32_t n1) {
    tiles::run_tiles(Set, Operand, tile, args, m0, m1, n0, n1);
}

void bf16_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                uint32_t n0, uint32_t n1) {
    bf16::FlushDenormalsScope ftz_daz;
    tiles::run_tiles(kBf16Tiles, tiles::Operand::Bf16, tile, args, m0, m1, n0, n1);
}

} // namespace

const RowKernels kAvx2RowKernels{"avx2", block<kIntWordTiles, tiles::Operand::Int8Words>,
                                 bf16_block, block<kFpTiles, tiles::Operand::Fp32>};

} // namespace tpu::engine

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
