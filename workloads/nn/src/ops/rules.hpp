// SPDX-License-Identifier: MIT
// rules.hpp - the op rules of ops/*.cpp (one file per op: shape, parameters, CPU forward and
// vector-Jacobian product), gathered by op_rules.cpp.
#pragma once

#include "tpu_nn/op.hpp"

namespace tpu_nn {

extern const OpRule input_rule;
extern const OpRule dense_rule;
extern const OpRule conv2d_rule;
extern const OpRule pool_rule;
extern const OpRule flatten_rule;
extern const OpRule activation_rule;
extern const OpRule layer_norm_rule;
extern const OpRule add_rule;

// An image shape H x W x C, or std::invalid_argument saying `op` needs one.
void expect_image(const Shape &s, const char *op);

} // namespace tpu_nn
