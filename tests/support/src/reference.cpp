// SPDX-License-Identifier: MIT
// Reference matmuls: plain loops (m, k, n with n innermost, so each element still sees its k in
// the spec's order), left to the compiler to vectorise. A copy built for AVX2+FMA runs where the
// host has them (chosen with a plain CPU check, not an ifunc, so sanitizers work); the results
// are identical because fmaf is an exact product with a single rounding everywhere. bf16 is
// scalar, written from the spec's text: per output, blocks of 32 k, in each an even and an odd
// chain from +0, each step DAZ / fmaf / FTZ with tininess after rounding (decided next to
// 2^-126 from the exact sum in double), then acc + (even + odd) with DAZ / FTZ.
#include "tpu_test/reference.hpp"

#include <algorithm>
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

// Subnormal inputs read as zero (same sign).
float daz(float x) {
    return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
}

// One bf16 step on DAZ'd inputs: c + a w, exact product, rounded once to nearest even; a result
// whose magnitude, rounded with an unbounded exponent, is below 2^-126 becomes a signed zero.
// fmaf rounds to the subnormal grid, which only hides that when it gives exactly 2^-126: then
// both terms are below 2^-100 and their exact sum fits a double, and the unbounded rounding
// reaches 2^-126 iff the sum is at least 2^-126 - 2^-151 (the tie rounds to the even 2^-126).
float bf16_step(float c, float a, float w) {
    const float r = std::fma(a, w, c);
    const float mag = std::fabs(r);
    if (std::isnan(r) || mag > 0x1p-126f)
        return r;
    if (mag < 0x1p-126f)
        return std::copysign(0.0f, r);
    const double exact = double(c) + double(a) * double(w);
    return std::fabs(exact) >= 0x1p-126 - 0x1p-151 ? r : std::copysign(0.0f, r);
}

// The block's add: FTZ(RNE(DAZ(x) + DAZ(y))); the sum of two such terms is exact when tiny.
float bf16_add(float x, float y) {
    const float r = daz(x) + daz(y);
    return std::fabs(r) < 0x1p-126f ? std::copysign(0.0f, r) : r;
}

float canonical(float x) {
    return std::isnan(x) ? std::bit_cast<float>(kCanonicalNan) : x;
}

} // namespace

std::vector<int32_t> reference_matmul_int8(const int8_t *a, const int8_t *b, uint32_t m, uint32_t k,
                                           uint32_t n) {
    std::vector<int32_t> c(uint64_t(m) * n, 0);
    int8_rows(a, b, m, k, n, c.data());
    return c;
}

float reference_bf16_chain(float acc, const uint16_t *a, uint64_t a_step, const uint16_t *w,
                           uint64_t w_step, uint32_t k) {
    auto at = [](const uint16_t *v, uint64_t step, uint32_t i) {
        return daz(bf16_to_float(v[i * step]));
    };
    for (uint32_t b = 0; b < k; b += kBf16Block) {
        float even = 0.0f, odd = 0.0f;
        for (uint32_t p = b; p < k && p < b + kBf16Block; p++) {
            float &chain = p % 2 ? odd : even;
            chain = bf16_step(chain, at(a, a_step, p), at(w, w_step, p));
        }
        acc = bf16_add(acc, bf16_add(even, odd));
    }
    return canonical(acc);
}

std::vector<float> reference_matmul_bf16(const uint16_t *a, const uint16_t *b, uint32_t m,
                                         uint32_t k, uint32_t n) {
    std::vector<float> wb(uint64_t(k) * n);
    for (uint64_t i = 0; i < wb.size(); i++)
        wb[i] = daz(bf16_to_float(b[i]));
    std::vector<float> c(uint64_t(m) * n, 0.0f);
    std::vector<float> chains(2 * uint64_t(n)); // the even chains of a row, then the odd ones
    for (uint32_t i = 0; i < m; i++) {
        float *row = c.data() + uint64_t(i) * n;
        for (uint32_t blk = 0; blk < k; blk += kBf16Block) {
            std::fill(chains.begin(), chains.end(), 0.0f);
            for (uint32_t p = blk; p < k && p < blk + kBf16Block; p++) {
                const float x = daz(bf16_to_float(a[uint64_t(i) * k + p]));
                const float *__restrict brow = wb.data() + uint64_t(p) * n;
                float *__restrict chain = chains.data() + (p % 2) * uint64_t(n);
                for (uint32_t j = 0; j < n; j++)
                    chain[j] = bf16_step(chain[j], x, brow[j]);
            }
            for (uint32_t j = 0; j < n; j++)
                row[j] = bf16_add(row[j], bf16_add(chains[j], chains[n + j]));
        }
    }
    for (float &x : c)
        x = canonical(x);
    return c;
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
