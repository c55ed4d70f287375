// SPDX-License-Identifier: MIT
// ACTIVATE ERF (spec 2.3): the error function as docs/hardware.md defines it, against the
// double-precision std::erf over every 37th positive binary32 below 4.5 (its documented ulp
// bounds), its odd symmetry bit for bit, and its special values.
#include <catch2/catch.hpp>

#include <bit>
#include <cfloat>
#include <cmath>

#include "fp_env.hpp"
#include "tpu_hw.h"
#include "vpu/vpu_math.hpp"

namespace vm = tpu::engine::vpu_math;

namespace {

// |got - want| in units of the last place of want as a binary32.
double ulps(float got, double want) {
    int e;
    std::frexp(want, &e);
    return std::fabs(double(got) - want) / std::ldexp(1.0, std::max(e - 24, -149));
}

} // namespace

TEST_CASE("erf is within its documented error and odd", "[activate][erf]") {
    tpu::engine::FpEnvGuard env;
    double below_one = 0, from_one = 0;
    unsigned asymmetric = 0;
    for (uint32_t b = 1; b < std::bit_cast<uint32_t>(4.5f); b += 37) {
        const float x = std::bit_cast<float>(b);
        const float y = vm::erf(x);
        const double e = ulps(y, std::erf(double(x)));
        (x < 1.0f ? below_one : from_one) = std::max(x < 1.0f ? below_one : from_one, e);
        asymmetric +=
            std::bit_cast<uint32_t>(vm::erf(-x)) != (std::bit_cast<uint32_t>(y) ^ 0x80000000u);
    }
    INFO("worst below 1: " << below_one << " ulp, from 1: " << from_one << " ulp");
    CHECK(below_one <= 2.5);
    CHECK(from_one <= 1.5);
    CHECK(asymmetric == 0);
}

TEST_CASE("erf at special values", "[activate][erf]") {
    tpu::engine::FpEnvGuard env;
    CHECK(std::bit_cast<uint32_t>(vm::erf(0.0f)) == 0u);
    CHECK(std::bit_cast<uint32_t>(vm::erf(-0.0f)) == 0x80000000u);
    CHECK(vm::erf(INFINITY) == 1.0f);
    CHECK(vm::erf(-INFINITY) == -1.0f);
    CHECK(vm::erf(4.0f) == 1.0f);
    CHECK(vm::erf(FLT_MAX) == 1.0f);
    CHECK(std::isnan(vm::erf(NAN)));
    CHECK(vm::erf(1.0f) == float(std::erf(1.0)));
    const float tiny = std::bit_cast<float>(1u << 20); // subnormal: erf(x) = 2x / sqrt(pi)
    CHECK(vm::erf(tiny) == Approx(double(tiny) * 1.1283791670955126).epsilon(1e-6));
    CHECK(vm::activate(TPU_ACT_ERF, 0.5f) == vm::erf(0.5f));
}
