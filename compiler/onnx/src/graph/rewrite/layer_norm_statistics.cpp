// SPDX-License-Identifier: MIT
// layer_norm_statistics.cpp - a LayerNormalization asked for its Mean and InvStdDev outputs,
// which the card's layer_norm does not give, split in two: the node with its Y output alone,
// and the statistics computed by nodes of their own from X as ONNX defines them, each a card
// op (reductions over the normalised axes, kept; a broadcast Sub; Mul; an Add of epsilon; Sqrt;
// Reciprocal):
//   Mean = ReduceMean(X), InvStdDev = 1 / Sqrt(ReduceMean((X - Mean)^2) + epsilon).
// Nodes on other layouts or dtypes are left for placement to judge.
#include "passes.hpp"

namespace tpu_onnx {

namespace {

using tpumodel::Model;
using tpumodel::Node;
using tpumodel::Tensor;

bool has_output(const Node &n, std::size_t i) {
    return i < n.outputs.size() && n.outputs[i] != tpumodel::no_tensor;
}

bool splittable(const Model &m, const Node &n) {
    if (n.op != "LayerNormalization" || n.inputs.empty() || !(has_output(n, 1) || has_output(n, 2)))
        return false;
    const Tensor &x = m.tensors[n.inputs[0]];
    return x.layout == tpumodel::Layout::Plain && x.dtype == tpumodel::DType::Float &&
           !x.shape.empty();
}

} // namespace

void split_layer_norm_statistics(Model &m) {
    std::vector<Node> nodes;
    nodes.reserve(m.nodes.size());
    for (Node &n : m.nodes) {
        if (!splittable(m, n)) {
            nodes.push_back(std::move(n));
            continue;
        }
        const std::uint32_t x = n.inputs[0];
        const std::vector<std::int64_t> shape = m.tensors[x].shape;
        const auto rank = std::int64_t(shape.size());
        std::int64_t axis = n.get_int("axis", -1);
        axis = axis < 0 ? axis + rank : axis;
        if (axis < 0 || axis >= rank) { // the placement reports it
            nodes.push_back(std::move(n));
            continue;
        }
        std::vector<std::int64_t> axes, kept = shape;
        for (std::int64_t a = axis; a < rank; ++a) {
            axes.push_back(a);
            kept[std::size_t(a)] = 1;
        }
        const std::string base = n.name + "_stat";
        const std::uint32_t mean =
            has_output(n, 1) ? n.outputs[1] : add_float_tensor(m, base + "_mean", kept);
        const std::uint32_t inv_std = has_output(n, 2) ? n.outputs[2] : tpumodel::no_tensor;
        const float eps = n.get_float("epsilon", 1e-5f);
        n.outputs.resize(1);
        nodes.push_back(std::move(n));

        Node reduce = op_node(base + "_mean", "ReduceMean", {x}, mean);
        reduce.set("axes", axes);
        reduce.set("keepdims", std::int64_t(1));
        nodes.push_back(std::move(reduce));
        if (inv_std == tpumodel::no_tensor)
            continue;
        const std::uint32_t centred = add_float_tensor(m, base + "_centred", shape);
        const std::uint32_t squares = add_float_tensor(m, base + "_squares", shape);
        const std::uint32_t variance = add_float_tensor(m, base + "_variance", kept);
        const std::uint32_t shifted = add_float_tensor(m, base + "_shifted", kept);
        const std::uint32_t deviation = add_float_tensor(m, base + "_deviation", kept);
        nodes.push_back(op_node(base + "_centre", "Sub", {x, mean}, centred));
        nodes.push_back(op_node(base + "_square", "Mul", {centred, centred}, squares));
        Node var = op_node(base + "_variance", "ReduceMean", {squares}, variance);
        var.set("axes", axes);
        var.set("keepdims", std::int64_t(1));
        nodes.push_back(std::move(var));
        nodes.push_back(op_node(base + "_epsilon", "Add",
                                {variance, add_float_scalar(m, base + "_epsilon", eps)}, shifted));
        nodes.push_back(op_node(base + "_sqrt", "Sqrt", {shifted}, deviation));
        nodes.push_back(op_node(base + "_reciprocal", "Reciprocal", {deviation}, inv_std));
    }
    m.nodes = std::move(nodes);
}

} // namespace tpu_onnx
