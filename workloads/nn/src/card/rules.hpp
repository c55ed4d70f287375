// SPDX-License-Identifier: MIT
// rules.hpp - the card lowerings of src/card/*.cpp, one file per op, gathered by card_rules.cpp.
#pragma once

#include "tpu_nn/card_lowering.hpp"

namespace tpu_nn {

extern const CardRule dense_card;
extern const CardRule conv2d_card;
extern const CardRule pool_card;
extern const CardRule flatten_card;
extern const CardRule activation_card;
extern const CardRule layer_norm_card;
extern const CardRule add_card;

// Queues out = a (a copy on the card, ACTIVATE without a function), a's shape read as out's.
void copy_on_card(tpurt::Stream &s, const tpurt::Tensor &a, const tpurt::Tensor &out);
inline void no_check(const Attrs &) {}

} // namespace tpu_nn
