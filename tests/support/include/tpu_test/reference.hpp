// SPDX-License-Identifier: MIT
// Reference matrix multiplies written straight from the numerics spec, independent of the
// engine: C (M x N) = A (M x K) x B (K x N), all row-major and packed.
//   int8: int32 sums with two's-complement wrap-around.
//   fp32: per element, acc = +0.0f, then for k ascending acc = fmaf(a, b, acc) in fp32.
//   bf16 (spec 1.3): per element, acc = +0.0f, then for each block of 32 k from k = 0 (the
//   last may be shorter): E = O = +0, for k in the block ascending, chain = E (k even) or O
//   (k odd), chain = FTZ(RNE(DAZ(chain) + DAZ(a) DAZ(b))) (exact product, tininess after
//   rounding); then acc = FTZ(RNE(DAZ(acc) + FTZ(RNE(E + O)))).
//   A NaN result is the canonical quiet NaN kCanonicalNan.
#pragma once

#include <cstdint>
#include <vector>

namespace tpu::test {

std::vector<int32_t> reference_matmul_int8(const int8_t *a, const int8_t *b, uint32_t m, uint32_t k,
                                           uint32_t n);

inline constexpr uint32_t kCanonicalNan = 0x7fc00000u;
inline constexpr uint32_t kBf16Block = 32; // k per block of the bf16 accumulation

// a and b hold bf16 bit patterns.
std::vector<float> reference_matmul_bf16(const uint16_t *a, const uint16_t *b, uint32_t m,
                                         uint32_t k, uint32_t n);

// The card's bf16 accumulation of a[i * a_step] x w[i * w_step], i < k, onto acc (the blocks
// start at i = 0), NaN made canonical: one output of a MATMUL with ACCUMULATE.
float reference_bf16_chain(float acc, const uint16_t *a, uint64_t a_step, const uint16_t *w,
                           uint64_t w_step, uint32_t k);

std::vector<float> reference_matmul_fp32(const float *a, const float *b, uint32_t m, uint32_t k,
                                         uint32_t n);

} // namespace tpu::test
