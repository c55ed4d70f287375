// SPDX-License-Identifier: MIT
// params.hpp - the values of a graph's parameters (Graph::params() order): initialised from a
// seed, and written to / read from a checkpoint (tpu_model/checkpoint.hpp) under their names
// and shapes (conv0.w [KH, KW, C, F], layer0.w [in, out], ...: the CPU CNN's and MLP's tensors,
// so today's checkpoints load into the graph of their model name).
#pragma once

#include "tpu_nn/graph.hpp"

#include <tpu_model/checkpoint.hpp>

#include <cstdint>
#include <vector>

namespace tpu_nn {

using ParamValues = std::vector<std::vector<float>>;

// He-initialised weights (normal, stddev sqrt(2 / fan_in), drawn in parameter order from a
// SplitMix64 of `seed`; in a graph with convolutions the dense layers' from a second one of
// seed + 1, so a CNN starts as the CPU CNN of its name did, its dense part as the MLP of seed + 1),
// zero biases and shifts, unit scales.
ParamValues initial_values(const Graph &g, std::uint64_t seed);

void save_params(const Graph &g, const ParamValues &values, tpu_model::Checkpoint &c);
// Throws tpu_data::DataError naming the checkpoint's model and the tensor that is missing or
// of another shape.
ParamValues load_params(const Graph &g, const tpu_model::Checkpoint &c);

} // namespace tpu_nn
