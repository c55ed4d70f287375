// SPDX-License-Identifier: MIT
// FpEnvGuard: runs a scope with the floating-point environment the card's numerics require
// (round to nearest even, subnormals kept: no flush-to-zero, no denormals-are-zero), whatever the
// host thread had set, and restores the previous environment afterwards.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>

namespace tpu::engine {

class FpEnvGuard {
  public:
    FpEnvGuard() : saved_(_mm_getcsr()) { _mm_setcsr(kDefaultMxcsr); }
    ~FpEnvGuard() { _mm_setcsr(saved_); }
    FpEnvGuard(const FpEnvGuard &) = delete;
    FpEnvGuard &operator=(const FpEnvGuard &) = delete;

  private:
    static constexpr unsigned kDefaultMxcsr = 0x1f80; // all exceptions masked, RNE, no FTZ/DAZ
    unsigned saved_;
};

} // namespace tpu::engine
#else
#include <cfenv>

namespace tpu::engine {

class FpEnvGuard {
  public:
    FpEnvGuard() : saved_(std::fegetround()) { std::fesetround(FE_TONEAREST); }
    ~FpEnvGuard() { std::fesetround(saved_); }
    FpEnvGuard(const FpEnvGuard &) = delete;
    FpEnvGuard &operator=(const FpEnvGuard &) = delete;

  private:
    int saved_;
};

} // namespace tpu::engine
#endif
