// SPDX-License-Identifier: MIT
// quantise.hpp - post-training int8 quantisation of an fp32 MLP or CNN: symmetric
// per-output-channel weight scales (max |W[., n]| / 127), symmetric per-tensor activation scales
// calibrated on training images (the largest |x| the fp32 model sees at each layer's input over the
// calibration set, / 127), biases kept in fp32. tpu-quantise writes the result as a quantised
// checkpoint (workloads/README.md).
#pragma once

#include "tpu_infer/network.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpu_quant {

// Per column n of W (in x out, row-major): max_k |W[k][n]| / 127, or 1 for an all-zero column
// (its quantised weights are zero whatever the scale).
std::vector<float> channel_scales(const std::vector<float> &w, std::size_t in, std::size_t out);

// W[k][n] / scale[n] rounded to nearest even, clamped to -127..127.
std::vector<std::int8_t> quantise_weights(const std::vector<float> &w, std::size_t in,
                                          std::size_t out, const std::vector<float> &scales);

// The largest |x| at every layer's input over the calibration samples (raw features, count x
// inputs), by the fp32 forward pass.
struct Calibration {
    std::vector<float> max_abs; // one per layer
    std::size_t samples = 0;
};
Calibration calibrate(const tpu_infer::FloatMlp &net, const float *raw, std::size_t count);
// The CNN's: one range per convolution block's input, then one per dense layer's input.
Calibration calibrate(const tpu_infer::FloatCnn &net, const float *raw, std::size_t count);

// The activation scale for a range: max_abs / 127, or 1 for an all-zero range.
float activation_scale(float max_abs);

// The int8 network of `net` with the scales of `cal`.
tpu_infer::Int8Mlp quantise(const tpu_infer::FloatMlp &net, const Calibration &cal);
// Convolution weights HWIO [3][3][in][out] get one scale per output channel, as a dense layer's
// (9 in) x out matrix.
tpu_infer::Int8Cnn quantise(const tpu_infer::FloatCnn &net, const Calibration &cal);

} // namespace tpu_quant
