// SPDX-License-Identifier: MIT
// card_ops.hpp - one card node of a compiled model bound to the libtpurt op it names: its
// tensors in the op's operand order and its ONNX attributes as the op's attributes by name.
#pragma once

#include "tpumodel/model.hpp"

#include <tpurt/card/launch.hpp>
#include <tpurt/device.hpp>
#include <tpurt/tensor.hpp>

#include <cstdint>
#include <span>
#include <vector>

namespace tpumodel::card {

// The pads [top, left, bottom, right] of node n's window (`kernel`) over an NHWC image,
// auto_pad resolved as ONNX does; the card pads both sides alike, so top == bottom and
// left == right (the compiler places nothing else on the card): ExecError otherwise.
std::vector<std::int64_t> window_pads(const Model &m, const Node &n,
                                      const std::vector<std::int64_t> &kernel);

// The op of card node `n` on the card tensors of its inputs (`in`, one per input, null for a
// left-out optional one) and outputs (`out`), checked and compiled. Throws ExecError naming
// the node for a card op it does not know or a form it cannot bind; tpurt::Error for what the
// op's own checks refuse.
tpurt::OpSequence prepare_card_node(tpurt::Device &device, const Model &m, const Node &n,
                                    std::span<const tpurt::Tensor *const> in,
                                    std::span<const tpurt::Tensor *const> out);

} // namespace tpumodel::card
