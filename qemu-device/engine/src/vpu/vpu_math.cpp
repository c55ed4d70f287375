// SPDX-License-Identifier: MIT
// The vector unit's activation functions and conversions as fixed binary32 operation sequences.
// Callers hold an FpEnvGuard (round to nearest even, no flush to zero).
#include "vpu/vpu_math.hpp"

#include <cmath>

#include "tpu_hw.h"

namespace tpu::engine::vpu_math {
namespace {

// 2^e for -126 <= e <= 127.
float pow2(int e) {
    return std::bit_cast<float>(uint32_t(e + 127) << 23);
}

// The nearest integer, ties to even (the rounding mode the caller's FpEnvGuard set).
float round_even(float x) {
    return std::nearbyint(x);
}

} // namespace

float exp(float x) {
    if (is_nan(x))
        return x;
    if (x > 89.0f)
        return INFINITY;
    if (x < -104.0f)
        return 0.0f;
    // x = n ln2 + r, |r| <= ln2 / 2 (about): n by rounding x / ln2, r by Cody-Waite with
    // ln2 = c1 + c2, c1 exact in 9 bits so n * c1 is exact.
    const float n = round_even(x * 1.44269504088896341f);
    const float c1 = 0.693359375f;
    const float c2 = -2.12194440e-4f;
    float r = x - n * c1;
    r = r - n * c2;
    // exp(r) = 1 + r + r^2 p(r), p of degree 5 (Cephes expf coefficients), Horner.
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    float e = p * (r * r) + r + 1.0f;
    // Scale by 2^n in two exact-exponent steps so every factor is a normal float.
    const int ni = int(n);
    const int n1 = ni / 2;
    return (e * pow2(n1)) * pow2(ni - n1);
}

float sigmoid(float x) {
    if (x >= 0.0f)
        return 1.0f / (1.0f + exp(-x));
    const float e = exp(x); // x < 0 or NaN
    return e / (1.0f + e);
}

float tanh(float x) {
    const float a = std::fabs(x);
    if (a > 0.625f) {
        // 1 - 2 / (e^2a + 1), sign of x.
        const float e = exp(a + a);
        const float t = 1.0f - 2.0f / (e + 1.0f);
        return x < 0.0f ? -t : t;
    }
    // Odd polynomial x + x^3 q(x^2) (Cephes tanhf coefficients), Horner; also NaN.
    const float z = x * x;
    float q = -5.70498872745e-3f;
    q = q * z + 2.06390887954e-2f;
    q = q * z - 5.37397155531e-2f;
    q = q * z + 1.33314422036e-1f;
    q = q * z - 3.33332819422e-1f;
    return q * z * x + x;
}

float gelu(float x) {
    // 0.5 x (1 + tanh(u)) = x sigmoid(2u), u = sqrt(2 / pi) (x + 0.044715 x^3): the same
    // function without the cancellation of 1 + tanh(u) for negative x.
    const float x3 = x * x * x;
    const float inner = x + 0.044715f * x3;
    const float s = sigmoid(1.59576912160573071f * inner);
    // s is 0 only far in the negative tail, where x may be -inf: the limit is -0.
    return s == 0.0f ? -0.0f : x * s;
}

float log(float x) {
    if (is_nan(x) || x < 0.0f)
        return NAN;
    if (x == 0.0f)
        return -INFINITY;
    if (x == INFINITY)
        return x;
    // x = m 2^e with m in [sqrt(1/2), sqrt(2)); subnormals first scaled by 2^23 (exact).
    int e = 0;
    if (x < 1.17549435e-38f) {
        x = x * 8388608.0f;
        e = -23;
    }
    const uint32_t u = std::bit_cast<uint32_t>(x);
    e += int(u >> 23) - 126;
    float m = std::bit_cast<float>((u & 0x007fffffu) | 0x3f000000u); // [0.5, 1)
    if (m < 0.707106781f) {
        e -= 1;
        m = m + m - 1.0f;
    } else {
        m = m - 1.0f;
    }
    // log(1 + m) = m - m^2 / 2 + m^3 p(m), p of degree 8 (Cephes logf coefficients), Horner;
    // e ln2 added in two parts (Cody-Waite, e * 0.693359375 exact).
    const float z = m * m;
    float p = 7.0376836292e-2f;
    p = p * m - 1.1514610310e-1f;
    p = p * m + 1.1676998740e-1f;
    p = p * m - 1.2420140846e-1f;
    p = p * m + 1.4249322787e-1f;
    p = p * m - 1.6668057665e-1f;
    p = p * m + 2.0000714765e-1f;
    p = p * m - 2.4999993993e-1f;
    p = p * m + 3.3333331174e-1f;
    const float fe = float(e);
    float y = p * m * z;
    y = y + fe * -2.12194440e-4f;
    y = y - 0.5f * z;
    const float r = m + y;
    return r + fe * 0.693359375f;
}

float sqrt(float x) {
    return std::sqrt(x); // IEEE square root, correctly rounded; x < 0 gives NaN
}

float rsqrt(float x) {
    return 1.0f / std::sqrt(x);
}

float recip(float x) {
    return 1.0f / x;
}

float erf(float x) {
    if (is_nan(x))
        return x;
    const float a = std::fabs(x);
    float r;
    if (a < 1.0f) {
        // erf(a) = a p(a^2), p of degree 6 fitted for relative error on [0, 1).
        const float z = a * a;
        float p = 7.898137119e-05f;
        p = p * z - 8.024330600e-04f;
        p = p * z + 5.190050695e-03f;
        p = p * z - 2.685480751e-02f;
        p = p * z + 1.128361225e-01f;
        p = p * z - 3.761262894e-01f;
        p = p * z + 1.128379226e+00f;
        r = a * p;
    } else if (a < 4.0f) {
        // erf(a) = 1 - exp(-a^2) q(1 / a), q of degree 9 fitted to erfc(a) exp(a^2) on [1, 4).
        const float u = 1.0f / a;
        const float e = exp(-(a * a));
        float q = 3.206583485e-02f;
        q = q * u - 1.871951520e-01f;
        q = q * u + 4.562140107e-01f;
        q = q * u - 5.615038872e-01f;
        q = q * u + 2.593266070e-01f;
        q = q * u + 2.187654823e-01f;
        q = q * u - 3.716936111e-01f;
        q = q * u + 1.960391551e-02f;
        q = q * u + 5.618857145e-01f;
        q = q * u + 1.146692957e-04f;
        r = 1.0f - e * q;
    } else {
        r = 1.0f; // erf(a) rounds to 1 from a = 3.92
    }
    return std::signbit(x) ? -r : r;
}

float activate(uint8_t func, float x) {
    switch (func) {
    case TPU_ACT_RELU:
        return x > 0.0f || is_nan(x) ? x : 0.0f;
    case TPU_ACT_RELU6:
        if (is_nan(x))
            return x;
        return x > 6.0f ? 6.0f : (x > 0.0f ? x : 0.0f);
    case TPU_ACT_GELU:
        return gelu(x);
    case TPU_ACT_SIGMOID:
        return sigmoid(x);
    case TPU_ACT_TANH:
        return tanh(x);
    case TPU_ACT_EXP:
        return exp(x);
    case TPU_ACT_LOG:
        return log(x);
    case TPU_ACT_SQRT:
        return sqrt(x);
    case TPU_ACT_RSQRT:
        return rsqrt(x);
    case TPU_ACT_RECIP:
        return recip(x);
    case TPU_ACT_ERF:
        return erf(x);
    default: // TPU_ACT_NONE
        return x;
    }
}

int8_t to_int8(float x) {
    if (is_nan(x))
        return 0;
    if (x >= 127.0f)
        return 127;
    if (x <= -128.0f)
        return -128;
    return int8_t(round_even(x));
}

int32_t to_int32(float x) {
    if (is_nan(x))
        return 0;
    if (x >= 2147483648.0f)
        return INT32_MAX;
    if (x <= -2147483648.0f)
        return INT32_MIN;
    return int32_t(round_even(x));
}

} // namespace tpu::engine::vpu_math
