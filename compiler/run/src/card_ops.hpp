// SPDX-License-Identifier: MIT
// card_ops.hpp - one card node of a compiled model bound to the libtpurt op it names: its
// tensors in the op's operand order and its ONNX attributes as the op's attributes by name.
#pragma once

#include "tpumodel/model.hpp"

#include <tpurt/device.hpp>
#include <tpurt/launch.hpp>
#include <tpurt/tensor.hpp>

#include <span>

namespace tpumodel::card {

// The op of card node `n` on the card tensors of its inputs (`in`, one per input, null for a
// left-out optional one) and outputs (`out`), checked and compiled. Throws ExecError naming
// the node for a card op it does not know or a form it cannot bind; tpurt::Error for what the
// op's own checks refuse.
tpurt::OpSequence prepare_card_node(tpurt::Device &device, const Model &m, const Node &n,
                                    std::span<const tpurt::Tensor *const> in,
                                    std::span<const tpurt::Tensor *const> out);

} // namespace tpumodel::card
