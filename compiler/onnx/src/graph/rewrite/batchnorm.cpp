// SPDX-License-Identifier: MIT
// batchnorm.cpp - inference-mode BatchNormalization.
// - fold_batchnorms: after a Conv, folded into the Conv's weights and bias, as the card runs a
//   convolution with a bias and nothing after it: with s = scale / sqrt(var + epsilon) per output
//   channel, W'[o] = W[o] s[o] and B'[o] = (B[o] - mean[o]) s[o] + bias[o], computed in double
//   and rounded once to float. The result differs from normalising the convolution's output by
//   rounding only.
// - split_batchnorms: any other as the elementwise ops it is made of, Y = (X - mean) k + B with
//   k = scale / sqrt(var + epsilon), each [C] vector seen as [C, 1, ..., 1] (a Reshape, a view)
//   to broadcast along axis 1; with all four vectors constant, k and b' = B - mean k are
//   computed in double as above and Y = X k + b' (on an NHWC image, which the layout pass
//   makes of such a BatchNormalization's 4-D data, k and b' are [C] rows of its last axis).
#include "passes.hpp"

#include <cmath>
#include <cstring>

namespace tpu_onnx {

namespace {

using tpumodel::Model;
using tpumodel::no_tensor;
using tpumodel::Node;
using tpumodel::Tensor;

Tensor float_constant(const std::string &name, const std::vector<std::int64_t> &shape,
                      const std::vector<float> &v) {
    Tensor t{name, tpumodel::DType::Float, tpumodel::Layout::Plain, shape, true, {}};
    t.data.resize(v.size() * 4);
    std::memcpy(t.data.data(), v.data(), t.data.size());
    return t;
}

bool constant_vector(const Model &m, std::uint32_t id, std::int64_t n) {
    const Tensor &t = m.tensors[id];
    return t.constant && t.dtype == tpumodel::DType::Float && t.element_count() == std::uint64_t(n);
}

// Whether `bn` (the only reader of `conv`'s output) can be folded into `conv`.
bool foldable(const Model &m, const Node &conv, const Node &bn) {
    if (conv.op != "Conv" || conv.inputs.size() < 2 || conv.outputs.size() != 1 ||
        bn.inputs.size() != 5 || bn.outputs.size() != 1 || bn.get_int("training_mode", 0) != 0)
        return false;
    const Tensor &w = m.tensors[conv.inputs[1]];
    if (!w.constant || w.dtype != tpumodel::DType::Float || w.shape.size() != 4)
        return false;
    const std::int64_t out = w.shape[0];
    if (conv.inputs.size() > 2 && conv.inputs[2] != no_tensor &&
        !constant_vector(m, conv.inputs[2], out))
        return false;
    for (std::size_t i = 1; i < 5; ++i)
        if (!constant_vector(m, bn.inputs[i], out))
            return false;
    return true;
}

// The data's channels: axis 1 in ONNX's order, the last axis of an NHWC image.
std::int64_t channels(const Tensor &x) {
    return x.layout == tpumodel::Layout::Nhwc ? x.shape.back() : x.shape[1];
}

// The split of a BatchNormalization: float data of rank 2 or more, in ONNX's order or an NHWC
// image with constant vectors, the four vectors present, inference mode.
bool splittable(const Model &m, const Node &bn) {
    if (bn.op != "BatchNormalization" || bn.inputs.size() != 5 || bn.outputs.size() != 1 ||
        bn.get_int("training_mode", 0) != 0)
        return false;
    const Tensor &x = m.tensors[bn.inputs[0]];
    if (x.dtype != tpumodel::DType::Float || x.shape.size() < 2 ||
        (x.layout != tpumodel::Layout::Plain && !constant_batchnorm(m, bn)))
        return false;
    for (std::size_t i = 1; i < 5; ++i)
        if (bn.inputs[i] == no_tensor ||
            m.tensors[bn.inputs[i]].element_count() != std::uint64_t(channels(x)))
            return false;
    return true;
}

} // namespace

bool constant_batchnorm(const Model &m, const Node &bn) {
    if (bn.op != "BatchNormalization" || bn.inputs.size() != 5 || bn.outputs.size() != 1 ||
        bn.get_int("training_mode", 0) != 0 || m.tensors[bn.inputs[0]].shape.size() < 2)
        return false;
    for (std::size_t i = 1; i < 5; ++i)
        if (bn.inputs[i] == no_tensor ||
            !constant_vector(m, bn.inputs[i], channels(m.tensors[bn.inputs[0]])))
            return false;
    return true;
}

void split_batchnorms(Model &m) {
    std::vector<Node> nodes;
    nodes.reserve(m.nodes.size());
    for (Node &bn : m.nodes) {
        if (!splittable(m, bn)) {
            nodes.push_back(std::move(bn));
            continue;
        }
        const std::string &base = bn.name;
        const std::uint32_t x = bn.inputs[0], y = bn.outputs[0];
        const std::vector<std::int64_t> shape = m.tensors[x].shape;
        const bool nhwc = m.tensors[x].layout == tpumodel::Layout::Nhwc;
        std::vector<std::int64_t> column(shape.size() - 1, 1); // [C, 1, ..., 1]
        column[0] = shape[1];
        if (nhwc) // [C]: a row of the image's last axis
            column = {shape.back()};
        const float epsilon = bn.get_float("epsilon", 1e-5f);
        if (constant_batchnorm(m, bn)) {
            const std::vector<float> scale = m.tensors[bn.inputs[1]].floats(),
                                     shift = m.tensors[bn.inputs[2]].floats(),
                                     mean = m.tensors[bn.inputs[3]].floats(),
                                     var = m.tensors[bn.inputs[4]].floats();
            std::vector<float> k(scale.size()), b(scale.size());
            for (std::size_t c = 0; c < k.size(); ++c) {
                const double s = double(scale[c]) / std::sqrt(double(var[c]) + double(epsilon));
                k[c] = float(s);
                b[c] = float(double(shift[c]) - double(mean[c]) * s);
            }
            const std::uint32_t scaled = add_float_tensor(m, base + "_scaled", shape);
            m.tensors[scaled].layout = m.tensors[x].layout;
            nodes.push_back(op_node(base + "_scale", "Mul",
                                    {x, m.add_tensor(float_constant(base + "_k", column, k))},
                                    scaled));
            nodes.push_back(op_node(base + "_shift", "Add",
                                    {scaled, m.add_tensor(float_constant(base + "_b", column, b))},
                                    y));
            continue;
        }
        Tensor dims{base + "_column",
                    tpumodel::DType::Int64,
                    tpumodel::Layout::Plain,
                    {std::int64_t(column.size())},
                    true,
                    std::vector<std::uint8_t>(column.size() * 8)};
        std::memcpy(dims.data.data(), column.data(), dims.data.size());
        const std::uint32_t dims_id = m.add_tensor(std::move(dims));
        std::uint32_t v[5];
        for (std::size_t i = 1; i < 5; ++i) {
            v[i] = add_float_tensor(m, base + "_v" + std::to_string(i), column);
            nodes.push_back(op_node(base + "_column" + std::to_string(i), "Reshape",
                                    {bn.inputs[i], dims_id}, v[i]));
        }
        const std::uint32_t shifted = add_float_tensor(m, base + "_var_eps", column),
                            deviation = add_float_tensor(m, base + "_deviation", column),
                            inverse = add_float_tensor(m, base + "_inverse", column),
                            k = add_float_tensor(m, base + "_k", column),
                            centred = add_float_tensor(m, base + "_centred", shape),
                            scaled = add_float_tensor(m, base + "_scaled", shape);
        nodes.push_back(op_node(base + "_epsilon", "Add",
                                {v[4], add_float_scalar(m, base + "_eps", epsilon)}, shifted));
        nodes.push_back(op_node(base + "_sqrt", "Sqrt", {shifted}, deviation));
        nodes.push_back(op_node(base + "_reciprocal", "Reciprocal", {deviation}, inverse));
        nodes.push_back(op_node(base + "_k", "Mul", {v[1], inverse}, k));
        nodes.push_back(op_node(base + "_centre", "Sub", {x, v[3]}, centred));
        nodes.push_back(op_node(base + "_scale", "Mul", {centred, k}, scaled));
        nodes.push_back(op_node(base + "_shift", "Add", {scaled, v[2]}, y));
    }
    m.nodes = std::move(nodes);
}

void fold_batchnorms(Model &m, CompileSummary &summary) {
    std::vector<std::size_t> readers(m.tensors.size(), 0);
    for (const Node &n : m.nodes)
        for (std::uint32_t id : n.inputs)
            if (id != no_tensor)
                ++readers[id];
    for (std::uint32_t id : m.outputs)
        ++readers[id];

    std::vector<std::size_t> producer(m.tensors.size(), m.nodes.size());
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        for (std::uint32_t id : m.nodes[i].outputs)
            producer[id] = i;

    std::vector<bool> gone(m.nodes.size(), false);
    for (std::size_t b = 0; b < m.nodes.size(); ++b) {
        Node &bn = m.nodes[b];
        if (bn.op != "BatchNormalization" || bn.inputs.empty())
            continue;
        const std::uint32_t x = bn.inputs[0];
        const std::size_t c = producer[x];
        if (c == m.nodes.size() || readers[x] != 1 || !foldable(m, m.nodes[c], bn))
            continue;
        Node &conv = m.nodes[c];
        const Tensor &w = m.tensors[conv.inputs[1]];
        const std::int64_t out = w.shape[0];
        const std::size_t per_out = std::size_t(w.element_count() / std::uint64_t(out));
        const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != no_tensor;
        const std::vector<float> scale = m.tensors[bn.inputs[1]].floats(),
                                 shift = m.tensors[bn.inputs[2]].floats(),
                                 mean = m.tensors[bn.inputs[3]].floats(),
                                 var = m.tensors[bn.inputs[4]].floats();
        const double epsilon = bn.get_float("epsilon", 1e-5f);
        std::vector<float> weights = w.floats(), bias(std::size_t(out), 0.0f);
        if (has_bias)
            bias = m.tensors[conv.inputs[2]].floats();
        for (std::size_t o = 0; o < std::size_t(out); ++o) {
            const double s = double(scale[o]) / std::sqrt(double(var[o]) + epsilon);
            for (std::size_t k = 0; k < per_out; ++k)
                weights[o * per_out + k] = float(double(weights[o * per_out + k]) * s);
            bias[o] = float((double(bias[o]) - double(mean[o])) * s + double(shift[o]));
        }
        const std::uint32_t w_id = m.add_tensor(float_constant(w.name + "_bn", w.shape, weights));
        const std::uint32_t b_id = m.add_tensor(float_constant(bn.name + "_bias", {out}, bias));
        conv.inputs.resize(3);
        conv.inputs[1] = w_id;
        conv.inputs[2] = b_id;
        conv.outputs = bn.outputs;
        gone[b] = true;
        ++summary.batchnorms;
    }

    std::vector<Node> kept;
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        if (!gone[i])
            kept.push_back(std::move(m.nodes[i]));
    m.nodes = std::move(kept);
}

} // namespace tpu_onnx
