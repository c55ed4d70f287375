// SPDX-License-Identifier: MIT
// network.hpp - the networks the card runs for inference, as plain host data: the fp32 MLP or CNN
// of a training checkpoint (its master weights) and their int8 post-training quantisations, each
// with the input standardisation the model was trained with. load_network() reads any kind of
// checkpoint (workloads/README.md, "Checkpoint format", "The CNN's checkpoint" and "Quantised
// checkpoint format").
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
// The checkpoint's input standardisation (its notes; absent: mean 0, stddev 1). Throws
// tpu_data::DataError naming the file for a note that is not a number, or a stddev <= 0.
InputTransform input_transform(const tpu_model::Checkpoint &c, const std::string &path);

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

// A CNN's input image: height x width x channels, pixels row-major, channels innermost (NHWC).
struct ImageShape {
    std::size_t height = 0, width = 0, channels = 0;
    std::size_t size() const { return height * width * channels; }
};

// A convolution block: a 3 x 3 convolution (stride 1, zero padding 1) with weights HWIO
// [3][3][in][out] and bias [out], ReLU, then 2 x 2 max pooling at stride 2 (odd sizes floor).
inline constexpr std::size_t cnn_kernel = 3, cnn_pool = 2;
struct FloatConv {
    std::size_t in = 0, out = 0;
    std::vector<float> w, b;
};

// Convolution blocks, then the pooled image flattened in (h, w, c) order into dense layers with
// ReLU after every layer but the last.
struct FloatCnn {
    std::string name; // e.g. "cnn-28x28x1-c16-c32-d128-10"
    InputTransform input;
    ImageShape image;
    std::vector<FloatConv> convs;
    std::vector<FloatDense> dense;
    std::size_t inputs() const { return image.size(); }
    std::size_t outputs() const { return dense.back().out; }
};

// An int8 convolution: x ~ x_scale * xq (per tensor), W[.][.][c][f] ~ w_scale[f] * wq (per
// output channel), y = x_scale * w_scale[f] * sum xq wq + b[f], as Int8Dense.
struct Int8Conv {
    std::size_t in = 0, out = 0;
    float x_scale = 1.0f;
    std::vector<std::int8_t> wq;
    std::vector<float> w_scale, b;
};

struct Int8Cnn {
    std::string name;
    InputTransform input;
    ImageShape image;
    std::uint64_t calibration_samples = 0;
    std::vector<Int8Conv> convs;
    std::vector<Int8Dense> dense;
    std::size_t inputs() const { return image.size(); }
    std::size_t outputs() const { return dense.back().out; }
};

// The image shape after each convolution block: shapes[0] = the input, shapes[i + 1] = the
// output of block i (the last is flattened into the first dense layer).
std::vector<ImageShape> block_shapes(const ImageShape &input,
                                     const std::vector<std::size_t> &filters);
// The same for a network's convolution blocks (FloatConv or Int8Conv).
template <typename Conv>
std::vector<ImageShape> block_shapes(const ImageShape &input, const std::vector<Conv> &convs) {
    std::vector<std::size_t> filters;
    for (const Conv &c : convs)
        filters.push_back(c.out);
    return block_shapes(input, filters);
}

using Network = std::variant<FloatMlp, Int8Mlp, FloatCnn, Int8Cnn>;

// The note that marks a quantised checkpoint and its value for this format.
inline constexpr const char *quantisation_note = "quantisation";
inline constexpr const char *quantisation_int8_v1 = "int8-symmetric-per-channel-v1";

// The networks in a checkpoint (load_checkpoint's checks, then every tensor's presence and
// shape); throws tpu_data::DataError naming the file and what is wrong.
FloatMlp float_mlp_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path);
Int8Mlp int8_mlp_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path);
FloatCnn float_cnn_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path);
Int8Cnn int8_cnn_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path);
// Whether these networks read `c`: a quantised checkpoint (tpu-quantise's of an MLP or CNN),
// or a model name that is an MLP ("mlp-784-256-10"), a CNN of 3x3 conv blocks and dense layers
// only ("cnn-28x28x1-c16-c32-d128-10") or no model spec at all (load_network then says what is
// wrong). Any other spec ("c16k5", "res", "ln", "gelu", ...) is compiled instead
// (tpu_export::compile_checkpoint; tpu-serve, tpu-eval, tpu-quantise).
bool reads_checkpoint(const tpu_model::Checkpoint &c);
// A checkpoint holds a CNN iff it has a tensor conv0.w (fp32) or conv0.wq (quantised).
bool is_cnn_checkpoint(const tpu_model::Checkpoint &c);
// The network of a checkpoint already read from `path`, and of the file at `path`.
Network network_from_checkpoint(const tpu_model::Checkpoint &c, const std::string &path);
Network load_network(const std::string &path);

// The quantised checkpoint of `net` (notes, tensors as workloads/README.md documents them).
tpu_model::Checkpoint int8_mlp_to_checkpoint(const Int8Mlp &net);
tpu_model::Checkpoint int8_cnn_to_checkpoint(const Int8Cnn &net);

// The model's name, inputs and outputs, whichever network it is.
std::string network_name(const Network &n);
std::size_t network_inputs(const Network &n);
std::size_t network_outputs(const Network &n);
const char *
network_precision(const Network &n); // "bf16" (an fp32 checkpoint runs as bf16) or "int8"

} // namespace tpu_infer
