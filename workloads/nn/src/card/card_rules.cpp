// SPDX-License-Identifier: MIT
// card_rules.cpp - the table of card lowerings (src/card/<op>.cpp) and the copy they share.
#include "rules.hpp"

#include <stdexcept>

namespace tpu_nn {

void copy_on_card(tpurt::Stream &s, const tpurt::Tensor &a, const tpurt::Tensor &out) {
    const tpurt::Tensor src = a.reshape(out.shape());
    tpurt::cast(s, src, out);
}

const CardRule &card_rule(OpKind kind) {
    switch (kind) {
    case OpKind::Dense:
        return dense_card;
    case OpKind::Conv2d:
        return conv2d_card;
    case OpKind::Pool:
        return pool_card;
    case OpKind::Flatten:
        return flatten_card;
    case OpKind::Activation:
        return activation_card;
    case OpKind::LayerNorm:
        return layer_norm_card;
    case OpKind::Add:
        return add_card;
    case OpKind::Input:
        break;
    }
    throw std::invalid_argument("tpu_nn: the input node has no card lowering");
}

} // namespace tpu_nn
