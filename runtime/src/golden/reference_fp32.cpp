// SPDX-License-Identifier: MIT
// reference_fp32.cpp - the CPU golden model of the card's fp32 matmul (see reference_fp32.hpp).
#include "tpurt/golden/reference_fp32.hpp"

#include "tpurt/error.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <string>

namespace tpurt {

namespace {

constexpr std::uint32_t canonical_nan = 0x7fc00000u;

// fmaf(a, b, c) with whatever NaN the host makes. The product is exact in binary64. Rounding
// the sum to binary64 and then to binary32 can only differ from rounding it once when the
// binary64 sum lands exactly on a binary32 midpoint (any midpoint strictly between the exact
// sum and its binary64 rounding would be a closer binary64 number): for normal binary32
// magnitudes that is the bit pattern checked below; elsewhere the sum is rounded to odd.
inline float fma_unfused(float a, float b, float c) {
    const double product = static_cast<double>(a) * static_cast<double>(b);
    const double sum = product + static_cast<double>(c);
    constexpr std::uint64_t below_fp32 = (std::uint64_t{1} << 29) - 1;
    constexpr std::uint64_t midpoint = std::uint64_t{1} << 28;
    if (std::fabs(sum) >= 0x1p-126 && (std::bit_cast<std::uint64_t>(sum) & below_fp32) != midpoint)
        return static_cast<float>(sum);
    return static_cast<float>(add_round_to_odd(product, static_cast<double>(c)));
}

float canonical(float v) {
    return std::isnan(v) ? std::bit_cast<float>(canonical_nan) : v;
}

} // namespace

// TwoSum gives the exact rounding error of the nearest-even sum.
double add_round_to_odd(double x, double y) {
    const double s = x + y;
    const double y_part = s - x;
    const double err = (x - (s - y_part)) + (y - y_part);
    std::uint64_t bits = std::bit_cast<std::uint64_t>(s);
    if (err == 0.0 || !std::isfinite(s) || (bits & 1) != 0)
        return s;
    bits += (err > 0.0) == (s > 0.0) ? 1 : -1; // away from or towards zero
    return std::bit_cast<double>(bits);
}

float fused_multiply_add(float a, float b, float c) {
    return canonical(fma_unfused(a, b, c));
}

void reference_matmul(std::span<const float> a, std::span<const float> b, std::span<float> c,
                      std::uint32_t m, std::uint32_t k, std::uint32_t n) {
    if (a.size() < std::uint64_t{m} * k || b.size() < std::uint64_t{k} * n ||
        c.size() < std::uint64_t{m} * n)
        throw Error(ErrorCode::InvalidArgument, "reference_matmul: spans too small for " +
                                                    std::to_string(m) + "x" + std::to_string(k) +
                                                    "x" + std::to_string(n));
    for (std::uint32_t i = 0; i < m; ++i) {
        float *crow = &c[std::size_t{i} * n];
        std::fill(crow, crow + n, 0.0f);
        for (std::uint32_t p = 0; p < k; ++p) {
            const float av = a[std::size_t{i} * k + p];
            const float *brow = &b[std::size_t{p} * n];
            for (std::uint32_t j = 0; j < n; ++j)
                crow[j] = fma_unfused(av, brow[j], crow[j]);
        }
        for (std::uint32_t j = 0; j < n; ++j) // a NaN stays NaN through later steps
            crow[j] = canonical(crow[j]);
    }
}

} // namespace tpurt
