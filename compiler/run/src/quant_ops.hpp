// SPDX-License-Identifier: MIT
// quant_ops.hpp - ONNX's quantised ops bound to sequences of card ops (compiler/README.md,
// "int8 on the card"): QuantizeLinear, DequantizeLinear, MatMulInteger, QLinearMatMul,
// ConvInteger and QLinearConv, computed exactly as the CPU kernels compute them.
#pragma once

#include "tpumodel/model.hpp"

#include <tpurt/card/launch.hpp>
#include <tpurt/device.hpp>
#include <tpurt/tensor.hpp>

#include <span>
#include <string>

namespace tpumodel::card {

using QuantBinder = tpurt::OpSequence (*)(tpurt::Device &, const Model &, const Node &,
                                          std::span<const tpurt::Tensor *const> in,
                                          std::span<const tpurt::Tensor *const> out);

// The binder of quantised op `op`, or null for another op.
QuantBinder quant_binder(const std::string &op);

} // namespace tpumodel::card
