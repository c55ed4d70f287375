// SPDX-License-Identifier: MIT
// last_axis.cpp - Softmax and LogSoftmax over an axis other than the last, which the card's ops
// do not take, brought to the last axis: a Transpose moving that axis last, the op over the
// last axis, and the inverse Transpose back (three card ops, permute and softmax). Nodes on
// tensors of other layouts or dtypes are left for placement to judge.
#include "passes.hpp"

namespace tpu_onnx {

namespace {

using tpumodel::Model;
using tpumodel::Node;
using tpumodel::Tensor;

bool movable(const Model &m, const Node &n) {
    if ((n.op != "Softmax" && n.op != "LogSoftmax") || n.inputs.size() != 1 ||
        n.outputs.size() != 1)
        return false;
    const Tensor &x = m.tensors[n.inputs[0]];
    const auto rank = std::int64_t(x.shape.size());
    const std::int64_t axis = n.get_int("axis", -1);
    return x.layout == tpumodel::Layout::Plain && x.dtype == tpumodel::DType::Float && rank >= 2 &&
           axis >= -rank && axis < rank - 1 && axis != -1;
}

// A tensor like `t` with its axes in `perm`'s order, named `name`.
std::uint32_t permuted_tensor(Model &m, const Tensor &t, const std::string &name,
                              const std::vector<std::int64_t> &perm) {
    Tensor p;
    p.name = name;
    p.dtype = t.dtype;
    for (std::int64_t axis : perm)
        p.shape.push_back(t.shape[std::size_t(axis)]);
    return m.add_tensor(std::move(p));
}

} // namespace

void move_to_last_axis(Model &m, CompileSummary &summary) {
    std::vector<Node> nodes;
    nodes.reserve(m.nodes.size());
    for (Node &n : m.nodes) {
        if (!movable(m, n)) {
            nodes.push_back(std::move(n));
            continue;
        }
        const Tensor x = m.tensors[n.inputs[0]];
        const auto rank = std::int64_t(x.shape.size());
        std::int64_t axis = n.get_int("axis", -1);
        axis = axis < 0 ? axis + rank : axis;
        std::vector<std::int64_t> perm, inverse(std::size_t(rank), 0);
        for (std::int64_t i = 0; i < rank; ++i)
            if (i != axis)
                perm.push_back(i);
        perm.push_back(axis);
        for (std::size_t i = 0; i < perm.size(); ++i)
            inverse[std::size_t(perm[i])] = std::int64_t(i);

        const std::uint32_t in_t = permuted_tensor(m, x, x.name + "_" + n.name + "_last", perm);
        const std::uint32_t out_t = permuted_tensor(m, m.tensors[n.outputs[0]],
                                                    m.tensors[n.outputs[0]].name + "_last", perm);
        const std::uint32_t in_id = n.inputs[0], out_id = n.outputs[0];
        nodes.push_back(transpose_node(n.name + "_axis_last", in_id, in_t, perm));
        n.inputs[0] = in_t;
        n.outputs[0] = out_t;
        n.set("axis", std::int64_t(-1));
        const std::string name = n.name;
        nodes.push_back(std::move(n));
        nodes.push_back(transpose_node(name + "_axis_back", out_t, out_id, inverse));
        ++summary.axes_moved;
    }
    m.nodes = std::move(nodes);
}

} // namespace tpu_onnx
