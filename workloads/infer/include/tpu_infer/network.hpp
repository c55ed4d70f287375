// SPDX-License-Identifier: MIT
// network.hpp - the networks the card runs for inference, as plain host data: the fp32 MLP of a
// training checkpoint (its master weights) and its int8 post-training quantisation, each with the
// input standardisation the model was trained with. load_network() reads either kind of
// checkpoint (workloads/README.md, "Checkpoint format" and "Quantised checkpoint format").
// A convolutional network becomes one more alternative of Network.
#pragma once

#include "tpu_model/checkpoint.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tpu_infer {

// x' = (x - mean) / stddev, applied to every raw feature (pixels in [0, 1]) before the first
// layer; the trainer records it in the checkpoint's notes "input.mean" and "input.stddev".
struct InputTransform {
    float mean = 0.0f;
    float stddev = 1.0f;
    float apply(float x) const { return (x - mean) / stddev; }
};

// y = x W + b (W in x out, row-major), ReLU after every layer but the last.
struct FloatDense {
    std::size_t in = 0, out = 0;
    std::vector<float> w, b;
};

struct FloatMlp {
    std::string name; // the checkpoint's model name, e.g. "mlp-784-256-128-10"
    InputTransform input;
    std::vector<FloatDense> layers;
    std::size_t inputs() const { return layers.front().in; }
    std::size_t outputs() const { return layers.back().out; }
};

// An int8 dense layer: x ~ x_scale * xq (per tensor, symmetric), W[k][n] ~ w_scale[n] * wq[k][n]
// (per output channel, symmetric, |wq| <= 127); y = x_scale * w_scale[n] * sum_k xq wq + b[n].
struct Int8Dense {
    std::size_t in = 0, out = 0;
    float x_scale = 1.0f;
    std::vector<std::int8_t> wq;
    std::vector<float> w_scale, b;
};

struct Int8Mlp {
    std::string name;
    InputTransform input;
    std::uint64_t calibration_samples = 0;
    std::vector<Int8Dense> layers;
    std::size_t inputs() const { return layers.front().in; }
    std::size_t outputs() const { return layers.back().out; }
};

using Network = std::variant<FloatMlp, Int8Mlp>;

// The note that marks a quantised checkpoint and its value for this format.
inline constexpr const char *quantisation_note = "quantisation";
inline constexpr const char *quantisation_int8_v1 = "int8-symmetric-per-channel-v1";

// The networks in a checkpoint (load_checkpoint's checks, then every tensor's presence and
// shape); throws tpu_data::DataError naming the file and what is wrong.
FloatMlp float_mlp_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path);
Int8Mlp int8_mlp_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path);
Network load_network(const std::string &path);

// The quantised checkpoint of `net` (notes, tensors as workloads/README.md documents them).
tpu_model::Checkpoint int8_mlp_to_checkpoint(const Int8Mlp &net);

// The model's name, inputs and outputs, whichever network it is.
std::string network_name(const Network &n);
std::size_t network_inputs(const Network &n);
std::size_t network_outputs(const Network &n);
const char *
network_precision(const Network &n); // "bf16" (an fp32 checkpoint runs as bf16) or "int8"

} // namespace tpu_infer
