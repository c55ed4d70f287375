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

ForwardTypes forward_types(const Graph &g, tpurt::DType compute) {
    const std::vector<Node> &nodes = g.nodes();
    ForwardTypes t{std::vector<tpurt::DType>(nodes.size(), compute),
                   std::vector<std::vector<tpurt::DType>>(nodes.size())};
    std::vector<bool> fp32_readers(nodes.size(), true);
    for (NodeId n = 1; n < nodes.size(); ++n)
        for (NodeId i : nodes[n].inputs)
            fp32_readers[i] = fp32_readers[i] && card_rule(nodes[n].kind).in == Needs::Fp32;
    for (NodeId n = 1; n < nodes.size(); ++n) {
        const CardRule &r = card_rule(nodes[n].kind);
        const bool fp32 = r.fp32_out || n == g.output() ||
                          (fp32_readers[n] && g.consumers(n) > 0 && r.in != Needs::Output);
        t.act[n] = fp32 ? tpurt::DType::Fp32 : compute;
        for (NodeId i : nodes[n].inputs)
            t.in[n].push_back(r.in == Needs::Compute  ? compute
                              : r.in == Needs::Fp32   ? tpurt::DType::Fp32
                              : r.in == Needs::Output ? t.act[n]
                                                      : t.act[i]);
    }
    return t;
}

} // namespace tpu_nn
