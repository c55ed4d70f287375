// SPDX-License-Identifier: MIT
// ACTIVATE and the vector unit's numerics: the binary32 definitions of exp, sigmoid, tanh and
// gelu against double-precision std:: functions within the error bounds documented in
// docs/hardware.md, their special values, and ACTIVATE end to end in both engine modes — bias,
// scale, every function, int32 or fp32 accumulators, and the conversions to INT8 / INT32 (round
// to nearest even, saturate, NaN -> 0), BF16 (round to nearest even, NaN -> 0x7fc0) and FP32.
#include <catch2/catch.hpp>

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>

#include "fp_env.hpp"
#include "rig.hpp"
#include "tpu_test/bf16.hpp"
#include "vpu/vpu_math.hpp"

using namespace tpu::test;
namespace vm = tpu::engine::vpu_math;

namespace {

// |got - want| in units of the last place of want as a binary32 (subnormal spacing below 2^-126).
double ulps(float got, double want) {
    if (std::isinf(want) || std::fabs(want) > double(FLT_MAX))
        return std::isinf(got) && (got > 0) == (want > 0) ? 0.0 : 1e30;
    int e;
    std::frexp(want, &e);
    return std::fabs(double(got) - want) / std::ldexp(1.0, std::max(e - 24, -149));
}

double ref_exp(double x) {
    return std::exp(x);
}
double ref_sigmoid(double x) {
    return 1.0 / (1.0 + std::exp(-x));
}
double ref_tanh(double x) {
    return std::tanh(x);
}
double ref_gelu(double x) {
    return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}
// The same function, stable in double for the far negative tail.
double ref_gelu_stable(double x) {
    double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    return x / (1.0 + std::exp(-2.0 * u));
}

// Worst error of f over every 4099th binary32 value (NaN skipped) with x >= from.
double worst_ulps(float (*f)(float), double (*ref)(double), float from) {
    tpu::engine::FpEnvGuard env;
    double worst = 0;
    for (uint64_t b = 0; b < (1ull << 32); b += 4099) {
        float x = std::bit_cast<float>(uint32_t(b));
        if (std::isnan(x) || x < from)
            continue;
        worst = std::max(worst, ulps(f(x), ref(x)));
    }
    return worst;
}

int8_t ref_int8(float x) {
    return std::isnan(x) ? 0 : int8_t(std::clamp(std::nearbyint(double(x)), -128.0, 127.0));
}
int32_t ref_int32(float x) {
    return std::isnan(x)
               ? 0
               : int32_t(std::clamp(std::nearbyint(double(x)), -2147483648.0, 2147483647.0));
}
uint16_t ref_bf16(float x) {
    return std::isnan(x) ? 0x7fc0 : float_to_bf16(x);
}

} // namespace

TEST_CASE("exp, sigmoid, tanh and gelu are within the documented error", "[activate]") {
    CHECK(worst_ulps(vm::exp, ref_exp, -INFINITY) <= 1.0);
    CHECK(worst_ulps(vm::sigmoid, ref_sigmoid, -INFINITY) <= 2.5);
    CHECK(worst_ulps(vm::tanh, ref_tanh, -INFINITY) <= 1.5);
    CHECK(worst_ulps(vm::gelu, ref_gelu, -1.0f) <= 3.0);
    CHECK(worst_ulps(vm::gelu, ref_gelu_stable, -4.0f) <= 25.0);
}

