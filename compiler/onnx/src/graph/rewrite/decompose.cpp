// SPDX-License-Identifier: MIT
// decompose.cpp - ops the card has no op for, written as ops it has, exactly:
//   Abs(x)             = Relu(x) + Relu(Neg(x))   (+0 for both zeros, NaN stays NaN)
//   ReduceSumSquare(x) = ReduceSum(x x)          (the same axes, keepdims and noop)
// Nodes on other dtypes or layouts are left for placement to judge.
#include "passes.hpp"

namespace tpu_onnx {

namespace {

using tpumodel::Model;
using tpumodel::Node;
using tpumodel::Tensor;

bool float_plain(const Model &m, const Node &n) {
    if (n.inputs.empty() || n.outputs.size() != 1 || n.inputs[0] == tpumodel::no_tensor)
        return false;
    const Tensor &x = m.tensors[n.inputs[0]];
    return x.dtype == tpumodel::DType::Float && x.layout == tpumodel::Layout::Plain;
}

} // namespace

void decompose(Model &m) {
    std::vector<Node> nodes;
    nodes.reserve(m.nodes.size());
    for (Node &n : m.nodes) {
        const bool abs = n.op == "Abs" && n.inputs.size() == 1 && float_plain(m, n);
        const bool sum_square = n.op == "ReduceSumSquare" && float_plain(m, n);
        if (!abs && !sum_square) {
            nodes.push_back(std::move(n));
            continue;
        }
        const std::uint32_t x = n.inputs[0];
        if (sum_square) {
            const std::uint32_t squares =
                add_float_tensor(m, n.name + "_squares", m.tensors[x].shape);
            nodes.push_back(op_node(n.name + "_square", "Mul", {x, x}, squares));
            n.op = "ReduceSum";
            n.inputs[0] = squares;
            nodes.push_back(std::move(n));
            continue;
        }
        const std::uint32_t negated = add_float_tensor(m, n.name + "_negated", m.tensors[x].shape),
                            positive =
                                add_float_tensor(m, n.name + "_positive", m.tensors[x].shape),
                            negative =
                                add_float_tensor(m, n.name + "_negative", m.tensors[x].shape);
        nodes.push_back(op_node(n.name + "_negate", "Neg", {x}, negated));
        nodes.push_back(op_node(n.name + "_relu", "Relu", {x}, positive));
        nodes.push_back(op_node(n.name + "_relu_negated", "Relu", {negated}, negative));
        nodes.push_back(op_node(n.name, "Add", {positive, negative}, n.outputs[0]));
    }
    m.nodes = std::move(nodes);
}

} // namespace tpu_onnx
