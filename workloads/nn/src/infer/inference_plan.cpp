// SPDX-License-Identifier: MIT
// inference_plan.cpp - the dtypes, fusions and card values of a graph's forward pass for
// inference (inference.hpp): fp32 and bf16 as the card trainer plans them, int8 from the
// quantised layers.
#include "tpu_nn/card_lowering.hpp"
#include "tpu_nn/inference.hpp"

#include <stdexcept>

namespace tpu_nn {

namespace {

InferencePlan empty_plan(const Graph &g, tpurt::DType precision) {
    if (g.node(g.output()).shape.size() != 1)
        throw std::invalid_argument("inference: the output (the logits) must be a vector");
    for (NodeId n = 1; n <= g.output(); ++n) {
        try {
            card_rule(g.node(n).kind).check(g.node(n).attrs);
        } catch (const std::invalid_argument &e) {
            throw std::invalid_argument("inference: " + std::string(op_rule(g.node(n).kind).name) +
                                        " " + g.node(n).name + ": " + e.what());
        }
    }
    const std::size_t count = g.nodes().size();
    return InferencePlan{g,
                         precision,
                         {},
                         {},
                         std::vector<bool>(count, false),
                         std::vector<bool>(count, false),
                         {},
                         std::vector<std::optional<std::size_t>>(count),
                         {},
                         1.0f};
}

// A ReLU that alone reads a dense layer or convolution, in its dtype, runs in its epilogue; a
// flatten that reads its input's dtype is a view of it.
void plan_fusion(InferencePlan &p) {
    const Graph &g = p.graph;
    for (NodeId n = 1; n <= g.output(); ++n) {
        const Node &node = g.node(n);
        const NodeId in = node.inputs[0];
        if (node.kind == OpKind::Flatten && p.reads[n][0] == p.act[in] && p.act[n] == p.act[in])
            p.fused[n] = true;
        if (node.kind == OpKind::Activation && node.attrs.act == Act::Relu &&
            g.consumers(in) == 1 && p.act[n] == p.act[in] && p.reads[n][0] == p.act[in] &&
            (g.node(in).kind == OpKind::Dense || g.node(in).kind == OpKind::Conv2d))
            p.fused[n] = p.relu_epilogue[in] = true;
    }
}

} // namespace

InferencePlan InferencePlan::make(const Graph &g, const ParamValues &values,
                                  tpurt::DType precision) {
    if (precision != tpurt::DType::Fp32 && precision != tpurt::DType::Bf16)
        throw std::invalid_argument("inference: fp32 or bf16 weights, or a quantised graph");
    if (values.size() != g.params().size())
        throw std::invalid_argument("inference: " + std::to_string(values.size()) +
                                    " parameter values for " + std::to_string(g.params().size()));
    InferencePlan p = empty_plan(g, precision);
    ForwardTypes t = forward_types(g, precision);
    p.act = std::move(t.act);
    p.reads = std::move(t.in);
    p.values = values;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (values[i].size() != elements(g.params()[i].shape))
            throw std::invalid_argument("inference: parameter " + g.params()[i].name +
                                        " has the wrong number of values");
        // Weights are read in the compute dtype (rounded here once), the rest in fp32.
        if (precision == tpurt::DType::Bf16 && g.params()[i].init == Init::He)
            for (float &v : p.values[i])
                v = tpurt::Bf16::from_float(v).to_float();
    }
    plan_fusion(p);
    return p;
}

InferencePlan InferencePlan::make(const Graph &g, const Quantised &q) {
    InferencePlan p = empty_plan(g, tpurt::DType::Int8);
    p.constants = int8_constants(g, q);
    p.input_scale = q.layers.front().x_scale;
    for (std::size_t i = 0; i < q.layers.size(); ++i)
        p.int8_layer[q.layers[i].node] = i;
    // The input in int8; an int8 layer reads int8 and gives fp32; the nodes between them
    // (ReLU, max pooling, flatten) keep their input's dtype.
    p.act.assign(g.nodes().size(), tpurt::DType::Fp32);
    p.act[0] = tpurt::DType::Int8;
    p.reads.resize(g.nodes().size());
    for (NodeId n = 1; n < g.nodes().size(); ++n) {
        const NodeId in = g.node(n).inputs[0];
        p.reads[n] = {p.int8_layer[n] ? tpurt::DType::Int8 : p.act[in]};
        p.act[n] = p.int8_layer[n] ? tpurt::DType::Fp32 : p.act[in];
    }
    p.values.resize(g.params().size());
    for (const Int8Layer &l : q.layers) {
        const Node &node = g.node(l.node);
        p.values[node.params[0]].assign(l.wq.begin(), l.wq.end());
        p.values[node.params[1]] = p.constants[*p.int8_layer[l.node]].bias;
    }
    plan_fusion(p);
    return p;
}

} // namespace tpu_nn
