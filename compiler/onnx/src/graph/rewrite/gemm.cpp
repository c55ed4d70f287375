// SPDX-License-Identifier: MIT
// gemm.cpp - a Gemm the card's dense cannot take (a transposed operand, weights computed at run
// time, alpha or beta other than 1, a C other than one constant bias row) as the ops it is made
// of, each of which the card can take: Transposes of A and B as the attributes say, a MatMul,
// a Mul by alpha, a Mul of C by beta (folded when C is a constant) and the Add of C (broadcast
// as ONNX's rule says):
//   Y = alpha (A' B') + beta C.
// Gemms the card's dense takes, and those on other dtypes or ranks, are left as they are.
#include "graph/placement/placement_rules.hpp"
#include "passes.hpp"

#include <cstring>

namespace tpu_onnx {

namespace {

using tpumodel::Model;
using tpumodel::Node;
using tpumodel::Tensor;

bool splittable(const Model &m, const Node &n) {
    if (n.op != "Gemm" || n.inputs.size() < 2 || n.outputs.size() != 1)
        return false;
    const Tensor &a = m.tensors[n.inputs[0]], &b = m.tensors[n.inputs[1]];
    return a.dtype == tpumodel::DType::Float && b.dtype == tpumodel::DType::Float &&
           a.layout == tpumodel::Layout::Plain && a.shape.size() == 2 && b.shape.size() == 2 &&
           card_decision(m, n).card_op.empty();
}

// A constant float tensor times `factor`, element by element (the Mul it replaces, folded).
Tensor scaled_constant(const Tensor &t, float factor) {
    Tensor s = t;
    s.name += "_scaled";
    for (std::size_t i = 0; i + 4 <= s.data.size(); i += 4) {
        float v;
        std::memcpy(&v, s.data.data() + i, 4);
        v *= factor;
        std::memcpy(s.data.data() + i, &v, 4);
    }
    return s;
}

// `id` transposed into a new tensor when `transpose`, else `id`.
std::uint32_t transposed(Model &m, std::vector<Node> &nodes, const std::string &name,
                         std::uint32_t id, bool transpose) {
    if (!transpose)
        return id;
    const std::vector<std::int64_t> &s = m.tensors[id].shape;
    const std::uint32_t t = add_float_tensor(m, name, {s[1], s[0]});
    nodes.push_back(transpose_node(name, id, t, {1, 0}));
    return t;
}

} // namespace

void split_gemms(Model &m) {
    std::vector<Node> nodes;
    nodes.reserve(m.nodes.size());
    for (Node &n : m.nodes) {
        if (!splittable(m, n)) {
            nodes.push_back(std::move(n));
            continue;
        }
        const std::string &base = n.name;
        const std::uint32_t y = n.outputs[0];
        const std::vector<std::int64_t> shape = m.tensors[y].shape;
        const float alpha = n.get_float("alpha", 1.0f), beta = n.get_float("beta", 1.0f);
        const bool has_c = n.inputs.size() > 2 && n.inputs[2] != tpumodel::no_tensor;
        const std::uint32_t a =
            transposed(m, nodes, base + "_a_t", n.inputs[0], n.get_int("transA", 0) != 0);
        const std::uint32_t b =
            transposed(m, nodes, base + "_b_t", n.inputs[1], n.get_int("transB", 0) != 0);
        std::uint32_t product =
            alpha == 1.0f && !has_c ? y : add_float_tensor(m, base + "_ab", shape);
        nodes.push_back(op_node(base + "_matmul", "MatMul", {a, b}, product));
        if (alpha != 1.0f) {
            const std::uint32_t scaled = has_c ? add_float_tensor(m, base + "_alpha_ab", shape) : y;
            nodes.push_back(op_node(base + "_alpha", "Mul",
                                    {product, add_float_scalar(m, base + "_alpha_value", alpha)},
                                    scaled));
            product = scaled;
        }
        if (!has_c)
            continue;
        std::uint32_t c = n.inputs[2];
        if (beta != 1.0f && m.tensors[c].constant && m.tensors[c].dtype == tpumodel::DType::Float) {
            c = m.add_tensor(scaled_constant(m.tensors[c], beta));
        } else if (beta != 1.0f) {
            const std::uint32_t scaled = add_float_tensor(m, base + "_beta_c", m.tensors[c].shape);
            nodes.push_back(op_node(base + "_beta", "Mul",
                                    {c, add_float_scalar(m, base + "_beta_value", beta)}, scaled));
            c = scaled;
        }
        nodes.push_back(op_node(base + "_add_c", "Add", {product, c}, y));
    }
    m.nodes = std::move(nodes);
}

} // namespace tpu_onnx