TEST_CASE("activation functions at special values", "[activate]") {
    tpu::engine::FpEnvGuard env;
    CHECK(vm::exp(0.0f) == 1.0f);
    CHECK(vm::exp(-0.0f) == 1.0f);
    CHECK(vm::exp(INFINITY) == INFINITY);
    CHECK(vm::exp(-INFINITY) == 0.0f);
    CHECK(vm::exp(88.8f) == INFINITY);
    CHECK(vm::exp(-103.0f) > 0.0f); // subnormal results are kept
    CHECK(std::isnan(vm::exp(NAN)));
    CHECK(vm::sigmoid(0.0f) == 0.5f);
    CHECK(vm::sigmoid(INFINITY) == 1.0f);
    CHECK(vm::sigmoid(-INFINITY) == 0.0f);
    CHECK(vm::sigmoid(-100.0f) > 0.0f);
    CHECK(vm::tanh(0.0f) == 0.0f);
    CHECK(vm::tanh(INFINITY) == 1.0f);
    CHECK(vm::tanh(-INFINITY) == -1.0f);
    CHECK(vm::gelu(0.0f) == 0.0f);
    CHECK(vm::gelu(INFINITY) == INFINITY);
    CHECK(vm::gelu(-INFINITY) == 0.0f);
    CHECK(vm::gelu(1e30f) == 1e30f);
    for (uint8_t f = TPU_ACT_NONE; f <= TPU_ACT_EXP; f++)
        CHECK(std::isnan(vm::activate(f, NAN)));
    CHECK(vm::activate(TPU_ACT_RELU, -3.0f) == 0.0f);
    CHECK(vm::activate(TPU_ACT_RELU6, 7.5f) == 6.0f);
    CHECK(vm::activate(TPU_ACT_RELU6, 2.5f) == 2.5f);
}

TEST_CASE("conversions round to nearest even and saturate", "[activate]") {
    tpu::engine::FpEnvGuard env;
    for (float x : {0.5f,           1.5f,     2.5f,       -0.5f,     -1.5f,         -2.5f,
                    126.5f,         127.4f,   127.5f,     1e9f,      -128.4f,       -128.5f,
                    -1e9f,          INFINITY, -INFINITY,  NAN,       2147483520.0f, 2147483648.0f,
                    -2147483648.0f, -3e9f,    8388609.0f, 4194304.5f}) {
        CAPTURE(x);
        CHECK(vm::to_int8(x) == ref_int8(x));
        CHECK(vm::to_int32(x) == ref_int32(x));
        CHECK(vm::to_bf16(x) == ref_bf16(x));
    }
    CHECK(vm::to_bf16(std::bit_cast<float>(0x3f808000u)) == 0x3f80); // tie to even, down
    CHECK(vm::to_bf16(std::bit_cast<float>(0x3f818000u)) == 0x3f82); // tie to even, up
    CHECK(vm::to_bf16(std::bit_cast<float>(0x7f7fffffu)) == 0x7f80); // overflow to inf
    CHECK(vm::to_fp32_bits(std::bit_cast<float>(0xffc12345u)) == 0x7fc00000u);
}

namespace {

// Runs ACTIVATE over accumulators made by an identity MATMUL of x (fp32, rows x 16) and returns
// the accumulators as read back plus the ACTIVATE output (rows x 16 of dtype).
struct ActivateRun {
    std::vector<float> acc;
    std::vector<uint8_t> out;
};

constexpr uint16_t kRows = 64, kCols = 16;

ActivateRun run_activate(Rig &rig, const std::vector<float> &x, const std::vector<float> &bias,
                         uint8_t dtype, uint16_t flags, float scale) {
    std::vector<float> eye(kCols * kCols, 0.0f);
    for (int i = 0; i < kCols; i++)
        eye[i * kCols + i] = 1.0f;
    rig.put(0, x);
    rig.put(0x10000, eye);
    rig.put(0x11000, bias);
    const uint32_t es = dtype == TPU_DT_INT8 ? 1 : dtype == TPU_DT_BF16 ? 2 : 4;
    Program p{dma_in(TPU_DT_FP32, kRows, kCols, Rig::kHost, 64, 0, 64),
              dma_in(TPU_DT_FP32, kCols, kCols, Rig::kHost + 0x10000, 64, 0x8000, 64),
              dma_in(TPU_DT_FP32, 1, kCols, Rig::kHost + 0x11000, 0, 0x9000, 0),
              load_w(TPU_DT_FP32, kCols, kCols, 0x8000, 64),
              matmul(TPU_DT_FP32, kRows, kCols, 0, 64, 0, 64),
              activate(dtype, flags, kRows, kCols, 0, 64, 0xa000, kCols * es,
                       flags & TPU_F_ACT_BIAS ? 0x9000 : 0, scale),
              dma_out_acc(TPU_DT_FP32, kRows, kCols, Rig::kHost + 0x20000, 64, 0, 64),
              dma_out(dtype, kRows, kCols, Rig::kHost + 0x30000, kCols * es, 0xa000, kCols * es)};
    tpu_job_result r = rig.run(p);
    REQUIRE(r.status == TPU_ERR_NONE);
    return ActivateRun{rig.get<float>(0x20000, kRows * kCols),
                       rig.get<uint8_t>(0x30000, uint64_t(kRows) * kCols * es)};
}

float out_fp32(const ActivateRun &r, uint64_t i) {
    float f;
    std::memcpy(&f, &r.out[4 * i], 4);
    return f;
}

} // namespace

