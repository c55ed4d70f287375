// SPDX-License-Identifier: MIT
// checkpoint_fields.hpp - reading a network's fields out of a checkpoint with every presence and
// shape checked (network.cpp for the MLPs, cnn_network.cpp for the CNNs): each failure throws
// tpu_data::DataError naming the file and what is wrong.
#pragma once

#include "tpu_infer/network.hpp"

#include <tpu_model/checkpoint.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tpu_infer::detail {

// "<prefix><i><suffix>", e.g. key("layer", 0, ".w") = "layer0.w".
std::string key(const char *prefix, std::size_t i, const char *suffix);

// The tensor `name` with exactly `shape`.
const tpu_model::NamedTensor &tensor(const tpu_model::Checkpoint &c, const std::string &path,
                                     const std::string &name,
                                     const std::vector<std::uint32_t> &shape);

// Values of an int8 tensor stored as floats: integers in -127..127.
std::vector<std::int8_t> int8_values(const tpu_model::NamedTensor &t, const std::string &path);

// A positive, finite scale (e.g. an activation step) or every value of a scale tensor.
void check_scales(const std::vector<float> &scales, const std::string &path,
                  const std::string &name);

// The note `name` as a finite float, or `fallback` when absent.
float note_float(const tpu_model::Checkpoint &c, const std::string &path, const char *name,
                 float fallback);

// The layer sizes of "layer<i><weight_suffix>" tensors 0, 1, ... (consecutive, each in x out,
// chained).
std::vector<std::pair<std::size_t, std::size_t>>
layer_sizes(const tpu_model::Checkpoint &c, const std::string &path, const char *weight_suffix);

// Dense layers from "layer<i>.w|b" (fp32) or "layer<i>.wq|wscale|b|xscale" (int8).
std::vector<FloatDense> float_dense_layers(const tpu_model::Checkpoint &c, const std::string &path);
std::vector<Int8Dense> int8_dense_layers(const tpu_model::Checkpoint &c, const std::string &path);
// The tensors of int8 dense layers under those names.
void add_int8_dense_layers(tpu_model::Checkpoint &c, const std::vector<Int8Dense> &layers);

// The quantised checkpoint's common notes: quantisation, input transform, calibration samples.
void add_int8_notes(tpu_model::Checkpoint &c, const InputTransform &input,
                    std::uint64_t calibration_samples);
std::uint64_t calibration_samples(const tpu_model::Checkpoint &c);
void require_int8(const tpu_model::Checkpoint &c, const std::string &path);
void require_fp32(const tpu_model::Checkpoint &c, const std::string &path);

// "%.9g": a float that reads back exactly.
std::string format_float(float v);

} // namespace tpu_infer::detail
