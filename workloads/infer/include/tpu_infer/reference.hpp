// SPDX-License-Identifier: MIT
// reference.hpp - the networks (MLPs and CNNs) evaluated on the CPU: in plain fp32 (the trained
// model itself, and the activations the quantiser calibrates on), and step for step in the card's
// arithmetic
// (bf16 or int8 layers as docs/hardware.md defines them, through tpurt's golden models), which
// the card's logits must equal bit for bit. Also the input preparation and the int8 layers'
// requantisation constants that card and reference share.
#pragma once

#include "tpu_infer/network.hpp"

#include <tpurt/types/bf16.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace tpu_infer {

// The fp32 forward pass over `batch` raw samples: result[i] is the input of layer i (the
// standardised features, then each hidden layer's ReLU output), result.back() the logits.
std::vector<std::vector<float>> fp32_activations(const FloatMlp &net, const float *raw,
                                                 std::size_t batch);
// The CNN's: result[i] for i < convs.size() the input of convolution block i (NHWC: the
// standardised image, then each block's pooled output), then the input of each dense layer (the
// flattened last block first), result.back() the logits.
std::vector<std::vector<float>> fp32_activations(const FloatCnn &net, const float *raw,
                                                 std::size_t batch);

// The card's input for `batch` raw samples: standardised, then bf16 (nearest even) or int8
// (x / x_scale rounded to nearest even, clamped to -127..127).
std::vector<tpurt::Bf16> bf16_input(const InputTransform &t, const float *raw, std::size_t count);
std::vector<std::int8_t> int8_input(const InputTransform &t, float x_scale, const float *raw,
                                    std::size_t count);
// One value quantised with the reciprocal of its scale: nearest even of x * inv, clamped to +-127.
std::int8_t quantise_value(float x, float inv_scale);
// The card's conversion of fp32 to int8 (ACTIVATE, cast): nearest even, saturated, NaN -> 0.
std::int8_t convert_int8(float x);
std::vector<std::int8_t> convert_int8(const std::vector<float> &x);

// The constants of an int8 layer (dense or convolution) on the card: the int32 sums s are
// turned into fp32 t = relu?(s + bias[n]) and then u = t * mult[n], with bias[n] = b[n] /
// (x_scale w_scale[n]) and mult[n] = x_scale w_scale[n] / (the next layer's x_scale), or x_scale
// w_scale[n] for the last layer (whose u are the logits). A hidden u becomes the next int8
// input by the card's conversion (nearest even, saturated).
struct Int8LayerConstants {
    std::vector<float> bias, mult;
};
Int8LayerConstants requantisation(float x_scale, const std::vector<float> &w_scale,
                                  const std::vector<float> &b, std::optional<float> next_x_scale);
Int8LayerConstants int8_constants(const std::vector<Int8Dense> &layers, std::size_t layer);
// Convolution block i of the CNN; the next scale is block i + 1's or the first dense layer's.
Int8LayerConstants int8_conv_constants(const Int8Cnn &net, std::size_t conv);

// The logits (batch x outputs) in the card's arithmetic: bf16 layers for an fp32 network (weights
// rounded from the fp32 master weights, bf16 hidden activations, fp32 logits) or the int8 layers.
// A CNN's blocks: bf16: the convolution layer (bias, ReLU, into bf16), then max pooling; int8:
// the convolution layer into fp32 (bias, ReLU), x mult per channel, max pooling, conversion
// to int8 (see card_model.hpp).
std::vector<float> reference_logits(const Network &net, const float *raw, std::size_t batch);
// The dense part of those from its first input (batch rows).
std::vector<float> bf16_dense_logits(const std::vector<FloatDense> &layers,
                                     std::vector<tpurt::Bf16> x, std::size_t batch);
std::vector<float> int8_dense_logits(const std::vector<Int8Dense> &layers,
                                     std::vector<std::int8_t> x, std::size_t batch);
std::vector<float> bf16_cnn_logits(const FloatCnn &net, const float *raw, std::size_t batch);
std::vector<float> int8_cnn_logits(const Int8Cnn &net, const float *raw, std::size_t batch);

// argmax of each row (the first maximum).
std::vector<std::uint32_t> argmax_rows(const std::vector<float> &logits, std::size_t classes);

} // namespace tpu_infer
