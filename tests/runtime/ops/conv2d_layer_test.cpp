// SPDX-License-Identifier: MIT
// conv2d_layer_test.cpp - convolution layers (a convolution with ACTIVATE's epilogue: bias,
// scale, function, conversion) compiled and run on the engine equal reference_conv2d_layer()
// bit for bit: int8 requantised to int8 with ReLU (the int8 CNN's layer), bf16 to bf16 with
// bias and ReLU (the bf16 CNN's), int8 and fp32 to fp32, on the default card and on a small one
// whose staging area takes several ACTIVATEs per filter tile; the epilogue's own steps are
// checked against a plain loop over the accumulators.
#include "engine_runner.hpp"

#include <tpurt/error.hpp>
#include <tpurt/golden/reference_conv2d.hpp>
#include <tpurt/ops/conv2d.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

using runtime_test::engine_config;
using runtime_test::run_conv2d_on_engine;
using tpurt::Activation;
using tpurt::Conv2dShape;
using tpurt::DType;
using tpurt::MatmulEpilogue;

namespace {

const tpu_engine_config default_card = engine_config(128, 128, 16u << 20, 8u << 20);

const Conv2dShape cnn_layer{.batch = 3,
                            .height = 14,
                            .width = 14,
                            .channels = 16,
                            .kernel_h = 3,
                            .kernel_w = 3,
                            .filters = 32,
                            .pad_h = 1,
                            .pad_w = 1};

std::vector<float> random_bias(std::size_t n, std::uint64_t seed) {
    std::vector<float> b = tpurt::random_fp32(n, seed);
    for (float &v : b)
        v *= 16.0f;
    return b;
}

template <typename T> std::span<const std::byte> bytes(const std::vector<T> &v) {
    return std::as_bytes(std::span<const T>(v));
}

// Runs the layer on the engine and compares with the reference; returns the ACTIVATEs per
// image.
template <typename In>
std::size_t check(const tpu_engine_config &cfg, DType type, const Conv2dShape &s,
                  const std::vector<In> &input, const std::vector<In> &weights,
                  const std::vector<float> &bias, const MatmulEpilogue &e) {
    INFO(tpurt::dtype_name(type) << " -> " << tpurt::dtype_name(e.out_type) << " "
                                 << tpurt::activation_name(e.function) << " scale " << e.scale
                                 << (bias.empty() ? " no bias" : " bias") << " on " << cfg.mxu_rows
                                 << "x" << cfg.mxu_cols << ", UB " << cfg.ub_bytes);
    const auto run = run_conv2d_on_engine(cfg, type, s, input.data(), weights.data(), &e,
                                          bias.empty() ? nullptr : bias.data());
    const std::vector<std::byte> ref =
        tpurt::reference_conv2d_layer(type, bytes(input), bytes(weights), bias, e, s);
    REQUIRE(run.output.size() == ref.size());
    const std::size_t elem = tpurt::element_size(e.out_type);
    for (std::size_t i = 0; i < ref.size() / elem; ++i)
        if (std::memcmp(&run.output[i * elem], &ref[i * elem], elem) != 0)
            FAIL("first mismatch at output element " << i << " (pixel " << i / s.filters
                                                     << ", filter " << i % s.filters << ")");
    std::size_t activates = 0;
    for (const tpurt::Program &p : run.plan.programs)
        for (const union tpu_insn &insn : p.insns)
            activates += insn.hdr.opcode == TPU_OP_ACTIVATE;
    return activates / s.batch;
}

} // namespace

TEST_CASE("int8 convolution layers requantise to int8 on the card", "[conv2d][layer][int8]") {
    const auto x = tpurt::random_int8(cnn_layer.input_elements(), 1);
    const auto w = tpurt::random_int8(cnn_layer.weight_elements(), 2);
    const auto bias = random_bias(cnn_layer.filters, 3);
    check(default_card, DType::Int8, cnn_layer, x, w, bias,
          {.function = Activation::Relu, .out_type = DType::Int8, .scale = 1.0f / 512});
    check(default_card, DType::Int8, cnn_layer, x, w, {},
          {.function = Activation::None, .out_type = DType::Fp32, .scale = 0.25f});
}

