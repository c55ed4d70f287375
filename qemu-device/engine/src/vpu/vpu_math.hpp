// SPDX-License-Identifier: MIT
// The vector unit's arithmetic, defined as exact sequences of IEEE binary32 operations
// (docs/hardware.md, "Numerics"): the activation functions, and the conversions of results to
// the card's data types. Every function is a fixed list of float additions, multiplications,
// divisions and comparisons in round-to-nearest-even (this file is compiled with
// -ffp-contract=off, so no host fuses them), hence bit-identical on every host.
#pragma once

#include <bit>
#include <cstdint>

namespace tpu::engine::vpu_math {

inline constexpr uint16_t kBf16Nan = 0x7fc0;
inline constexpr uint32_t kFp32Nan = 0x7fc00000u;

float exp(float x);
float sigmoid(float x);
float tanh(float x);
float gelu(float x);  // tanh approximation
float log(float x);   // spec 1.4
float sqrt(float x);  // spec 1.4, IEEE
float rsqrt(float x); // spec 1.4, 1 / sqrt(x)
float recip(float x); // spec 1.4, 1 / x
float erf(float x);   // spec 2.3
// f(x) for a tpu_act_func f.
float activate(uint8_t func, float x);

inline bool is_nan(float x) {
    return x != x;
}

inline float from_bf16(uint16_t bits) {
    return std::bit_cast<float>(uint32_t(bits) << 16);
}
// Round to nearest even; NaN -> kBf16Nan.
inline uint16_t to_bf16(float x) {
    if (is_nan(x))
        return kBf16Nan;
    uint32_t u = std::bit_cast<uint32_t>(x);
    u += 0x7fffu + ((u >> 16) & 1);
    return uint16_t(u >> 16);
}
// x's bits, NaN -> kFp32Nan.
inline uint32_t to_fp32_bits(float x) {
    return is_nan(x) ? kFp32Nan : std::bit_cast<uint32_t>(x);
}
// Round to nearest even, saturate to the type's range; NaN -> 0.
int8_t to_int8(float x);
int32_t to_int32(float x);

} // namespace tpu::engine::vpu_math
