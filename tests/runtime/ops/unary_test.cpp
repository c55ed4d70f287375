// SPDX-License-Identifier: MIT
// unary_test.cpp - unary functions over arrays (compile_unary) run on the engine and equal
// docs/hardware.md's ACTIVATE definitions evaluated step by step in binary32 (EXP's Cody-Waite
// reduction and polynomial: golden/reference_exp.hpp; here SIGMOID and TANH from it, GELU, ERF
// (spec 2.3); RELU, RELU6, NONE),
// for fp32, bf16 and int8 inputs into fp32, bf16 and int8 outputs, with scales (quantising and
// dequantising casts), zeros (which the op reads as +0), infinities and NaN, in chunks over a
// small unified buffer and split programs.
#include "engine_runner.hpp"

#include <tpu_test/card.hpp>

#include <tpurt/codegen/vector_compiler.hpp>
#include <tpurt/error.hpp>
#include <tpurt/golden/reference_exp.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/types/bf16.hpp>

#include <catch2/catch.hpp>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using runtime_test::engine_config;
using runtime_test::limits_of;
using tpurt::Activation;
using tpurt::DType;

namespace {

constexpr std::uint64_t a_va = 0x100000000ull, d_va = 0x200000000ull;
const float nan = std::numeric_limits<float>::quiet_NaN();
const float inf = std::numeric_limits<float>::infinity();

float spec_sigmoid(float x) {
    if (x >= 0)
        return 1.0f / (1.0f + tpurt::reference_exp(-x));
    const float e = tpurt::reference_exp(x);
    return e / (1.0f + e);
}

float spec_tanh(float x) {
    const float a = std::fabs(x);
    if (a > 0.625f) {
        const float t = 1.0f - 2.0f / (tpurt::reference_exp(a + a) + 1.0f);
        return std::signbit(x) ? -t : t;
    }
    const float z = x * x;
    const float q =
        tpurt::reference_horner({-5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                                 1.33314422036e-1f, -3.33332819422e-1f},
                                z);
    return (q * z) * x + x;
}

float spec_gelu(float x) {
    const float x3 = (x * x) * x;
    const float v = 1.59576912f * (x + 0.044715f * x3);
    const float s = spec_sigmoid(v);
    return s == 0 ? -0.0f : x * s;
}

float spec_erf(float x) {
    if (std::isnan(x))
        return nan;
    const float a = std::fabs(x);
    float r = 1.0f;
    if (a < 1.0f) {
        const float z = a * a;
        r = a * tpurt::reference_horner({7.898137119e-5f, -8.024330600e-4f, 5.190050695e-3f,
                                         -2.685480751e-2f, 1.128361225e-1f, -3.761262894e-1f,
                                         1.128379226f},
                                        z);
    } else if (a < 4.0f) {
        const float u = 1.0f / a;
        const float q = tpurt::reference_horner(
            {3.206583485e-2f, -1.871951520e-1f, 4.562140107e-1f, -5.615038872e-1f, 2.593266070e-1f,
             2.187654823e-1f, -3.716936111e-1f, 1.960391551e-2f, 5.618857145e-1f, 1.146692957e-4f},
            u);
        r = 1.0f - tpurt::reference_exp(-(a * a)) * q;
    }
    return std::signbit(x) ? -r : r;
}

float spec(Activation f, float x) {
    switch (f) {
    case Activation::None:
        return x;
    case Activation::Relu:
        return std::isnan(x) ? x : (x > 0 ? x : 0.0f);
    case Activation::Relu6:
        return std::isnan(x) ? x : std::fmin(std::fmax(x, 0.0f), 6.0f);
    case Activation::Gelu:
        return spec_gelu(x);
    case Activation::Sigmoid:
        return spec_sigmoid(x);
    case Activation::Tanh:
        return spec_tanh(x);
    case Activation::Exp:
        return tpurt::reference_exp(x);
    case Activation::Erf:
        return spec_erf(x);
    default: // the spec 1.4 functions: tests/engine/vpu/vpu_train_test.cpp
        break;
    }
    return nan;
}

// The card's conversion of an ACTIVATE result to `type`, as bytes appended to out.
void convert(DType type, float v, std::vector<std::byte> &out) {
    const auto put = [&](const auto value) {
        const auto *b = reinterpret_cast<const std::byte *>(&value);
        out.insert(out.end(), b, b + sizeof(value));
    };
    switch (type) {
    case DType::Fp32:
        put(std::isnan(v) ? 0x7fc00000u : std::bit_cast<std::uint32_t>(v));
        break;
    case DType::Bf16:
        put(std::isnan(v) ? std::uint16_t{0x7fc0} : tpurt::Bf16::from_float(v).bits);
        break;
    case DType::Int8:
        put(static_cast<std::int8_t>(
            std::isnan(v) ? 0 : std::clamp(std::nearbyint(v), -128.0f, 127.0f)));
        break;
    case DType::Int32:
        put(static_cast<std::int32_t>(
            std::isnan(v)
                ? 0
                : std::clamp(static_cast<double>(std::nearbyint(v)), -2147483648.0, 2147483647.0)));
        break;
    }
}

std::vector<float> inputs(std::size_t count) {
    std::vector<float> x = tpurt::random_fp32(count, 77);
    for (std::size_t i = 0; i < count; ++i)
        x[i] *= (i % 3 == 0) ? 0.05f : 1.0f; // up to 2^8, many in (-13, 13)
    const float specials[] = {0.0f, -0.0f, inf, -inf, nan, 88.5f, 90.0f, -103.0f, -105.0f, 0.625f};
    std::copy(std::begin(specials), std::end(specials), x.begin());
    return x;
}

void check(const tpu_engine_config &cfg, DType type, DType out_type, Activation f,
           std::size_t count, std::size_t max_program_bytes = TPU_PROGRAM_MAX_BYTES,
           float scale = 1.0f) {
    INFO(tpurt::dtype_name(type) << " -> " << tpurt::dtype_name(out_type) << " "
                                 << tpurt::activation_name(f) << " x " << count);
    const std::vector<float> x = inputs(count);
    std::vector<std::byte> in;
    std::vector<float> read(count); // what the op applies f to
    for (std::size_t i = 0; i < count; ++i) {
        if (type == DType::Int8) {
            const auto v = static_cast<std::int8_t>(std::clamp(x[i] * 16, -128.0f, 127.0f));
            in.push_back(static_cast<std::byte>(v));
            read[i] = v; // int32 accumulators, converted exactly
        } else if (type == DType::Fp32) {
            in.insert(in.end(), reinterpret_cast<const std::byte *>(&x[i]),
                      reinterpret_cast<const std::byte *>(&x[i]) + 4);
            read[i] = x[i] == 0 ? 0.0f : x[i];
        } else {
            const tpurt::Bf16 h = tpurt::Bf16::from_float(x[i]);
            in.insert(in.end(), reinterpret_cast<const std::byte *>(&h),
                      reinterpret_cast<const std::byte *>(&h) + 2);
            const float v = h.to_float();
            read[i] = (v == 0 || std::fabs(v) < 0x1p-126f) ? 0.0f : v;
        }
    }
    const std::uint64_t out_elem = tpurt::element_size(out_type);
    const auto programs = tpurt::compile_unary({.type = type,
                                                .out_type = out_type,
                                                .function = f,
                                                .scale = scale,
                                                .elements = count,
                                                .a_addr = a_va,
                                                .dst_addr = d_va},
                                               limits_of(cfg), max_program_bytes);
    tpu::test::HostMemory memory;
    tpu::test::Card card(memory, cfg);
    tpu::test::AddressSpace space = card.address_space(1);
    space.map(a_va, in.size(), tpu::test::kRead);
    space.map(d_va, count * out_elem, tpu::test::kWrite);
    space.write(a_va, in.data(), in.size());
    for (const tpurt::Program &p : programs) {
        const tpu_job_result r = card.run(space, p.insns);
        INFO("status " << r.status << " at " << r.error_pc);
        REQUIRE(r.status == TPU_ERR_NONE);
    }
    std::vector<std::byte> got(count * out_elem), want;
    space.read(d_va, got.data(), got.size());
    for (std::size_t i = 0; i < count; ++i)
        convert(out_type, spec(f, read[i] * scale), want);
    for (std::size_t i = 0; i < count; ++i) {
        INFO("element " << i << " x = " << x[i]);
        REQUIRE(std::memcmp(&got[i * out_elem], &want[i * out_elem], out_elem) == 0);
    }
}

const tpu_engine_config card = engine_config(128, 128, 8u << 20, 4u << 20);
const tpu_engine_config tiny = engine_config(4, 4, 1024, 1024);

} // namespace