TEST_CASE("bf16 convolution layers add the bias and apply ReLU into bf16",
          "[conv2d][layer][bf16]") {
    const auto x = tpurt::random_bf16(cnn_layer.input_elements(), 4);
    const auto w = tpurt::random_bf16(cnn_layer.weight_elements(), 5);
    check(default_card, DType::Bf16, cnn_layer, x, w, random_bias(cnn_layer.filters, 6),
          {.function = Activation::Relu, .out_type = DType::Bf16});
    const Conv2dShape first{.batch = 2,
                            .height = 28,
                            .width = 28,
                            .channels = 1,
                            .kernel_h = 3,
                            .kernel_w = 3,
                            .filters = 16,
                            .pad_h = 1,
                            .pad_w = 1};
    check(default_card, DType::Bf16, first, tpurt::random_bf16(first.input_elements(), 7),
          tpurt::random_bf16(first.weight_elements(), 8), random_bias(first.filters, 9),
          {.function = Activation::Relu6, .out_type = DType::Bf16, .scale = 2.0f});
}

TEST_CASE("fp32 convolution layers", "[conv2d][layer][fp32]") {
    check(default_card, DType::Fp32, cnn_layer, tpurt::random_fp32(cnn_layer.input_elements(), 10),
          tpurt::random_fp32(cnn_layer.weight_elements(), 11), random_bias(cnn_layer.filters, 12),
          {.function = Activation::Relu, .out_type = DType::Fp32});
}

TEST_CASE("a small card stages a filter tile's outputs in several ACTIVATEs",
          "[conv2d][layer][small]") {
    // 4x4 array, 1 KiB of unified buffer: the staging area (a quarter, 256 bytes) holds 60
    // pixels of a 4-filter int8 tile beside its bias, fewer than an image's 63, so each of the
    // two filter tiles of a block takes two ACTIVATEs.
    const tpu_engine_config cfg = engine_config(4, 4, 1024, 1024);
    const Conv2dShape s{.batch = 2,
                        .height = 9,
                        .width = 7,
                        .channels = 5,
                        .kernel_h = 3,
                        .kernel_w = 3,
                        .filters = 6,
                        .pad_h = 1,
                        .pad_w = 1};
    const auto x = tpurt::random_int8(s.input_elements(), 13);
    const auto w = tpurt::random_int8(s.weight_elements(), 14);
    CHECK(check(cfg, DType::Int8, s, x, w, random_bias(s.filters, 15),
                {.function = Activation::Relu, .out_type = DType::Int8, .scale = 1.0f / 64}) == 4);
    CHECK(check(engine_config(8, 4, 1024, 1024), DType::Bf16, s,
                tpurt::random_bf16(s.input_elements(), 16),
                tpurt::random_bf16(s.weight_elements(), 17), random_bias(s.filters, 18),
                {.function = Activation::Relu, .out_type = DType::Bf16}) > 2);
}

TEST_CASE("the layer's epilogue is bias, scale, function and conversion per accumulator",
          "[conv2d][layer][reference]") {
    const Conv2dShape s{.height = 5,
                        .width = 6,
                        .channels = 3,
                        .kernel_h = 3,
                        .kernel_w = 3,
                        .filters = 4,
                        .pad_h = 1,
                        .pad_w = 1};
    const auto x = tpurt::random_int8(s.input_elements(), 19);
    const auto w = tpurt::random_int8(s.weight_elements(), 20);
    const auto bias = random_bias(s.filters, 21);
    std::vector<std::int32_t> acc(s.output_elements());
    tpurt::reference_conv2d(std::span<const std::int8_t>(x), std::span<const std::int8_t>(w),
                            std::span<std::int32_t>(acc), s);
    const float scale = 1.0f / 100;
    const std::vector<std::byte> layer = tpurt::reference_conv2d_layer(
        DType::Int8, bytes(x), bytes(w), bias,
        {.function = Activation::Relu, .out_type = DType::Int8, .scale = scale}, s);
    REQUIRE(layer.size() == acc.size());
    for (std::size_t i = 0; i < acc.size(); ++i) {
        const float v = std::max((static_cast<float>(acc[i]) + bias[i % s.filters]) * scale, 0.0f);
        const auto expected = static_cast<std::int8_t>(std::min(std::nearbyint(v), 127.0f));
        CHECK(static_cast<std::int8_t>(layer[i]) == expected);
    }
    CHECK_THROWS_AS(tpurt::reference_conv2d_layer(DType::Int8, bytes(x), bytes(w), bias,
                                                  {.function = Activation::Gelu}, s),
                    tpurt::Error);
}