TEST_CASE("ACTIVATE: bias, scale and every function, fp32 out", "[activate]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    const uint16_t func = GENERATE(range(0, TPU_ACT_EXP + 1));
    const bool bias = GENERATE(false, true);
    Rig rig(mode);
    std::mt19937_64 rng(func);
    std::uniform_real_distribution<float> wide(-12.0f, 12.0f);
    std::vector<float> x(kRows * kCols), b(kCols);
    for (float &v : x)
        v = wide(rng);
    x[0] = NAN;
    x[1] = INFINITY;
    x[2] = -INFINITY;
    x[3] = 0.0f;
    for (float &v : b)
        v = wide(rng) / 4;
    const float scale = 0.75f;
    ActivateRun r =
        run_activate(rig, x, b, TPU_DT_FP32, uint16_t(func | (bias ? TPU_F_ACT_BIAS : 0)), scale);
    for (uint64_t i = 0; i < x.size(); i++) {
        float in = r.acc[i];
        if (bias)
            in = in + b[i % kCols];
        in = in * scale;
        float got = out_fp32(r, i);
        CAPTURE(mode, func, bias, i, in, got);
        if (std::isnan(in)) {
            CHECK(std::bit_cast<uint32_t>(got) == 0x7fc00000u);
            continue;
        }
        switch (func) {
        case TPU_ACT_NONE:
            CHECK(got == in);
            break;
        case TPU_ACT_RELU: // bits: -0 and below give +0
            CHECK(std::bit_cast<uint32_t>(got) == std::bit_cast<uint32_t>(in > 0 ? in : 0.0f));
            break;
        case TPU_ACT_RELU6:
            CHECK(got == std::min(6.0f, in > 0 ? in : 0.0f));
            break;
        case TPU_ACT_GELU:
            CHECK(ulps(got, ref_gelu_stable(in)) <= (in >= -4.0f ? 25.0 : 200.0));
            break;
        case TPU_ACT_SIGMOID:
            CHECK(ulps(got, ref_sigmoid(in)) <= 2.5);
            break;
        case TPU_ACT_TANH:
            CHECK(ulps(got, ref_tanh(in)) <= 1.5);
            break;
        default:
            CHECK(ulps(got, ref_exp(in)) <= 1.0);
            break;
        }
    }
}

TEST_CASE("ACTIVATE RELU gives +0 for a result that rounds to -0", "[activate]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    Rig rig(mode);
    std::vector<float> x(kRows * kCols, 1.0f), b(kCols, 0.0f);
    x[0] = -0x1p-149f; // the accumulator keeps it; scaled by 1/4 it rounds to -0
    const ActivateRun r = run_activate(rig, x, b, TPU_DT_FP32, TPU_ACT_RELU, 0.25f);
    CHECK(std::bit_cast<uint32_t>(r.acc[0]) == std::bit_cast<uint32_t>(-0x1p-149f));
    CHECK(std::bit_cast<uint32_t>(out_fp32(r, 0)) == 0u);
    CHECK(out_fp32(r, 1) == 0.25f);
}

