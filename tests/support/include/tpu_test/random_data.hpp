// SPDX-License-Identifier: MIT
// Random test operands: int8 over the full range, and bf16 bit patterns drawn from a mix of
// ordinary values, zeros of both signs, subnormals, tiny normals and large magnitudes (never
// NaN or infinity as inputs, so the exact result of every implementation is well defined); and
// the raw bytes of card operands whose long chains of sums show any change of order.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tpu_hw.h"

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

// Bytes per element of a MATMUL input dtype (TPU_DT_INT8, TPU_DT_BF16 or TPU_DT_FP32).
inline uint32_t dtype_bytes(uint8_t dtype) {
    return dtype == TPU_DT_INT8 ? 1 : dtype == TPU_DT_BF16 ? 2 : 4;
}

// count elements of dtype that make long chains meaningful: int8 anything, floats in [-2, 2)
// with full mantissas (so every step rounds and any change of order shows), a few specials.
inline std::vector<uint8_t> chain_values(uint8_t dtype, uint64_t count, std::mt19937_64 &rng) {
    std::vector<uint8_t> out(count * dtype_bytes(dtype));
    std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
    for (uint64_t i = 0; i < count; i++) {
        float f = dist(rng);
        if (rng() % 5000 == 0)
            f = rng() % 2 ? INFINITY : 1e-40f;
        const uint32_t bits = std::bit_cast<uint32_t>(f);
        if (dtype == TPU_DT_INT8) {
            out[i] = uint8_t(rng());
        } else if (dtype == TPU_DT_BF16) {
            const uint16_t h = uint16_t(bits >> 16);
            std::memcpy(&out[2 * i], &h, 2);
        } else {
            std::memcpy(&out[4 * i], &bits, 4);
        }
    }
    return out;
}

} // namespace tpu::test
