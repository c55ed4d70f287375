// SPDX-License-Identifier: MIT
// test_cnn_inference.cpp - CNNs on the card: conv2d_layer() (the convolution with ACTIVATE's
// epilogue) against reference_conv2d_layer() bit for bit, and its refusals; a random
// Fashion-MNIST-shaped CNN (28x28x1, convolutions 16 and 32, dense 128 and 10) and a small one,
// as bf16 and after int8 quantisation, whose logits on the card equal reference_logits() bit for
// bit for batches that fill, split and undershoot the card batch.
#include "runtime_helpers.hpp"

#include "../../workloads/model/toy_cnn.hpp"

#include <tpu_infer/card_model.hpp>
#include <tpu_infer/network.hpp>
#include <tpu_infer/reference.hpp>
#include <tpu_quant/quantise.hpp>
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
    INFO(tpu_infer::network_name(net) << " " << tpu_infer::network_precision(net) << ", card batch "
                                      << max_batch << ", " << count << " samples");
    auto model = tpu_infer::load_on_card(device(), net, max_batch);
    CHECK(model->inputs() == tpu_infer::network_inputs(net));
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
    SECTION("Fashion-MNIST-shaped") {
        const tpu_model::Checkpoint c =
            tpu_test::random_cnn_checkpoint({28, 28, 1, {16, 32}, {128, 10}}, 11);
        const tpu_infer::FloatCnn net = tpu_infer::float_cnn_from_checkpoint(c, "random");
        const std::vector<float> raw = tpurt::uniform_fp32(40 * 784, 12, 0.0f, 1.0f);
        check_network(net, 16, raw, 40);
        const tpu_infer::Int8Cnn q =
            tpu_quant::quantise(net, tpu_quant::calibrate(net, raw.data(), 40));
        check_network(q, 16, raw, 40);
        check_network(q, 64, raw, 3);
    }
    SECTION("small, with odd image sizes") {
        const tpu_infer::FloatCnn net =
            tpu_infer::float_cnn_from_checkpoint(tpu_test::toy_checkpoint(), "toy");
        const std::vector<float> raw = tpurt::uniform_fp32(9 * 144, 13, 0.0f, 1.0f);
        check_network(net, 4, raw, 9);
        check_network(tpu_quant::quantise(net, tpu_quant::calibrate(net, raw.data(), 9)), 1, raw,
                      2);
    }
}
