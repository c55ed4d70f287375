// SPDX-License-Identifier: MIT
// Random test operands: int8 over the full range, and bf16 bit patterns drawn from a mix of
// ordinary values, zeros of both signs, subnormals, tiny normals and large magnitudes (never
// NaN or infinity as inputs, so the exact result of every implementation is well defined).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace tpu::test {

inline std::vector<int8_t> random_int8(std::mt19937_64 &rng, uint64_t count) {
    std::uniform_int_distribution<int> dist(-128, 127);
    std::vector<int8_t> v(count);
    for (int8_t &x : v)
        x = int8_t(dist(rng));
    return v;
}

// Probabilities (per mille) of the special classes; the rest are ordinary values with
// exponents around 1.0 (2^-17 .. 2^13).
struct Bf16Mix {
    unsigned zero = 20;
    unsigned subnormal = 50;
    unsigned tiny = 30;  // smallest normal exponents
    unsigned large = 10; // 2^53 .. 2^103: products with each other may overflow to infinity
};

inline uint16_t random_bf16(std::mt19937_64 &rng, const Bf16Mix &mix = {}) {
    std::uniform_int_distribution<unsigned> permille(0, 999);
    std::uniform_int_distribution<unsigned> mantissa(0, 127);
    uint16_t sign = uint16_t(rng() & 1) << 15;
    unsigned pick = permille(rng);
    unsigned exp;
    uint16_t man = uint16_t(mantissa(rng));
    if (pick < mix.zero)
        return sign;
    pick -= mix.zero;
    if (pick < mix.subnormal)
        return uint16_t(sign | (man ? man : 1));
    pick -= mix.subnormal;
    if (pick < mix.tiny)
        exp = std::uniform_int_distribution<unsigned>(1, 8)(rng);
    else if (pick - mix.tiny < mix.large)
        exp = std::uniform_int_distribution<unsigned>(180, 230)(rng);
    else
        exp = std::uniform_int_distribution<unsigned>(110, 140)(rng);
    return uint16_t(sign | (exp << 7) | man);
}

inline std::vector<uint16_t> random_bf16(std::mt19937_64 &rng, uint64_t count,
                                         const Bf16Mix &mix = {}) {
    std::vector<uint16_t> v(count);
    for (uint16_t &x : v)
        x = random_bf16(rng, mix);
    return v;
}

} // namespace tpu::test
