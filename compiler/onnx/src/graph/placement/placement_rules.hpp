// SPDX-License-Identifier: MIT
// placement_rules.hpp - whether the card can run a node in the form it has, and if not why.
#pragma once

#include <tpumodel/model.hpp>

#include <string>
#include <vector>

namespace tpu_onnx {

struct CardDecision {
    std::string card_op; // the libtpurt op (or "view"), empty when the card cannot run it
    std::string reason;  // why not, when it cannot
};

CardDecision card_decision(const tpumodel::Model &m, const tpumodel::Node &n);

// Every libtpurt op a decision can name ("view" aside: no op, the tensor relabelled), for
// the test that each is registered.
const std::vector<std::string> &card_ops();

} // namespace tpu_onnx
