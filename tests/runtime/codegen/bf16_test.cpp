// SPDX-License-Identifier: MIT
// bf16_test.cpp - fp32 -> bf16 rounds to nearest even and keeps specials; bf16 -> fp32 is exact.
#include <tpurt/types/bf16.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

using tpurt::Bf16;

namespace {

std::uint16_t bits(float f) {
    return Bf16::from_float(f).bits;
}
float from_bits(std::uint32_t u) {
    return std::bit_cast<float>(u);
}

} // namespace

TEST_CASE("exact values convert both ways unchanged", "[bf16]") {
    for (const float f : {0.0f, -0.0f, 1.0f, -2.5f, 0x1p-133f, 0x1p127f, 3.140625f}) {
        CHECK(Bf16::from_float(f).to_float() == f);
        CHECK(std::signbit(Bf16::from_float(f).to_float()) == std::signbit(f));
    }
    CHECK(bits(1.0f) == 0x3f80);
    CHECK(bits(-0.0f) == 0x8000);
}

TEST_CASE("fp32 -> bf16 rounds to nearest, ties to even", "[bf16]") {
    CHECK(bits(from_bits(0x3f808000)) == 0x3f80); // tie, even stays
    CHECK(bits(from_bits(0x3f818000)) == 0x3f82); // tie, odd rounds up to even
    CHECK(bits(from_bits(0x3f808001)) == 0x3f81); // above the tie
    CHECK(bits(from_bits(0x3f807fff)) == 0x3f80); // below the tie
    CHECK(bits(from_bits(0xbf818000)) == 0xbf82); // negative ties alike
    CHECK(bits(from_bits(0x0000c000)) == 0x0001); // subnormal rounding
}

TEST_CASE("infinities, overflow and NaN", "[bf16]") {
    constexpr float inf = std::numeric_limits<float>::infinity();
    CHECK(bits(inf) == 0x7f80);
    CHECK(bits(-inf) == 0xff80);
    CHECK(bits(std::numeric_limits<float>::max()) == 0x7f80); // rounds up to infinity
    const Bf16 nan = Bf16::from_float(from_bits(0x7f800001)); // signalling NaN, low payload
    CHECK(std::isnan(nan.to_float()));
    CHECK((nan.bits & 0x0040) != 0); // made quiet
}
