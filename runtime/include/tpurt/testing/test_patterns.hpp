// SPDX-License-Identifier: MIT
// test_patterns.hpp - deterministic matrices for checking the card against the reference
// model (tests, the demo, self-checks): full-range int8, moderate bf16 values, bf16 values
// spanning subnormals to large magnitudes that exercise every rounding case of the
// accumulation, and full-precision fp32 values. The same seed gives the same data on every machine.
#pragma once

#include "tpurt/types/bf16.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpurt {

// Uniform over all int8 values.
std::vector<std::int8_t> random_int8(std::size_t count, std::uint64_t seed);
// bf16 values in (-4, 4) with about 7 significant bits, zeros included.
std::vector<Bf16> random_bf16(std::size_t count, std::uint64_t seed);
// bf16 values of either sign from subnormals (and zeros) up to about 2^40: products underflow,
// cancel and round in every way the fmaf accumulation defines, without reaching inf or NaN.
std::vector<Bf16> wide_range_bf16(std::size_t count, std::uint64_t seed);
// fp32 values of either sign with full 24-bit significands and magnitudes from 2^-8 to 2^8,
// zeros included: every product needs rounding, sums cancel.
std::vector<float> random_fp32(std::size_t count, std::uint64_t seed);
// fp32 values uniform in [lo, hi), from std::mt19937 seeded with `seed` through
// std::uniform_real_distribution (weights, biases and inputs of tests with a tolerance).
std::vector<float> uniform_fp32(std::size_t count, unsigned seed, float lo, float hi);
// Integers uniform in [-range, range] from std::mt19937 seeded with `seed`, divided by `scale`
// (a power of two keeps them exact): values whose products and sums are exact in fp32 and in
// bf16 products, for tests that compare the card bit for bit without a reference of its rounding.
std::vector<float> small_ints(std::size_t count, unsigned seed, int range, float scale = 1.0f);

} // namespace tpurt
