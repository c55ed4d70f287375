// SPDX-License-Identifier: MIT
// spec_models.hpp - models defined only by spec strings (issue 25's three: a 5x5-kernel CNN, a
// three-block CNN, a residual net with layer norms; and one with every other layer the exporter
// writes: strided and grouped convolutions, gelu, padded average pooling, a layer norm of an
// image and of a vector, a flatten read by an activation, sigmoid, tanh), at the size of
// scikit-learn's 8x8 digits, trained a few SGD steps by tpu_nn::CpuExecutor and checkpointed
// as tpu-train saves a checkpoint: what tpu-serve, tpu-eval and tpu-quantise compile.
#pragma once

#include <tpu_data/dataset.hpp>
#include <tpu_model/checkpoint.hpp>
#include <tpu_nn/cpu_executor.hpp>

#include <string>
#include <vector>

namespace compiler_test {

const std::vector<std::string> &digit_specs();

// The digits (pixels in [0, 1]) split 5/6 for training, the rest for testing, as tpu-train-cpu.
struct Digits {
    tpu_data::Dataset train, test;
    tpu_data::Normalization norm;
};
const Digits &digits();

struct SpecModel {
    tpu_nn::CpuExecutor cpu;     // the fp32 model
    tpu_model::Checkpoint saved; // its checkpoint (model name, tensors, input.mean, input.stddev)
    // The fp32 logits of the first `count` test images (normalised as the checkpoint says).
    std::vector<float> logits(std::size_t count);
};

// `spec` trained for 60 steps of 32 digits (SGD, learning rate 0.05, seed 7).
SpecModel trained_spec_model(const std::string &spec);

} // namespace compiler_test
