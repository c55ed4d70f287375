// SPDX-License-Identifier: MIT
// quant_rules.hpp - the placement rules of ONNX's quantised ops (quant_rules.cpp).
#pragma once

#include "placement_rules.hpp"

namespace tpu_onnx {

// QuantizeLinear, DequantizeLinear, MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv.
CardDecision quantize_rule(const tpumodel::Model &m, const tpumodel::Node &n);
CardDecision dequantize_rule(const tpumodel::Model &m, const tpumodel::Node &n);
CardDecision integer_matmul_rule(const tpumodel::Model &m, const tpumodel::Node &n);
CardDecision integer_conv_rule(const tpumodel::Model &m, const tpumodel::Node &n);

} // namespace tpu_onnx