TEST_CASE("unary functions equal ACTIVATE's definitions", "[unary]") {
    for (Activation f : {Activation::None, Activation::Relu, Activation::Relu6, Activation::Gelu,
                         Activation::Sigmoid, Activation::Tanh, Activation::Exp, Activation::Erf}) {
        check(card, DType::Fp32, DType::Fp32, f, 70000);
        check(card, DType::Bf16, DType::Bf16, f, 3000);
    }
    check(card, DType::Fp32, DType::Int8, Activation::Relu6, 500);
    check(card, DType::Bf16, DType::Fp32, Activation::Tanh, 500);
}

TEST_CASE("casts with a scale quantise and dequantise", "[unary]") {
    // fp32 -> int8 with scale 1 / step, int8 -> fp32 with scale step, and a scaled function.
    check(card, DType::Fp32, DType::Int8, Activation::None, 5000, TPU_PROGRAM_MAX_BYTES, 10.0f);
    check(card, DType::Int8, DType::Fp32, Activation::None, 5000, TPU_PROGRAM_MAX_BYTES, 0.125f);
    check(card, DType::Int8, DType::Bf16, Activation::Sigmoid, 5000, TPU_PROGRAM_MAX_BYTES, 0.05f);
    check(card, DType::Bf16, DType::Fp32, Activation::Exp, 3000, TPU_PROGRAM_MAX_BYTES, -1.5f);
}

TEST_CASE("unary functions chunk over small memories and split programs", "[unary]") {
    check(tiny, DType::Fp32, DType::Bf16, Activation::Sigmoid, 1000);
    CHECK(tpurt::compile_unary({.elements = 5000, .a_addr = a_va, .dst_addr = d_va},
                               limits_of(tiny), 1024)
              .size() > 1);
    check(tiny, DType::Fp32, DType::Fp32, Activation::Exp, 5000, 1024);
}

TEST_CASE("unary functions refuse int32 inputs and empty arrays", "[unary][errors]") {
    CHECK_THROWS_AS(tpurt::compile_unary({.type = DType::Int32, .elements = 4}, limits_of(card)),
                    tpurt::Error);
    CHECK_THROWS_AS(tpurt::compile_unary({.elements = 0}, limits_of(card)), tpurt::Error);
}
