// SPDX-License-Identifier: MIT
// AVX2+FMA MXU row kernels: 8 columns per vector, up to 8 vectors (64 columns) of accumulators
// held in registers across the whole k loop, a masked vector for the last columns. Compiled for
// the baseline ISA; only these functions carry target("avx2,fma") and run after a CPU check.
#if defined(__x86_64__)
#include <immintrin.h>

#include <cstring>

#include "mxu_kernels.hpp"

#define TPU_AVX2 __attribute__((target("avx2,fma")))

namespace tpu::engine {
namespace {

constexpr uint32_t kLanes = 8;
constexpr int kMaxVectors = 8;

// Lane i enabled iff i < count (count <= 8).
TPU_AVX2 inline __m256i lane_mask(uint32_t count) {
    __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(int32_t(count)), lanes);
}

TPU_AVX2 inline __m256 bf16_broadcast(const uint8_t *a, uint32_t i) {
    uint16_t bits;
    std::memcpy(&bits, a + 2 * i, sizeof(bits));
    return _mm256_castsi256_ps(_mm256_set1_epi32(int32_t(uint32_t(bits) << 16)));
}

// Loads and stores of 8 lanes; the masked forms touch only the enabled lanes.
template <bool Masked> TPU_AVX2 inline __m256 load_ps(const void *p, __m256i mask) {
    if constexpr (Masked)
        return _mm256_maskload_ps(static_cast<const float *>(p), mask);
    else
        return _mm256_loadu_ps(static_cast<const float *>(p));
}

template <bool Masked> TPU_AVX2 inline void store_ps(void *p, __m256i mask, __m256 v) {
    if constexpr (Masked)
        _mm256_maskstore_ps(static_cast<float *>(p), mask, v);
    else
        _mm256_storeu_ps(static_cast<float *>(p), v);
}

template <bool Masked> TPU_AVX2 inline __m256i load_epi32(const void *p, __m256i mask) {
    if constexpr (Masked)
        return _mm256_maskload_epi32(static_cast<const int *>(p), mask);
    else
        return _mm256_loadu_si256(static_cast<const __m256i *>(p));
}

template <bool Masked> TPU_AVX2 inline void store_epi32(void *p, __m256i mask, __m256i v) {
    if constexpr (Masked)
        _mm256_maskstore_epi32(static_cast<int *>(p), mask, v);
    else
        _mm256_storeu_si256(static_cast<__m256i *>(p), v);
}

// Columns [n0, n0 + V * 8); Masked: a single partial vector of the lanes enabled in mask.
template <int V, bool Masked>
TPU_AVX2 void bf16_block(const uint32_t *w, uint32_t k, uint32_t n, const uint8_t *a, uint8_t *acc,
                         bool accumulate, uint32_t n0, __m256i mask) {
    __m256 c[V];
    for (int v = 0; v < V; v++)
        c[v] =
            accumulate ? load_ps<Masked>(acc + 4 * (n0 + kLanes * v), mask) : _mm256_setzero_ps();
    for (uint32_t i = 0; i < k; i++) {
        __m256 x = bf16_broadcast(a, i);
        const uint32_t *wr = w + uint64_t(i) * n + n0;
        for (int v = 0; v < V; v++)
            c[v] = _mm256_fmadd_ps(x, load_ps<Masked>(wr + kLanes * v, mask), c[v]);
    }
    for (int v = 0; v < V; v++)
        store_ps<Masked>(acc + 4 * (n0 + kLanes * v), mask, c[v]);
}

template <int V, bool Masked>
TPU_AVX2 void int8_block(const uint32_t *w, uint32_t k, uint32_t n, const uint8_t *a, uint8_t *acc,
                         bool accumulate, uint32_t n0, __m256i mask) {
    __m256i c[V];
    for (int v = 0; v < V; v++)
        c[v] = accumulate ? load_epi32<Masked>(acc + 4 * (n0 + kLanes * v), mask)
                          : _mm256_setzero_si256();
    for (uint32_t i = 0; i < k; i++) {
        __m256i x = _mm256_set1_epi32(int32_t(int8_t(a[i])));
        const uint32_t *wr = w + uint64_t(i) * n + n0;
        for (int v = 0; v < V; v++) {
            __m256i wv = load_epi32<Masked>(wr + kLanes * v, mask);
            c[v] = _mm256_add_epi32(c[v], _mm256_mullo_epi32(x, wv));
        }
    }
    for (int v = 0; v < V; v++)
        store_epi32<Masked>(acc + 4 * (n0 + kLanes * v), mask, c[v]);
}

using BlockFn = void (*)(const uint32_t *, uint32_t, uint32_t, const uint8_t *, uint8_t *, bool,
                         uint32_t, __m256i);

struct BlockSet {
    BlockFn wide;   // kMaxVectors full vectors
    BlockFn single; // one full vector
    BlockFn tail;   // one partial vector
};

TPU_AVX2 void row(const BlockSet &blocks, const uint32_t *w, uint32_t k, uint32_t n,
                  const uint8_t *a, uint8_t *acc, bool accumulate) {
    const __m256i all = lane_mask(kLanes);
    uint32_t n0 = 0;
    for (; n0 + kMaxVectors * kLanes <= n; n0 += kMaxVectors * kLanes)
        blocks.wide(w, k, n, a, acc, accumulate, n0, all);
    for (; n0 + kLanes <= n; n0 += kLanes)
        blocks.single(w, k, n, a, acc, accumulate, n0, all);
    if (n0 < n)
        blocks.tail(w, k, n, a, acc, accumulate, n0, lane_mask(n - n0));
}

constexpr BlockSet kInt8Blocks{int8_block<kMaxVectors, false>, int8_block<1, false>,
                               int8_block<1, true>};
constexpr BlockSet kBf16Blocks{bf16_block<kMaxVectors, false>, bf16_block<1, false>,
                               bf16_block<1, true>};

TPU_AVX2 void int8_row(const uint32_t *w, uint32_t k, uint32_t n, const uint8_t *a, uint8_t *acc,
                       bool accumulate) {
    row(kInt8Blocks, w, k, n, a, acc, accumulate);
}

TPU_AVX2 void bf16_row(const uint32_t *w, uint32_t k, uint32_t n, const uint8_t *a, uint8_t *acc,
                       bool accumulate) {
    row(kBf16Blocks, w, k, n, a, acc, accumulate);
}

} // namespace

const RowKernels kAvx2RowKernels{"avx2", int8_row, bf16_row};

} // namespace tpu::engine
#endif
