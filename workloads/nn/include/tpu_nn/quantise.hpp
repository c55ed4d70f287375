// SPDX-License-Identifier: MIT
// quantise.hpp - post-training int8 quantisation of a graph whose layers with parameters are all
// dense layers and convolutions (the MLPs and CNNs of model specs): symmetric per-output-channel
// weight scales (max |W[., n]| / 127), symmetric per-tensor input scales calibrated on training
// samples (the largest |x| the fp32 model sees at the layer's input, / 127), biases kept in
// fp32; the requantisation constants the card and its CPU model share; the quantised
// checkpoint's tensors (workloads/README.md, "Quantised checkpoint format").
#pragma once

#include "tpu_nn/cpu_executor.hpp"
#include "tpu_nn/graph.hpp"
#include "tpu_nn/params.hpp"

#include <tpu_model/checkpoint.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tpu_nn {

// An int8 dense layer or convolution: x ~ x_scale * xq (per tensor), W[..][n] ~ w_scale[n] *
// wq[..][n] (per output channel, |wq| <= 127); y = x_scale * w_scale[n] * sum xq wq + b[n].
struct Int8Layer {
    NodeId node = 0;
    float x_scale = 1.0f;
    std::vector<std::int8_t> wq; // the weights' shape (dense [in, out], conv HWIO)
    std::vector<float> w_scale, b;
};

// Every layer with parameters of a graph, in node order.
struct Quantised {
    std::vector<Int8Layer> layers;
    std::uint64_t calibration_samples = 0;
};

// Per column n of W (rows x out, row-major): max_k |W[k][n]| / 127, or 1 for an all-zero column.
std::vector<float> channel_scales(const std::vector<float> &w, std::size_t rows, std::size_t out);
// W[k][n] / scale[n] rounded to nearest even, clamped to -127..127.
std::vector<std::int8_t> quantise_weights(const std::vector<float> &w, std::size_t rows,
                                          std::size_t out, const std::vector<float> &scales);
// max_abs / 127, or 1 for an all-zero range; throws std::invalid_argument if not finite.
float activation_scale(float max_abs);

// The largest |x| at the input of every layer with parameters (node order) over `count` samples
// (features already standardised), by net's fp32 forward pass in chunks.
struct Calibration {
    std::vector<float> max_abs;
    std::size_t samples = 0;
};
Calibration calibrate(CpuExecutor &net, const float *x, std::size_t count);

// The int8 layers of `values` with the scales of `cal`. Throws std::invalid_argument naming the
// node for a graph int8 cannot run (int8_constants()).
Quantised quantise(const Graph &g, const ParamValues &values, const Calibration &cal);

// The constants of an int8 layer on the card: the int32 sums s become fp32 t = relu?(s +
// bias[n]) and then u = t * mult[n], with bias[n] = b[n] / (x_scale w_scale[n]) and mult[n] =
// x_scale w_scale[n] / next_x_scale, or x_scale w_scale[n] for the logits. A hidden u becomes
// the next int8 input by the card's conversion (convert_int8).
struct Int8LayerConstants {
    std::vector<float> bias, mult;
};
Int8LayerConstants requantisation(float x_scale, const std::vector<float> &w_scale,
                                  const std::vector<float> &b, std::optional<float> next_x_scale);
// Every layer's, in q's order: the next scale is that of the int8 layer its output reaches
// through nodes that commute with a positive scale and keep one reader each (ReLU, max pooling,
// flatten); none for the layer that gives the logits. Throws std::invalid_argument naming the
// node where a graph leaves that pattern (a layer norm, a residual add, average pooling, ...),
// or if the input does not reach the first layer through flattens alone.
std::vector<Int8LayerConstants> int8_constants(const Graph &g, const Quantised &q);

// One value quantised with the reciprocal of its scale: nearest even of x * inv, clamped to +-127,
// NaN -> 0 (the host's conversion of the input).
std::int8_t quantise_value(float x, float inv_scale);
// The card's conversion of fp32 to int8 (ACTIVATE, cast): nearest even, saturated, NaN -> 0.
std::int8_t convert_int8(float x);

// The quantised checkpoint's tensors, <node>.wq|wscale|b|xscale per layer, and its notes
// "quantisation" and "calibration.samples"; load checks every name, shape and value and throws
// tpu_data::DataError naming `path`.
inline constexpr const char *quantisation_note = "quantisation";
inline constexpr const char *quantisation_int8_v1 = "int8-symmetric-per-channel-v1";
void save_quantised(const Graph &g, const Quantised &q, tpu_model::Checkpoint &c);
Quantised load_quantised(const Graph &g, const tpu_model::Checkpoint &c, const std::string &path);

} // namespace tpu_nn
