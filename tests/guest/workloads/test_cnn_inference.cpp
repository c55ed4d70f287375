// SPDX-License-Identifier: MIT
// test_cnn_inference.cpp - CNNs on the card: conv2d_layer() (the convolution with ACTIVATE's
// epilogue) against reference_conv2d_layer() bit for bit, and its refusals; random CNN graphs
// (Fashion-MNIST-shaped: 28x28x1, convolutions 16 and 32, dense 128 and 10; a small one with odd
// image sizes; one of 5x5 kernels), as bf16 and after int8 quantisation, whose logits on the card
// equal reference_logits() bit for bit for batches that fill, split and undershoot the card batch.
#include "runtime_helpers.hpp"

#include "../../workloads/nn/nn_fixtures.hpp"

#include <tpu_infer/card_model.hpp>
#include <tpu_infer/network.hpp>
#include <tpu_infer/reference.hpp>
#include <tpurt/golden/reference_conv2d.hpp>
#include <tpurt/ops/tensor_ops.hpp>
#include <tpurt/testing/test_patterns.hpp>

#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

using guest_test::device;
using guest_test::require_refused;
using tpurt::Activation;
using tpurt::DType;
using tpurt::Tensor;

namespace {

template <typename T> std::span<const std::byte> bytes(const std::vector<T> &v) {
    return std::as_bytes(std::span<const T>(v));
}

// The first differing logit, or none.
void require_same(const std::vector<float> &got, const std::vector<float> &want) {
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
            FAIL("logit " << i << ": card " << got[i] << ", reference " << want[i]);
}

void check_network(const tpu_infer::Network &net, std::size_t max_batch,
                   const std::vector<float> &raw, std::size_t count) {
    INFO(net.name << " " << net.precision() << ", card batch " << max_batch << ", " << count
                  << " samples");
    auto model = tpu_infer::load_on_card(device(), net, max_batch);
    CHECK(model->inputs() == net.inputs());
    require_same(model->logits(raw.data(), count),
                 tpu_infer::reference_logits(net, raw.data(), count));
}

} // namespace

