// SPDX-License-Identifier: MIT
// reference_exp.hpp - the CPU golden model of ACTIVATE's EXP (docs/hardware.md, Numerics) in
// binary32, one operation at a time: Cody-Waite reduction, a Horner polynomial, the scaling by
// two powers of two; and that Horner evaluation, which the card's other functions share.
#pragma once

#include <bit>
#include <cmath>
#include <initializer_list>
#include <limits>

namespace tpurt {

// Horner's rule in binary32 (no fused multiply-add): q = c0, then q = q x + c for each next c.
inline float reference_horner(std::initializer_list<float> coefficients, float x) {
    float q = 0;
    bool first = true;
    for (float c : coefficients) {
        q = first ? c : q * x + c;
        first = false;
    }
    return q;
}

inline float reference_exp(float x) {
    if (std::isnan(x))
        return std::numeric_limits<float>::quiet_NaN();
    if (x > 89.0f)
        return std::numeric_limits<float>::infinity();
    if (x < -104.0f)
        return 0.0f;
    const float n = std::nearbyint(x * std::bit_cast<float>(0x3fb8aa3bu));
    const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
    const float p = reference_horner({1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                      4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f},
                                     r);
    const float e = (p * (r * r) + r) + 1.0f;
    const int ni = static_cast<int>(n), h = ni / 2;
    return (e * std::ldexp(1.0f, h)) * std::ldexp(1.0f, ni - h);
}

} // namespace tpurt
