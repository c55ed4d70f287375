// SPDX-License-Identifier: MIT
// int8_layers.cpp - int8 matmuls and convolutions with tpu_nn/quantise.hpp's scales
// (int8_layers.hpp).
#include "int8_layers.hpp"

#include "card_ops.hpp"
#include "op_text.hpp"

#include <tpu_nn/quantise.hpp>

#include <array>
#include <span>

namespace tpumodel::card {

namespace {

std::vector<std::size_t> dims(const Tensor &t) {
    return {t.shape.begin(), t.shape.end()};
}

} // namespace

bool int8_layer(const Node &n) {
    return n.find("calibrated_max") != nullptr;
}

float int8_data_scale(const Node &n) {
    return tpu_nn::activation_scale(n.get_float("calibrated_max", 0.0f));
}

tpurt::OpSequence prepare_int8_layer(tpurt::Device &device, const Model &m, const Node &n,
                                     const tpurt::Tensor &xq, const tpurt::Tensor &out) {
    const Tensor &w = m.tensors[n.inputs.at(1)];
    const bool has_bias = n.inputs.size() > 2 && n.inputs[2] != no_tensor;
    if (!w.constant || w.dtype != DType::Float || (has_bias && !m.tensors[n.inputs[2]].constant))
        cannot(n, "int8 takes constant float32 weights and bias");
    // Weights [..., N]: (all but the last axis) x N, one scale per output channel n.
    const std::size_t channels = std::size_t(w.shape.back());
    const std::size_t rows = std::size_t(w.element_count()) / channels;
    const std::vector<float> wf = w.floats();
    const std::vector<float> w_scale = tpu_nn::channel_scales(wf, rows, channels);
    const std::vector<std::int8_t> wq = tpu_nn::quantise_weights(wf, rows, channels, w_scale);
    const std::vector<float> b =
        has_bias ? m.tensors[n.inputs[2]].floats() : std::vector<float>(channels, 0.0f);
    const tpu_nn::Int8LayerConstants k =
        tpu_nn::requantisation(int8_data_scale(n), w_scale, b, std::nullopt);

    const tpurt::Tensor weights =
        tpurt::Tensor::from_host<std::int8_t>(device, std::span(wq), dims(w));
    const tpurt::Tensor bias =
        tpurt::Tensor::from_host<float>(device, std::span(k.bias), {channels});
    const tpurt::Tensor mult =
        tpurt::Tensor::from_host<float>(device, std::span(k.mult), {channels});
    const tpurt::Tensor sums = tpurt::Tensor::empty(device, tpurt::DType::Fp32, out.shape());
    const std::array<const tpurt::Tensor *, 3> in = {&xq, &weights, &bias};
    const std::array<const tpurt::Tensor *, 1> to = {&sums};
    tpurt::OpSequence ops = prepare_card_node(device, m, n, in, to);
    Attributes mul;
    mul.add("op", "mul");
    const tpurt::OpSequence scale = prepare(device, "elementwise", {&sums, &mult, &out}, mul);
    ops.launches.insert(ops.launches.end(), scale.launches.begin(), scale.launches.end());
    return ops;
}

} // namespace tpumodel::card
