// SPDX-License-Identifier: MIT
// bf16.hpp - the bfloat16 storage type (the top 16 bits of an IEEE binary32) and its exact
// conversions: bf16 -> fp32 is exact, fp32 -> bf16 rounds to nearest, ties to even, keeps
// infinities and turns NaNs into quiet NaNs.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

namespace tpurt {

struct Bf16 {
    std::uint16_t bits;

    static constexpr Bf16 from_float(float value) {
        const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
        if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep sign and payload top, force quiet
            return Bf16{static_cast<std::uint16_t>((u >> 16) | 0x0040u)};
        const std::uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
        return Bf16{static_cast<std::uint16_t>(rounded >> 16)};
    }

    constexpr float to_float() const {
        return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
    }

    friend constexpr bool operator==(Bf16, Bf16) = default;
};

static_assert(sizeof(Bf16) == 2 && std::is_trivial_v<Bf16>, "Bf16 is a plain 16-bit value");

} // namespace tpurt
