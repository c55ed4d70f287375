// SPDX-License-Identifier: MIT
// The parts of the AVX-512 register tiles that every AVX-512 kernel set shares: the tile shape,
// 16-lane masks, and loading, storing and adding fp32 and int32 accumulator vectors (fp32 NaN
// results stored as the canonical NaN). Each kernel file adds its multiply-accumulate.
// Include this header only inside an AVX-512 target region (GCC target / clang attribute
// pragma), after mxu/kernels/simd_tile.hpp: like that header, everything here is private to the
// including file and compiled for its instruction set alone.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "mxu/mxu_types.hpp"

namespace tpu::engine {
namespace {

constexpr int kZmmTileRows = 6; // 6 rows x 4 vectors = 24 zmm accumulators
constexpr int kZmmTileVectors = 4;
constexpr int kZmmChainVectors = 2; // bf16: 6 rows x 2 vectors x 2 chains = 24 zmm

struct Zmm {
    using Mask = __mmask16;
    static constexpr int kLanes = 16;
    static constexpr uint32_t kBlockSteps = 0;
    static Mask mask(uint32_t lanes) {
        return lanes >= kLanes ? Mask(0xffff) : Mask((1u << lanes) - 1);
    }
};

struct ZmmFloat : Zmm {
    using Vec = __m512;
    static Vec zero() { return _mm512_setzero_ps(); }
    template <bool Partial> static Vec load(Mask m, const void *p) {
        return Partial ? _mm512_maskz_loadu_ps(m, p) : _mm512_loadu_ps(p);
    }
    // NaN results are stored as the canonical NaN.
    template <bool Partial> static void store(void *p, Mask m, Vec v) {
        __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        v = _mm512_mask_mov_ps(v, nan, _mm512_castsi512_ps(_mm512_set1_epi32(kCanonicalNan)));
        store_raw<Partial>(p, m, v);
    }
    template <bool Partial> static void store_raw(void *p, Mask m, Vec v) {
        if (Partial)
            _mm512_mask_storeu_ps(p, m, v);
        else
            _mm512_storeu_ps(p, v);
    }
    static Vec add(Vec a, Vec b) { return _mm512_add_ps(a, b); }
};

struct ZmmInt : Zmm {
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
};

} // namespace
} // namespace tpu::engine
