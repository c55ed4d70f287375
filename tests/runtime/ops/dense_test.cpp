// SPDX-License-Identifier: MIT
// dense_test.cpp - dense layers compiled by the runtime and run on the engine equal a reference
// that applies the card's documented ACTIVATE steps to the reference matmul: bias, scale,
// function, conversion. NONE, RELU and RELU6 must match bit for bit for every output type;
// GELU, SIGMOID, TANH and EXP must lie within the documented ulp bounds of the functions
// evaluated in double precision. int8 layers requantise the int32 accumulators with a scale.
#include "engine_runner.hpp"

#include <tpu_test/reference.hpp>

#include <tpurt/golden/reference_dense.hpp>
#include <tpurt/testing/test_patterns.hpp>
#include <tpurt/types/bf16.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using runtime_test::engine_config;
using runtime_test::run_dense_on_engine;
using tpurt::Activation;
using tpurt::DType;

namespace {

const tpu_engine_config default_card = engine_config(128, 128, 16u << 20, 8u << 20);

// The accumulators of A x W as fp32 values after ACTIVATE's first step (int32 -> fp32, RNE).
std::vector<float> accumulators(const tpurt::DenseLayer &l, const void *a, const void *w) {
    switch (l.in_type) {
    case DType::Int8: {
        const auto acc =
            tpu::test::reference_matmul_int8(static_cast<const std::int8_t *>(a),
                                             static_cast<const std::int8_t *>(w), l.m, l.k, l.n);
        return std::vector<float>(acc.begin(), acc.end());
    }
    case DType::Bf16:
        return tpu::test::reference_matmul_bf16(static_cast<const std::uint16_t *>(a),
                                                static_cast<const std::uint16_t *>(w), l.m, l.k,
                                                l.n);
    default:
        return tpu::test::reference_matmul_fp32(static_cast<const float *>(a),
                                                static_cast<const float *>(w), l.m, l.k, l.n);
    }
}

// x after bias and scale, one binary32 operation each (the steps before the function).
std::vector<float> pre_activation(const tpurt::DenseLayer &l, const void *a, const void *w,
                                  const std::vector<float> &bias) {
    std::vector<float> x = accumulators(l, a, w);
    for (std::size_t i = 0; i < x.size(); ++i) {
        if (!bias.empty())
            x[i] = x[i] + bias[i % l.n];
        x[i] = x[i] * l.scale;
    }
    return x;
}

float exact_function(Activation f, float x) {
    if (std::isnan(x))
        return x;
    switch (f) {
    case Activation::Relu:
        return x > 0.0f ? x : 0.0f;
    case Activation::Relu6:
        return std::min(x > 0.0f ? x : 0.0f, 6.0f);
    default:
        return x;
    }
}

double double_function(Activation f, double x) {
    switch (f) {
    case Activation::Exp:
        return std::exp(x);
    case Activation::Sigmoid:
        return 1.0 / (1.0 + std::exp(-x));
    case Activation::Tanh:
        return std::tanh(x);
    default: // GELU, tanh approximation 0.5 x (1 + tanh(u)) in its stable form x sigmoid(2u)
        return x / (1.0 + std::exp(-2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
    }
}

// The documented bound, in ulps of the fp32 result, for the function at input x.
double ulp_bound(Activation f, float x) {
    switch (f) {
    case Activation::Exp:
        return 0.97;
    case Activation::Sigmoid:
        return 2.3;
    case Activation::Tanh:
        return 1.4;
    default:
        return x >= -1.0f ? 2.9 : x >= -4.0f ? 22.0 : 191.0;
    }
}

double ulps_off(float card, double ref) {
    const float r = static_cast<float>(ref);
    const double ulp =
        r == 0.0f ? 0x1p-149 : std::max(0x1p-149, std::ldexp(1.0, std::ilogb(r) - 23));
    return std::fabs(static_cast<double>(card) - ref) / ulp;
}

// ACTIVATE's final conversion of an fp32 value to `type`, as raw bytes appended to `out`.
void convert(float x, DType type, std::vector<std::byte> &out) {
    std::byte bytes[4];
    std::size_t size = tpurt::element_size(type);
    if (type == DType::Int8 || type == DType::Int32) {
        const double lo = type == DType::Int8 ? -128.0 : -2147483648.0;
        const double hi = type == DType::Int8 ? 127.0 : 2147483647.0;
        const double r = std::isnan(x) ? 0.0 : std::clamp(std::nearbyint(double{x}), lo, hi);
        if (type == DType::Int8) {
            const auto v = static_cast<std::int8_t>(r);
            std::memcpy(bytes, &v, 1);
        } else {
            const auto v = static_cast<std::int32_t>(r);
            std::memcpy(bytes, &v, 4);
        }
    } else if (type == DType::Bf16) {
        const tpurt::Bf16 v = tpurt::Bf16::from_float(x);
        std::memcpy(bytes, &v, 2);
    } else {
        std::memcpy(bytes, &x, 4);
    }
    out.insert(out.end(), bytes, bytes + size);
}

struct Inputs {
    std::vector<std::byte> a, w;
    std::vector<float> bias;
};

template <typename T> std::vector<std::byte> bytes_of(const std::vector<T> &v) {
    std::vector<std::byte> out(v.size() * sizeof(T));
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

Inputs make_inputs(const tpurt::DenseLayer &l, std::uint64_t seed, bool with_bias) {
    const std::size_t a_count = std::size_t{l.m} * l.k, w_count = std::size_t{l.k} * l.n;
    Inputs in;
    switch (l.in_type) {
    case DType::Int8:
        in.a = bytes_of(tpurt::random_int8(a_count, seed));
        in.w = bytes_of(tpurt::random_int8(w_count, seed + 1));
        break;
    case DType::Bf16:
        in.a = bytes_of(tpurt::random_bf16(a_count, seed));
        in.w = bytes_of(tpurt::random_bf16(w_count, seed + 1));
        break;
    default:
        in.a = bytes_of(tpurt::random_fp32(a_count, seed));
        in.w = bytes_of(tpurt::random_fp32(w_count, seed + 1));
        break;
    }
    if (with_bias) {
        in.bias = tpurt::random_fp32(l.n, seed + 2);
        for (float &b : in.bias)
            b *= l.in_type == DType::Int8 ? 4096.0f : 4.0f; // comparable to the products' sums
    }
    return in;
}

std::string describe(const tpurt::DenseLayer &l, const tpu_engine_config &cfg) {
    return std::string(tpurt::dtype_name(l.in_type)) + " -> " + tpurt::dtype_name(l.out_type) +
           " " + tpurt::activation_name(l.activation) + " " + std::to_string(l.m) + "x" +
           std::to_string(l.k) + "x" + std::to_string(l.n) + " on " + std::to_string(cfg.mxu_rows) +
           "x" + std::to_string(cfg.mxu_cols) + ", UB " + std::to_string(cfg.ub_bytes);
}

// A layer with NONE, RELU or RELU6: the card's bytes equal the reference's.
void check_exact(const tpu_engine_config &cfg, const tpurt::DenseLayer &l, std::uint64_t seed,
                 bool with_bias = true) {
    INFO(describe(l, cfg) << (with_bias ? " with bias" : " without bias"));
    const Inputs in = make_inputs(l, seed, with_bias);
    const auto run =
        run_dense_on_engine(cfg, l, in.a.data(), in.w.data(), with_bias ? in.bias.data() : nullptr);
    std::vector<std::byte> ref;
    for (const float x : pre_activation(l, in.a.data(), in.w.data(), in.bias))
        convert(exact_function(l.activation, x), l.out_type, ref);
    REQUIRE(run.c.size() == ref.size());
    // The runtime's own model (the guest tests' and the demo's) agrees.
    CHECK(tpurt::reference_dense(l, in.a, in.w, in.bias) == ref);
    const std::size_t size = tpurt::element_size(l.out_type);
    for (std::size_t i = 0; i < ref.size(); i += size)
        if (std::memcmp(&run.c[i], &ref[i], size) != 0)
            FAIL("first mismatch at element " << i / size);
    CHECK(run.macs == std::uint64_t{l.m} * l.k * l.n);
}

// A layer with a transcendental function and fp32 output: within the documented bound.
void check_bounded(const tpu_engine_config &cfg, const tpurt::DenseLayer &l, std::uint64_t seed) {
    INFO(describe(l, cfg));
    const Inputs in = make_inputs(l, seed, true);
    const auto run = run_dense_on_engine(cfg, l, in.a.data(), in.w.data(), in.bias.data());
    const std::vector<float> x = pre_activation(l, in.a.data(), in.w.data(), in.bias);
    REQUIRE(run.c.size() == x.size() * 4);
    for (std::size_t i = 0; i < x.size(); ++i) {
        float card;
        std::memcpy(&card, &run.c[i * 4], 4);
        const double ref = double_function(l.activation, x[i]);
        const double off = ulps_off(card, ref);
        if (off > ulp_bound(l.activation, x[i]))
            FAIL("f(" << x[i] << "): card " << card << ", double " << ref << ", " << off << " ulp");
    }
}

} // namespace

TEST_CASE("bf16 dense layers with exact activations match bit for bit", "[dense][bf16]") {
    for (const Activation f : {Activation::None, Activation::Relu, Activation::Relu6})
        for (const DType out : {DType::Fp32, DType::Bf16, DType::Int8, DType::Int32})
            check_exact(default_card,
                        {.m = 37,
                         .k = 150,
                         .n = 131,
                         .in_type = DType::Bf16,
                         .out_type = out,
                         .activation = f,
                         .scale = out == DType::Int8 ? 8.0f : 1.0f},
                        static_cast<std::uint64_t>(f) * 10 + static_cast<std::uint64_t>(out));
    check_exact(default_card,
                {.m = 20, .k = 30, .n = 40, .in_type = DType::Bf16, .activation = Activation::Relu},
                3, false);
}

TEST_CASE("int8 dense layers requantise the int32 accumulators exactly", "[dense][int8]") {
    for (const Activation f : {Activation::None, Activation::Relu, Activation::Relu6})
        check_exact(default_card,
                    {.m = 65,
                     .k = 300,
                     .n = 129,
                     .in_type = DType::Int8,
                     .out_type = DType::Int8,
                     .activation = f,
                     .scale = 1.0f / 2048},
                    40 + static_cast<std::uint64_t>(f));
    check_exact(default_card,
                {.m = 9, .k = 17, .n = 5, .in_type = DType::Int8, .out_type = DType::Fp32}, 44,
                false);
}

TEST_CASE("fp32 dense layers match bit for bit", "[dense][fp32]") {
    check_exact(default_card,
                {.m = 33,
                 .k = 140,
                 .n = 70,
                 .in_type = DType::Fp32,
                 .out_type = DType::Fp32,
                 .activation = Activation::Relu6,
                 .scale = 0.5f},
                50);
}

TEST_CASE("dense layers on a 4x4 array with tiny memories", "[dense][small]") {
    // 48 bytes of UB hold 6 columns of bias and fp32 output: blocks go out in slices. bf16 K
    // tiles are whole blocks of 32 k, so its K stays within the 4 rows.
    const tpu_engine_config cfg = engine_config(4, 4, 48, 128);
    for (const DType in : {DType::Int8, DType::Bf16})
        for (const DType out : {DType::Fp32, DType::Int8})
            check_exact(cfg,
                        {.m = 13,
                         .k = in == DType::Bf16 ? 4u : 7u,
                         .n = 11,
                         .in_type = in,
                         .out_type = out,
                         .activation = Activation::Relu,
                         .scale = 0.25f},
                        60 + static_cast<std::uint64_t>(in) * 4 + static_cast<std::uint64_t>(out));
}

TEST_CASE("transcendental activations lie within the documented ulp bounds", "[dense][vpu]") {
    for (const Activation f :
         {Activation::Gelu, Activation::Sigmoid, Activation::Tanh, Activation::Exp})
        for (const DType in : {DType::Bf16, DType::Int8})
            check_bounded(default_card,
                          {.m = 64,
                           .k = 96,
                           .n = 100,
                           .in_type = in,
                           .out_type = DType::Fp32,
                           .activation = f,
                           .scale = in == DType::Int8 ? 1.0f / 4096 : 0.25f},
                          70 + static_cast<std::uint64_t>(f));
}