TEST_CASE("ACTIVATE converts to INT8, INT32 and BF16 like the fp32 result", "[activate]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    const uint16_t func = GENERATE(TPU_ACT_NONE, TPU_ACT_SIGMOID, TPU_ACT_EXP);
    Rig rig(mode);
    std::mt19937_64 rng(40 + func);
    std::uniform_real_distribution<float> wide(-300.0f, 300.0f);
    std::vector<float> x(kRows * kCols), b(kCols, 0.0f);
    for (uint64_t i = 0; i < x.size(); i++)
        x[i] = i % 3 ? wide(rng) : float(int(wide(rng))) + 0.5f; // ties too
    x[5] = NAN;
    x[6] = 3e9f;
    x[7] = -3e9f;
    const float scale = func == TPU_ACT_NONE ? 1.0f : 1.0f / 64;
    ActivateRun ref = run_activate(rig, x, b, TPU_DT_FP32, func, scale);
    for (uint8_t dt : {uint8_t(TPU_DT_INT8), uint8_t(TPU_DT_INT32), uint8_t(TPU_DT_BF16)}) {
        ActivateRun r = run_activate(rig, x, b, dt, func, scale);
        for (uint64_t i = 0; i < x.size(); i++) {
            float f = out_fp32(ref, i);
            CAPTURE(mode, func, int(dt), i, f);
            if (dt == TPU_DT_INT8) {
                CHECK(int8_t(r.out[i]) == ref_int8(f));
            } else if (dt == TPU_DT_INT32) {
                int32_t v;
                std::memcpy(&v, &r.out[4 * i], 4);
                CHECK(v == ref_int32(f));
            } else {
                uint16_t v;
                std::memcpy(&v, &r.out[2 * i], 2);
                CHECK(v == ref_bf16(f));
            }
        }
    }
}

TEST_CASE("ACTIVATE reads int32 accumulators with SRC_INT32", "[activate]") {
    const uint32_t mode = GENERATE(from_range(std::begin(kModes), std::end(kModes)));
    Rig rig(mode);
    // acc[m][n] = sum over k of a[m][k] * w[k][n], int8 x int8 -> int32, then requantised:
    // relu(acc * 2^-6) to int8.
    std::mt19937_64 rng(9);
    std::vector<int8_t> a(8 * 16), w(16 * 16);
    for (int8_t &v : a)
        v = int8_t(rng());
    for (int8_t &v : w)
        v = int8_t(rng());
    rig.put(0, a);
    rig.put(0x1000, w);
    Program p{dma_in(TPU_DT_INT8, 8, 16, Rig::kHost, 16, 0, 16),
              dma_in(TPU_DT_INT8, 16, 16, Rig::kHost + 0x1000, 16, 0x1000, 16),
              load_w(TPU_DT_INT8, 16, 16, 0x1000, 16),
              matmul(TPU_DT_INT8, 8, 16, 0, 16, 0, 64),
              activate(TPU_DT_INT8, TPU_ACT_RELU | TPU_F_ACT_SRC_INT32, 8, 16, 0, 64, 0x2000, 16, 0,
                       1.0f / 64),
              dma_out(TPU_DT_INT8, 8, 16, Rig::kHost + 0x2000, 16, 0x2000, 16)};
    REQUIRE(rig.run(p).status == TPU_ERR_NONE);
    std::vector<int8_t> got = rig.get<int8_t>(0x2000, 8 * 16);
    for (int m = 0; m < 8; m++)
        for (int n = 0; n < 16; n++) {
            int32_t acc = 0;
            for (int k = 0; k < 16; k++)
                acc += a[m * 16 + k] * w[k * 16 + n];
            float v = float(acc) * (1.0f / 64);
            CHECK(got[m * 16 + n] == ref_int8(v > 0 ? v : 0.0f));
        }
}
