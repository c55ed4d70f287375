// SPDX-License-Identifier: MIT
// The bf16 MATMUL arithmetic of the card (docs/hardware.md, Numerics, spec 1.2) in portable
// scalar code: the model the vector kernels and the systolic array reproduce bit for bit, and
// the scalar kernel set itself. K is processed in pairs (2i, 2i+1); a pair adds the odd product
// first, then the even one: acc = step(step(acc, a[2i+1] w[2i+1]), a[2i] w[2i]). An odd K ends
// with the last element alone: acc = step(acc, a[K-1] w[K-1]). One step is
//   step(c, a w) = FTZ(RNE(DAZ(c) + DAZ(a) x DAZ(w)))
// with an exact product, one round to nearest even, DAZ = subnormal inputs read as zero of the
// same sign, and FTZ = a result that is tiny after rounding (rounded with an unbounded exponent,
// its magnitude is below 2^-126) becomes zero of the same sign. This is what AVX512-BF16
// vdpbf16ps computes per lane.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#if defined(__x86_64__)
#include <xmmintrin.h>
#endif

namespace tpu::engine::bf16 {

inline constexpr float kMinNormal = 0x1p-126f;

// Subnormal inputs read as zero of the same sign.
inline float daz(float x) {
    const uint32_t bits = std::bit_cast<uint32_t>(x);
    return (bits & 0x7f800000u) == 0 ? std::bit_cast<float>(bits & 0x80000000u) : x;
}

// step(c, a w) for inputs already DAZ'd. fma rounds to the subnormal grid; that decides the
// flush everywhere except when it returns exactly +-2^-126: then the exact sum lies within half
// a subnormal ulp of it and only rounding with an unbounded exponent tells whether the result is
// tiny. Near 2^-126 both |a w| and |c| are below 2^-100 and |a| below 2^26 (|w| >= 2^-126 or
// w = 0), so the sum scaled by 2^24 is computed exactly as a normal fma.
inline float step_dazed(float c, float a, float w) {
    const float r = std::fma(a, w, c);
    const float mag = std::fabs(r);
    if (mag > kMinNormal || !(mag == mag) || r == 0.0f)
        return r; // normal, infinite or NaN, or an exact / rounded zero
    if (mag == kMinNormal) {
        const float scaled = std::fma(a * 0x1p24f, w, c * 0x1p24f);
        return std::fabs(scaled) < 0x1p-102f ? std::copysign(0.0f, scaled) : r;
    }
    return std::copysign(0.0f, r);
}

inline float step(float c, float a, float w) {
    return step_dazed(daz(c), daz(a), daz(w));
}

// One pair: odd product first, then even.
inline float pair(float c, float a_even, float w_even, float a_odd, float w_odd) {
    return step(step(c, a_odd, w_odd), a_even, w_even);
}

#if defined(__x86_64__)
// Runs a scope with MXCSR set to round to nearest even, flush to zero and denormals are zero:
// x86 fma then computes step() exactly (x86 detects tininess after rounding), which is how the
// AVX2 and AVX-512F kernels emulate the pairs. Restores the previous MXCSR.
class FlushDenormalsScope {
  public:
    FlushDenormalsScope() : saved_(_mm_getcsr()) { _mm_setcsr(kFtzDazMxcsr); }
    ~FlushDenormalsScope() { _mm_setcsr(saved_); }
    FlushDenormalsScope(const FlushDenormalsScope &) = delete;
    FlushDenormalsScope &operator=(const FlushDenormalsScope &) = delete;

  private:
    static constexpr unsigned kFtzDazMxcsr = 0x9fc0; // exceptions masked, RNE, FTZ, DAZ
    unsigned saved_;
};
#endif

} // namespace tpu::engine::bf16
