// SPDX-License-Identifier: MIT
// int8_layers.hpp - the matmuls and convolutions of a model compiled for int8 (dense and
// conv2d_layer nodes given `calibrated_max` by tpu-compile --calibrate) on the card's int8 path,
// as workloads/infer runs the stack's own int8 networks with workloads/quant's scales: the data
// quantised per tensor with s = calibrated_max / 127 (the executor's cast, int8_data_scale()),
// the weights per output channel (max |w| / 127, nearest even, within +-127) once at load,
// the layer into fp32 with the bias divided by s x w_scale[n] and the fused ReLU in its
// epilogue, then a VECTOR multiply by s x w_scale[n]: fp32 values again for the graph's next op.
#pragma once

#include "tpumodel/model.hpp"

#include <tpurt/card/launch.hpp>
#include <tpurt/device.hpp>
#include <tpurt/tensor.hpp>

#include <span>

namespace tpumodel::card {

// Whether node `n` runs on the int8 path: it carries its calibrated range.
bool int8_layer(const Node &n);

// The data scale of int8 layer `n`: the executor quantises its data as x / scale.
float int8_data_scale(const Node &n);

// The ops of int8 layer `n` of `m` on its quantised data `xq` (int8, the data's shape) into
// `out` (the node's fp32 output).
tpurt::OpSequence prepare_int8_layer(tpurt::Device &device, const Model &m, const Node &n,
                                     const tpurt::Tensor &xq, const tpurt::Tensor &out);

} // namespace tpumodel::card
