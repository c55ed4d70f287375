// SPDX-License-Identifier: MIT
// The bf16 MATMUL arithmetic of the card (docs/hardware.md, Numerics, spec 1.3: the block
// arithmetic of Intel AMX tdpbf16ps) in portable scalar code: the model the vector kernels and
// the systolic array reproduce bit for bit, and the scalar kernel set itself. For each output,
// K is cut into blocks of kBlock = 32 consecutive k from the start of the weight tile; within a
// block the even-k and the odd-k products are summed in two chains E and O, each from +0, in
// ascending k, with the step
//   step(c, a w) = FTZ(RNE(DAZ(c) + DAZ(a) x DAZ(w)))
// (an exact product, one round to nearest even, DAZ = subnormal inputs read as zero of the same
// sign, FTZ = a result that is tiny after rounding, i.e. rounded with an unbounded exponent its
// magnitude is below 2^-126, becomes zero of the same sign); then the block is added to the
// accumulator once: acc = add(acc, add(E, O)) with add(x, y) = FTZ(RNE(DAZ(x) + DAZ(y))).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include <tpu_hw.h>
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

// k per block: the unit in which the chains are added to the accumulator.
inline constexpr uint32_t kBlock = TPU_BF16_BLOCK_K;

// FTZ(RNE(DAZ(x) + DAZ(y))). Both terms are then zero or at least 2^-126 in magnitude, so the
// exact sum lies on the 2^-149 grid: a tiny sum is exact, and the flush a magnitude test.
inline float add(float x, float y) {
    const float r = daz(x) + daz(y);
    return std::fabs(r) < kMinNormal ? std::copysign(0.0f, r) : r;
}

// The end of a block: its chains E and O added to the accumulator.
inline float combine(float acc, float e, float o) {
    return add(acc, add(e, o));
}

#if defined(__x86_64__)
// Runs a scope with MXCSR set to round to nearest even, flush to zero and denormals are zero:
// x86 fma then computes step() exactly (x86 detects tininess after rounding), which is how the
// AVX2 and AVX-512F kernels emulate the chains, and an add computes add(): every kernel runs
// its combining adds in this scope. Restores the previous MXCSR.
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
