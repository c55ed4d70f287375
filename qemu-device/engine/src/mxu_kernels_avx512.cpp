// SPDX-License-Identifier: MIT
// AVX-512 MXU row kernels: 16 columns per vector, up to 8 vectors (128 columns) of accumulators
// held in registers across the whole k loop, a masked vector for the last columns. Compiled for
// the baseline ISA; only these functions carry target("avx512f") and run after a CPU check.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "mxu_kernels.hpp"

#define TPU_AVX512 __attribute__((target("avx512f")))

namespace tpu::engine {
namespace {

constexpr uint32_t kLanes = 16;
constexpr int kMaxVectors = 8;

TPU_AVX512 inline __m512 bf16_broadcast(const uint8_t *a, uint32_t i) {
    uint16_t bits;
    std::memcpy(&bits, a + 2 * i, sizeof(bits));
    return _mm512_castsi512_ps(_mm512_set1_epi32(int32_t(uint32_t(bits) << 16)));
}

TPU_AVX512 inline __m512i int8_broadcast(const uint8_t *a, uint32_t i) {
    return _mm512_set1_epi32(int32_t(int8_t(a[i])));
}

// Columns [n0, n0 + V * 16) under mask (all ones except for the final partial vector).
template <int V>
TPU_AVX512 void bf16_block(const uint32_t *w, uint32_t k, uint32_t n, const uint8_t *a,
                           uint8_t *acc, bool accumulate, uint32_t n0, __mmask16 mask) {
    __m512 c[V];
    for (int v = 0; v < V; v++)
        c[v] = accumulate ? _mm512_maskz_loadu_ps(mask, acc + 4 * (n0 + kLanes * v))
                          : _mm512_setzero_ps();
    for (uint32_t i = 0; i < k; i++) {
        __m512 x = bf16_broadcast(a, i);
        const uint32_t *wr = w + uint64_t(i) * n + n0;
        for (int v = 0; v < V; v++)
            c[v] = _mm512_fmadd_ps(x, _mm512_maskz_loadu_ps(mask, wr + kLanes * v), c[v]);
    }
    for (int v = 0; v < V; v++)
        _mm512_mask_storeu_ps(acc + 4 * (n0 + kLanes * v), mask, c[v]);
}

template <int V>
TPU_AVX512 void int8_block(const uint32_t *w, uint32_t k, uint32_t n, const uint8_t *a,
                           uint8_t *acc, bool accumulate, uint32_t n0, __mmask16 mask) {
    __m512i c[V];
    for (int v = 0; v < V; v++)
        c[v] = accumulate ? _mm512_maskz_loadu_epi32(mask, acc + 4 * (n0 + kLanes * v))
                          : _mm512_setzero_si512();
    for (uint32_t i = 0; i < k; i++) {
        __m512i x = int8_broadcast(a, i);
        const uint32_t *wr = w + uint64_t(i) * n + n0;
        for (int v = 0; v < V; v++) {
            __m512i wv = _mm512_maskz_loadu_epi32(mask, wr + kLanes * v);
            c[v] = _mm512_add_epi32(c[v], _mm512_mullo_epi32(x, wv));
        }
    }
    for (int v = 0; v < V; v++)
        _mm512_mask_storeu_epi32(acc + 4 * (n0 + kLanes * v), mask, c[v]);
}

using BlockFn = void (*)(const uint32_t *, uint32_t, uint32_t, const uint8_t *, uint8_t *, bool,
                         uint32_t, __mmask16);

TPU_AVX512 void row(BlockFn wide, BlockFn single, const uint32_t *w, uint32_t k, uint32_t n,
                    const uint8_t *a, uint8_t *acc, bool accumulate) {
    constexpr __mmask16 all = 0xffff;
    uint32_t n0 = 0;
    for (; n0 + kMaxVectors * kLanes <= n; n0 += kMaxVectors * kLanes)
        wide(w, k, n, a, acc, accumulate, n0, all);
    for (; n0 + kLanes <= n; n0 += kLanes)
        single(w, k, n, a, acc, accumulate, n0, all);
    if (n0 < n)
        single(w, k, n, a, acc, accumulate, n0, __mmask16((1u << (n - n0)) - 1));
}

TPU_AVX512 void int8_row(const uint32_t *w, uint32_t k, uint32_t n, const uint8_t *a, uint8_t *acc,
                         bool accumulate) {
    row(int8_block<kMaxVectors>, int8_block<1>, w, k, n, a, acc, accumulate);
}

TPU_AVX512 void bf16_row(const uint32_t *w, uint32_t k, uint32_t n, const uint8_t *a, uint8_t *acc,
                         bool accumulate) {
    row(bf16_block<kMaxVectors>, bf16_block<1>, w, k, n, a, acc, accumulate);
}

} // namespace

const RowKernels kAvx512RowKernels{"avx512", int8_row, bf16_row};

} // namespace tpu::engine
#endif
