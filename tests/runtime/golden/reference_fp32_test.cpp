// SPDX-License-Identifier: MIT
// reference_fp32_test.cpp - the runtime's fp32 reference: its software fused multiply-add
// equals the host's fmaf for every class of input (normal, subnormal, cancelling, overflowing,
// infinite, NaN), and its matmul agrees bit for bit with the test library's independent loop.
#include <tpu_test/reference.hpp>

#include <tpurt/golden/reference_fp32.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

std::uint32_t bits(float v) {
    return std::bit_cast<std::uint32_t>(v);
}

// fmaf with the card's canonical NaN.
std::uint32_t expected_fma(float a, float b, float c) {
    const float r = std::fmaf(a, b, c);
    return std::isnan(r) ? tpu::test::kCanonicalNan : bits(r);
}

// Random floats with exponents biased towards the ends and the middle of the range.
float random_float(std::mt19937_64 &rng) {
    const std::uint64_t r = rng();
    std::uint32_t exponent;
    switch (r & 3) {
    case 0:
        exponent = static_cast<std::uint32_t>((r >> 2) % 256); // anything, inf/NaN included
        break;
    case 1:
        exponent = static_cast<std::uint32_t>((r >> 2) % 24); // subnormal and tiny
        break;
    default:
        exponent = static_cast<std::uint32_t>(127 - 30 + (r >> 2) % 60);
        break;
    }
    const auto mantissa = static_cast<std::uint32_t>((r >> 16) & 0x7fffff);
    const auto sign = static_cast<std::uint32_t>((r >> 63) << 31);
    return std::bit_cast<float>(sign | (exponent << 23) | mantissa);
}

} // namespace

TEST_CASE("the software fused multiply-add rounds like fmaf", "[reference][fp32]") {
    std::mt19937_64 rng(7);
    for (int i = 0; i < 2'000'000; ++i) {
        const float a = random_float(rng), b = random_float(rng);
        // Half the time c nearly cancels the product: the hard rounding cases.
        const float c =
            (i & 1) ? random_float(rng) : -a * b * (1.0f + random_float(rng) * 0x1p-20f);
        if (bits(tpurt::fused_multiply_add(a, b, c)) != expected_fma(a, b, c))
            FAIL("fma(" << std::hexfloat << a << ", " << b << ", " << c
                        << ") = " << tpurt::fused_multiply_add(a, b, c) << ", fmaf gives "
                        << std::fmaf(a, b, c));
    }
    const float max = std::numeric_limits<float>::max();
    const float tiny = std::numeric_limits<float>::denorm_min();
    CHECK(bits(tpurt::fused_multiply_add(max, 2.0f, -max)) == bits(max));
    CHECK(bits(tpurt::fused_multiply_add(max, 2.0f, 0.0f)) == bits(INFINITY));
    CHECK(bits(tpurt::fused_multiply_add(tiny, 0.5f, 0.0f)) == 0u);
    CHECK(bits(tpurt::fused_multiply_add(tiny, 1.5f, 0.0f)) == bits(2 * tiny));
    // The binary64 sum 2^24 + 3 is a binary32 midpoint; the exact sum lies just below it.
    const float above = 1.0f + 0x1p-23f, below = 1.0f - 0x1p-23f;
    CHECK(bits(tpurt::fused_multiply_add(above, below, 0x1p24f + 2)) == bits(0x1p24f + 2));
    CHECK(bits(tpurt::fused_multiply_add(above, below, 0x1p24f + 2)) ==
          expected_fma(above, below, 0x1p24f + 2));
    CHECK(bits(tpurt::fused_multiply_add(-0.0f, 1.0f, -0.0f)) == bits(-0.0f));
    CHECK(bits(tpurt::fused_multiply_add(1.0f, -1.0f, 1.0f)) == bits(0.0f));
    CHECK(bits(tpurt::fused_multiply_add(INFINITY, 0.0f, 1.0f)) == tpu::test::kCanonicalNan);
}

TEST_CASE("fp32 reference matches the independent fmaf loop", "[reference][fp32]") {
    const std::uint32_t m = 31, k = 263, n = 47;
    const auto a = tpurt::random_fp32(std::size_t{m} * k, 1);
    const auto b = tpurt::random_fp32(std::size_t{k} * n, 2);
    std::vector<float> ours(std::size_t{m} * n);
    tpurt::reference_matmul(a, b, ours, m, k, n);
    const auto theirs = tpu::test::reference_matmul_fp32(a.data(), b.data(), m, k, n);
    REQUIRE(theirs.size() == ours.size());
    CHECK(std::memcmp(ours.data(), theirs.data(), ours.size() * sizeof(float)) == 0);
}
