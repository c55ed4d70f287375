// SPDX-License-Identifier: MIT
// broadcast.cpp - Neg as a Mul by -1, and constant operands of Add, Sub and Mul put in the form the
// card's elementwise op takes (one row broadcast to every row): an Add or Mul whose constant is its
// first operand gets its operands swapped (both commute exactly in IEEE arithmetic), and a constant
// of one element (a scalar, [1], [1, 1], ...) becomes a row of D copies, D the data's last axis.
// Images in NHWC keep their scalars (the layout pass judged them as they are).
#include "passes.hpp"

#include <cstring>

namespace tpu_onnx {

namespace {

using tpumodel::Model;
using tpumodel::Node;
using tpumodel::Tensor;

bool is_constant(const Model &m, std::uint32_t id) {
    return id != tpumodel::no_tensor && m.tensors[id].constant;
}

// A constant of one element that broadcasts to a rank-`rank` operand.
bool single_value(const Tensor &c, std::size_t rank) {
    return c.element_count() == 1 && c.shape.size() <= rank && c.layout == tpumodel::Layout::Plain;
}

Tensor as_row(const Tensor &c, std::int64_t width) {
    Tensor row = c;
    row.name += "_row";
    row.shape = {width};
    const std::size_t size = tpumodel::dtype_size(c.dtype);
    row.data.resize(std::size_t(width) * size);
    for (std::int64_t i = 0; i < width; ++i)
        std::memcpy(row.data.data() + std::size_t(i) * size, c.data.data(), size);
    return row;
}

// Neg(x) as Mul(x, -1): exact, and the card has a multiply but no negation.
void negation_as_product(Model &m, Node &n) {
    const Tensor &x = m.tensors[n.inputs[0]];
    if (x.dtype != tpumodel::DType::Float || x.shape.empty())
        return;
    Tensor minus_one{
        n.name + "_minus_one",       tpumodel::DType::Float, tpumodel::Layout::Plain, {}, true,
        std::vector<std::uint8_t>(4)};
    const float v = -1.0f;
    std::memcpy(minus_one.data.data(), &v, 4);
    n.op = "Mul";
    n.inputs.push_back(m.add_tensor(std::move(minus_one)));
}

} // namespace

void shape_constant_operands(Model &m) {
    for (Node &n : m.nodes) {
        if (n.op == "Neg" && n.inputs.size() == 1)
            negation_as_product(m, n);
        if ((n.op != "Add" && n.op != "Sub" && n.op != "Mul") || n.inputs.size() != 2)
            continue;
        if (n.op != "Sub" && is_constant(m, n.inputs[0]) && !is_constant(m, n.inputs[1]))
            std::swap(n.inputs[0], n.inputs[1]);
        if (is_constant(m, n.inputs[0]) || !is_constant(m, n.inputs[1]))
            continue;
        const Tensor &a = m.tensors[n.inputs[0]];
        const Tensor &c = m.tensors[n.inputs[1]];
        if (a.shape.empty() || a.layout != tpumodel::Layout::Plain ||
            m.tensors[n.outputs[0]].shape != a.shape)
            continue;
        if (single_value(c, a.shape.size()))
            n.inputs[1] = m.add_tensor(as_row(c, a.shape.back()));
    }
}

} // namespace tpu_onnx
