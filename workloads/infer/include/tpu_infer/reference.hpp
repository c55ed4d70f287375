// SPDX-License-Identifier: MIT
// reference.hpp - the networks evaluated on the CPU: in plain fp32 (the trained model itself, and
// the activations the quantiser calibrates on), and step for step in the card's arithmetic
// (bf16 or int8 layers as docs/hardware.md defines them, through tpurt's golden models), which
// the card's logits must equal bit for bit. Also the input preparation and the int8 layers'
// requantisation constants that card and reference share.
#pragma once

#include "tpu_infer/network.hpp"

#include <tpurt/bf16.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpu_infer {

// The fp32 forward pass over `batch` raw samples: result[i] is the input of layer i (the
// standardised features, then each hidden layer's ReLU output), result.back() the logits.
std::vector<std::vector<float>> fp32_activations(const FloatMlp &net, const float *raw,
                                                 std::size_t batch);

// The card's input for `batch` raw samples: standardised, then bf16 (nearest even) or int8
// (x / x_scale rounded to nearest even, clamped to -127..127).
std::vector<tpurt::Bf16> bf16_input(const InputTransform &t, const float *raw, std::size_t count);
std::vector<std::int8_t> int8_input(const Int8Mlp &net, const float *raw, std::size_t count);
// One value quantised with the reciprocal of its scale: nearest even of x * inv, clamped to +-127.
std::int8_t quantise_value(float x, float inv_scale);

// The constants of int8 layer i on the card: the matmul's int32 sums s are turned into fp32
// t = relu?(s + bias[n]) and then u = t * mult[n], with bias[n] = b[n] / (x_scale w_scale[n]) and
// mult[n] = x_scale w_scale[n] / (the next layer's x_scale), or x_scale w_scale[n] for the last
// layer (whose u are the logits). A hidden u becomes the next int8 input by the card's
// conversion (nearest even, saturated).
struct Int8LayerConstants {
    std::vector<float> bias, mult;
};
Int8LayerConstants int8_constants(const Int8Mlp &net, std::size_t layer);

// The logits (batch x outputs) in the card's arithmetic: bf16 layers for an fp32 network (weights
// rounded from the fp32 master weights, bf16 hidden activations, fp32 logits) or the int8 layers.
std::vector<float> reference_logits(const Network &net, const float *raw, std::size_t batch);

// argmax of each row (the first maximum).
std::vector<std::uint32_t> argmax_rows(const std::vector<float> &logits, std::size_t classes);

} // namespace tpu_infer