TEST_CASE("conv2d_layer equals the reference layer on the card", "[cnn][conv2d_layer]") {
    const tpurt::Conv2dShape s{.batch = 5,
                               .height = 14,
                               .width = 14,
                               .channels = 16,
                               .kernel_h = 3,
                               .kernel_w = 3,
                               .filters = 32,
                               .pad_h = 1,
                               .pad_w = 1};
    const std::vector<float> bias = tpurt::uniform_fp32(s.filters, 3, -40.0f, 40.0f);
    const Tensor b = Tensor::from_host<float>(device(), bias, {s.filters});
    const std::vector<std::size_t> in_shape{s.batch, s.height, s.width, s.channels},
        w_shape{3, 3, s.channels, s.filters}, out_shape{s.batch, s.height, s.width, s.filters};

    SECTION("int8 requantised into int8 with ReLU") {
        const auto x = tpurt::random_int8(s.input_elements(), 1);
        const auto w = tpurt::random_int8(s.weight_elements(), 2);
        Tensor y = Tensor::empty(device(), DType::Int8, out_shape);
        tpurt::conv2d_layer(device(), Tensor::from_host<std::int8_t>(device(), x, in_shape),
                            Tensor::from_host<std::int8_t>(device(), w, w_shape), &b, y,
                            {.pad_h = 1, .pad_w = 1}, Activation::Relu, 1.0f / 300);
        const auto ref = tpurt::reference_conv2d_layer(
            DType::Int8, bytes(x), bytes(w), bias,
            {.function = Activation::Relu, .out_type = DType::Int8, .scale = 1.0f / 300}, s);
        const std::vector<std::int8_t> got = y.to_vector<std::int8_t>();
        CHECK(std::memcmp(got.data(), ref.data(), ref.size()) == 0);
    }
    SECTION("bf16 into bf16 with bias and ReLU, and fp32 out with no bias") {
        const auto x = tpurt::random_bf16(s.input_elements(), 4);
        const auto w = tpurt::random_bf16(s.weight_elements(), 5);
        const Tensor xt = Tensor::from_host<tpurt::Bf16>(device(), x, in_shape);
        const Tensor wt = Tensor::from_host<tpurt::Bf16>(device(), w, w_shape);
        Tensor y = Tensor::empty(device(), DType::Bf16, out_shape);
        tpurt::conv2d_layer(device(), xt, wt, &b, y, {.pad_h = 1, .pad_w = 1}, Activation::Relu);
        auto ref = tpurt::reference_conv2d_layer(
            DType::Bf16, bytes(x), bytes(w), bias,
            {.function = Activation::Relu, .out_type = DType::Bf16}, s);
        const std::vector<tpurt::Bf16> got = y.to_vector<tpurt::Bf16>();
        CHECK(std::memcmp(got.data(), ref.data(), ref.size()) == 0);

        Tensor z = Tensor::empty(device(), DType::Fp32, out_shape);
        tpurt::conv2d_layer(device(), xt, wt, nullptr, z, {.pad_h = 1, .pad_w = 1},
                            Activation::None, 0.5f);
        ref = tpurt::reference_conv2d_layer(DType::Bf16, bytes(x), bytes(w), {},
                                            {.out_type = DType::Fp32, .scale = 0.5f}, s);
        const std::vector<float> gz = z.to_vector<float>();
        CHECK(std::memcmp(gz.data(), ref.data(), ref.size()) == 0);
    }
    SECTION("refusals") {
        const Tensor x = Tensor::empty(device(), DType::Bf16, in_shape);
        const Tensor w = Tensor::empty(device(), DType::Bf16, w_shape);
        Tensor y = Tensor::empty(device(), DType::Bf16, out_shape);
        const Tensor short_bias = Tensor::empty(device(), DType::Fp32, {s.filters - 1});
        require_refused(
            [&] { tpurt::conv2d_layer(device(), x, w, &short_bias, y, {.pad_h = 1, .pad_w = 1}); },
            "conv2d layer: bias");
        Tensor i32 = Tensor::empty(device(), DType::Int32, out_shape);
        require_refused(
            [&] { tpurt::conv2d_layer(device(), x, w, &b, i32, {.pad_h = 1, .pad_w = 1}); },
            "an int32 output needs int8 inputs");
        Tensor small = Tensor::empty(device(), DType::Bf16, {s.batch, 12, 12, s.filters});
        require_refused(
            [&] { tpurt::conv2d_layer(device(), x, w, &b, small, {.pad_h = 1, .pad_w = 1}); },
            "must have the shape [5, 14, 14, 32]");
    }
}

TEST_CASE("CNNs on the card give the reference's logits, bf16 and int8", "[cnn]") {
    // Per network: its samples, then card batch and samples of the bf16 run and of int8 runs
    // (quantised on all the samples).
    struct Case {
        const char *spec;
        unsigned seed;
        std::size_t samples, bf16_batch;
        std::vector<std::pair<std::size_t, std::size_t>> int8_runs;
    };
    for (const Case &c : {Case{"cnn-28x28x1-c16-c32-d128-10", 11, 40, 16, {{16, 40}, {64, 3}}},
                          Case{"cnn-9x8x2-c4-c6-d10-3", 1, 9, 4, {{1, 2}}},
                          Case{"cnn-12x12x1-c4k5-c8-d-10", 3, 7, 4, {{4, 7}}}}) {
        tpu_infer::Network net = tpu_test::random_network(c.spec, c.seed);
        const std::vector<float> raw =
            tpurt::uniform_fp32(c.samples * net.inputs(), c.seed + 11, 0.0f, 1.0f);
        check_network(net, c.bf16_batch, raw, c.samples);
        net.int8 = tpu_infer::quantise(net, raw.data(), c.samples);
        for (const auto &[batch, samples] : c.int8_runs)
            check_network(net, batch, raw, samples);
    }
}
