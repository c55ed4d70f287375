// SPDX-License-Identifier: MIT
// bf16 MATMULs against tiles of a few k (a convolution's taps over one or two input channels: K
// of 1 for a 28 x 28 x 1 image, one MATMUL per tap) in AVX-512F, without the register tiles'
// packing, which costs more than such a row's products: per row its k activations broadcast
// once, then per 16 columns the card's two chains E (even k) and O (odd k) as fmas from +0 and
// the block's combining adds, in MXCSR's flush-to-zero and denormals-are-zero mode, which makes
// each fma the card's bf16 step and each add its combining add (mxu/bf16_numerics.hpp). A tile
// of at most kSmallK = 32 k is one block. Everything after the pragma is compiled for AVX-512F
// and runs only after a CPU check.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "mxu/bf16_numerics.hpp"
#include "mxu/kernels/avx/avx512.hpp"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f")
#endif

#include "mxu/kernels/avx/zmm.hpp"

namespace tpu::engine::avx512 {

static_assert(kSmallK <= bf16::kBlock, "a small tile is one block");

namespace {

// Columns [j, j + 16) of one row (lanes: the columns that exist): the chains over the row's k
// activations x, combined into the accumulators.
template <bool Accumulate>
inline void columns(const __m512 *x, uint32_t k, const uint32_t *w, uint32_t n, uint32_t j,
                    __mmask16 lanes, uint8_t *acc) {
    __m512 e = _mm512_setzero_ps(), o = _mm512_setzero_ps();
    for (uint32_t i = 0; i < k; i += 2) {
        e = _mm512_fmadd_ps(x[i], _mm512_maskz_loadu_ps(lanes, w + uint64_t(i) * n + j), e);
        if (i + 1 < k)
            o = _mm512_fmadd_ps(x[i + 1], _mm512_maskz_loadu_ps(lanes, w + uint64_t(i + 1) * n + j),
                                o);
    }
    uint8_t *out = acc + 4 * uint64_t(j);
    const __m512 before = Accumulate ? _mm512_maskz_loadu_ps(lanes, out) : _mm512_setzero_ps();
    ZmmFloat::store<true>(out, lanes, _mm512_add_ps(before, _mm512_add_ps(e, o)));
}

template <bool Accumulate>
void rows(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1, uint32_t n0,
          uint32_t n1) {
    const uint32_t k = tile.k();
    const uint32_t n = tile.n();
    const uint32_t *w = tile.words();
    const uint32_t full_end = n0 + (n1 - n0) / ZmmFloat::kLanes * ZmmFloat::kLanes;
    const __mmask16 tail = ZmmFloat::mask(n1 - full_end);
    __m512 x[kSmallK];
    // args.src_row(m), advanced row by row instead of divided out for each.
    const uint32_t group = args.row_group ? args.row_group : args.rows;
    uint32_t in_group = m0 % group;
    const uint8_t *a = args.src_row(m0);
    for (uint32_t m = m0; m < m1; m++) {
        if (m > m0) {
            a += args.src_stride;
            if (++in_group == group) {
                in_group = 0;
                a = args.src_row(m);
            }
        }
        for (uint32_t i = 0; i < k; i++) {
            uint16_t bits;
            std::memcpy(&bits, a + 2 * uint64_t(i), 2);
            x[i] = _mm512_castsi512_ps(_mm512_set1_epi32(int(uint32_t(bits) << 16)));
        }
        uint8_t *acc = args.acc + m * args.acc_stride;
        for (uint32_t j = n0; j < full_end; j += ZmmFloat::kLanes)
            columns<Accumulate>(x, k, w, n, j, 0xffff, acc);
        if (full_end < n1)
            columns<Accumulate>(x, k, w, n, full_end, tail, acc);
    }
}

} // namespace

void bf16_small_k_block(const WeightTile &tile, const MatmulArgs &args, uint32_t m0, uint32_t m1,
                        uint32_t n0, uint32_t n1) {
    bf16::FlushDenormalsScope ftz_daz;
    if (args.accumulate)
        rows<true>(tile, args, m0, m1, n0, n1);
    else
        rows<false>(tile, args, m0, m1, n0, n1);
}

} // namespace tpu::engine::avx512

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif
