// SPDX-License-Identifier: MIT
// Reference matmuls: plain loops (m, k, n with n innermost, so each element still sees k in
// ascending order), left to the compiler to vectorise. A copy built for AVX2+FMA runs where the
// host has them (chosen with a plain CPU check, not an ifunc, so sanitizers work); the results
// are identical because fmaf is an exact product with a single rounding everywhere.
#include "tpu_test/reference.hpp"

#include <bit>
#include <cmath>

#include "tpu_test/bf16.hpp"

namespace tpu::test {
namespace {

// The loops, instantiated twice below: once for the baseline ISA and once for AVX2+FMA.
__attribute__((always_inline)) inline void int8_loop(const int8_t *a, const int8_t *b, uint32_t m,
                                                     uint32_t k, uint32_t n, int32_t *c) {
    for (uint32_t i = 0; i < m; i++) {
        uint32_t *row = reinterpret_cast<uint32_t *>(c + uint64_t(i) * n);
        for (uint32_t p = 0; p < k; p++) {
            uint32_t x = uint32_t(int32_t(a[uint64_t(i) * k + p]));
            const int8_t *brow = b + uint64_t(p) * n;
            for (uint32_t j = 0; j < n; j++)
                row[j] += x * uint32_t(int32_t(brow[j]));
        }
    }
}

__attribute__((always_inline)) inline void fp32_loop(const float *a, const float *b, uint32_t m,
                                                     uint32_t k, uint32_t n, float *c) {
    for (uint32_t i = 0; i < m; i++) {
        float *row = c + uint64_t(i) * n;
        for (uint32_t p = 0; p < k; p++) {
            float x = a[uint64_t(i) * k + p];
            const float *brow = b + uint64_t(p) * n;
            for (uint32_t j = 0; j < n; j++)
                row[j] = std::fma(x, brow[j], row[j]);
        }
    }
}

void int8_portable(const int8_t *a, const int8_t *b, uint32_t m, uint32_t k, uint32_t n,
                   int32_t *c) {
    int8_loop(a, b, m, k, n, c);
}

void fp32_portable(const float *a, const float *b, uint32_t m, uint32_t k, uint32_t n, float *c) {
    fp32_loop(a, b, m, k, n, c);
}

#if defined(__x86_64__)
__attribute__((target("avx2,fma"))) void int8_avx2(const int8_t *a, const int8_t *b, uint32_t m,
                                                   uint32_t k, uint32_t n, int32_t *c) {
    int8_loop(a, b, m, k, n, c);
}

__attribute__((target("avx2,fma"))) void fp32_avx2(const float *a, const float *b, uint32_t m,
                                                   uint32_t k, uint32_t n, float *c) {
    fp32_loop(a, b, m, k, n, c);
}

bool has_avx2_fma() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#endif

void int8_rows(const int8_t *a, const int8_t *b, uint32_t m, uint32_t k, uint32_t n, int32_t *c) {
#if defined(__x86_64__)
    if (has_avx2_fma())
        return int8_avx2(a, b, m, k, n, c);
#endif
    int8_portable(a, b, m, k, n, c);
}

void fp32_rows(const float *a, const float *b, uint32_t m, uint32_t k, uint32_t n, float *c) {
#if defined(__x86_64__)
    if (has_avx2_fma())
        return fp32_avx2(a, b, m, k, n, c);
#endif
    fp32_portable(a, b, m, k, n, c);
}

std::vector<float> widen(const uint16_t *v, uint64_t count) {
    std::vector<float> out(count);
    for (uint64_t i = 0; i < count; i++)
        out[i] = bf16_to_float(v[i]);
    return out;
}

} // namespace

std::vector<int32_t> reference_matmul_int8(const int8_t *a, const int8_t *b, uint32_t m, uint32_t k,
                                           uint32_t n) {
    std::vector<int32_t> c(uint64_t(m) * n, 0);
    int8_rows(a, b, m, k, n, c.data());
    return c;
}

std::vector<float> reference_matmul_bf16(const uint16_t *a, const uint16_t *b, uint32_t m,
                                         uint32_t k, uint32_t n) {
    std::vector<float> wa = widen(a, uint64_t(m) * k);
    std::vector<float> wb = widen(b, uint64_t(k) * n);
    return reference_matmul_fp32(wa.data(), wb.data(), m, k, n);
}

std::vector<float> reference_matmul_fp32(const float *a, const float *b, uint32_t m, uint32_t k,
                                         uint32_t n) {
    std::vector<float> c(uint64_t(m) * n, 0.0f);
    fp32_rows(a, b, m, k, n, c.data());
    for (float &x : c)
        if (std::isnan(x))
            x = std::bit_cast<float>(kCanonicalNan);
    return c;
}

} // namespace tpu::test
