// SPDX-License-Identifier: MIT
// layout.cpp - tensors in the card's layouts. Images (4-D tensors between Conv, pooling,
// elementwise nodes, including those with a constant scalar, and BatchNormalizations with
// constant vectors) become NHWC; Conv weights HWIO; Gemm
// weights [K, N] (transB folded). A graph input or output keeps ONNX's NCHW through a Transpose
// node at the edge; so do an image made by a node that does not take NHWC and any other consumer
// of an image, except a Flatten (or a Reshape to [N, C*H*W]) that only feeds Gemm/MatMul with
// constant weights: the flatten then reads H, W, C order and those weights' rows are permuted to
// match, so no transpose runs in the model.
#include "passes.hpp"

#include <cstring>
#include <set>

namespace tpu_onnx {

namespace {

using tpumodel::Layout;
using tpumodel::Model;
using tpumodel::no_tensor;
using tpumodel::Node;
using tpumodel::Tensor;

const std::set<std::string> image_ops = {"Conv", "MaxPool", "AveragePool", "GlobalAveragePool",
                                         "GlobalMaxPool"};
const std::set<std::string> pointwise_ops = {"Relu", "Sigmoid", "Tanh", "Exp", "Log",
                                             "Sqrt", "Erf",     "Neg",  "Abs", "Reciprocal"};
const std::set<std::string> binary_ops = {"Add", "Sub", "Mul", "Div"};

bool is_image(const Model &m, std::uint32_t id) {
    return id != no_tensor && !m.tensors[id].constant && m.tensors[id].shape.size() == 4;
}

// The data tensors of `n` that follow its image layout (empty: the node does not take NHWC).
std::vector<std::uint32_t> image_operands(const Model &m, const Node &n) {
    if (n.inputs.empty() || n.outputs.empty() || !is_image(m, n.inputs[0]))
        return {};
    if (image_ops.count(n.op)) {
        if (n.op == "Conv" && (n.inputs.size() < 2 || !m.tensors[n.inputs[1]].constant))
            return {}; // weights computed at run time stay in ONNX's layout
        return {n.inputs[0], n.outputs[0]};
    }
    if (pointwise_ops.count(n.op) || constant_batchnorm(m, n))
        return {n.inputs[0], n.outputs[0]};
    if (binary_ops.count(n.op) && n.inputs.size() == 2 && is_image(m, n.inputs[1]) &&
        m.tensors[n.inputs[0]].shape == m.tensors[n.inputs[1]].shape)
        return {n.inputs[0], n.inputs[1], n.outputs[0]};
    // A constant scalar (such as an input normalisation's mean) broadcasts in any layout.
    if (binary_ops.count(n.op) && n.inputs.size() == 2 && m.tensors[n.inputs[1]].constant &&
        m.tensors[n.inputs[1]].element_count() == 1)
        return {n.inputs[0], n.outputs[0]};
    return {};
}

// Copies `t`'s elements through `perm` (dense, plain order on both sides).
Tensor permuted(const Tensor &t, const std::vector<std::size_t> &perm, Layout layout) {
    Tensor out = t;
    out.layout = layout;
    const std::size_t rank = t.shape.size();
    for (std::size_t i = 0; i < rank; ++i)
        out.shape[i] = t.shape[perm[i]];
    std::vector<std::uint64_t> stride(rank, 1);
    for (std::size_t i = rank; i-- > 1;)
        stride[i - 1] = stride[i] * std::uint64_t(t.shape[i]);
    const std::size_t size = tpumodel::dtype_size(t.dtype);
    std::vector<std::int64_t> pos(rank, 0);
    for (std::uint64_t o = 0; o < out.element_count(); ++o) {
        std::uint64_t src = 0;
        for (std::size_t i = 0; i < rank; ++i)
            src += std::uint64_t(pos[i]) * stride[perm[i]];
        std::memcpy(out.data.data() + o * size, t.data.data() + src * size, size);
        for (std::size_t i = rank; i-- > 0;) {
            if (++pos[i] < out.shape[i])
                break;
            pos[i] = 0;
        }
    }
    return out;
}

std::vector<std::int64_t> nhwc_shape(const std::vector<std::int64_t> &nchw) {
    return {nchw[0], nchw[2], nchw[3], nchw[1]};
}

// Gemm weights in the card's [K, N]: transB folded into the constant.
void weights_to_kn(Model &m) {
    for (Node &n : m.nodes)
        if (n.op == "Gemm" && n.get_int("transB", 0) != 0 && n.inputs.size() >= 2 &&
            m.tensors[n.inputs[1]].constant && m.tensors[n.inputs[1]].shape.size() == 2) {
            Tensor w = permuted(m.tensors[n.inputs[1]], {1, 0}, Layout::Plain);
            w.name += "_kn";
            n.inputs[1] = m.add_tensor(std::move(w));
            n.set("transB", std::int64_t(0));
        }
}

struct Uses {
    std::vector<std::vector<std::size_t>> consumers; // node indices per tensor
    std::vector<bool> output;                        // a graph output
};

Uses uses_of(const Model &m) {
    Uses u{std::vector<std::vector<std::size_t>>(m.tensors.size()),
           std::vector<bool>(m.tensors.size(), false)};
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        for (std::uint32_t id : m.nodes[i].inputs)
            if (id != no_tensor)
                u.consumers[id].push_back(i);
    for (std::uint32_t id : m.outputs)
        u.output[id] = true;
    return u;
}

// A Flatten(axis 1) or Reshape to [N, C*H*W] of image `id` whose output only feeds the weights
// side of Gemm/MatMul nodes with constant [K, N] weights: those can take H, W, C order.
bool flatten_into_weights(const Model &m, const Uses &u, const Node &n, std::uint32_t id) {
    const Tensor &x = m.tensors[id];
    if (n.inputs[0] != id || n.outputs.size() != 1 || u.output[n.outputs[0]])
        return false;
    const Tensor &y = m.tensors[n.outputs[0]];
    const bool flat = y.shape.size() == 2 && y.shape[0] == x.shape[0] &&
                      y.shape[1] == x.shape[1] * x.shape[2] * x.shape[3];
    if (!flat || (n.op != "Flatten" && n.op != "Reshape"))
        return false;
    for (std::size_t c : u.consumers[n.outputs[0]]) {
        const Node &g = m.nodes[c];
        const bool weights = (g.op == "Gemm" || g.op == "MatMul") && g.inputs.size() >= 2 &&
                             g.inputs[0] == n.outputs[0] && g.inputs[1] != n.outputs[0] &&
                             m.tensors[g.inputs[1]].constant &&
                             m.tensors[g.inputs[1]].shape.size() == 2 &&
                             g.get_int("transA", 0) == 0 && g.get_int("transB", 0) == 0;
        if (!weights)
            return false;
    }
    return true;
}

// Rows k = c*H*W + h*W + w of the [K, N] weights moved to (h*W + w)*C + c.
void permute_weight_rows(Model &m, Node &g, const std::vector<std::int64_t> &nchw) {
    const Tensor &w = m.tensors[g.inputs[1]];
    const std::uint64_t C = std::uint64_t(nchw[1]), H = std::uint64_t(nchw[2]),
                        W = std::uint64_t(nchw[3]);
    const std::size_t row = std::size_t(w.shape[1]) * tpumodel::dtype_size(w.dtype);
    Tensor p = w;
    p.name += "_hwc";
    for (std::uint64_t c = 0; c < C; ++c)
        for (std::uint64_t h = 0; h < H; ++h)
            for (std::uint64_t x = 0; x < W; ++x)
                std::memcpy(p.data.data() + ((h * W + x) * C + c) * row,
                            w.data.data() + ((c * H + h) * W + x) * row, row);
    g.inputs[1] = m.add_tensor(std::move(p));
}

} // namespace

tpumodel::Node transpose_node(const std::string &name, std::uint32_t from, std::uint32_t to,
                              std::vector<std::int64_t> perm) {
    tpumodel::Node t{name, "Transpose", tpumodel::Placement::Cpu, "", "", {}, {from}, {to}};
    t.set("perm", std::move(perm));
    return t;
}

void convert_layouts(Model &m, CompileSummary &summary) {
    weights_to_kn(m);

    // The images: seeded by the image ops and BatchNormalizations with constant vectors (which
    // the card then runs per channel as rows of the last axis), spread through pointwise and
    // same-shape binary ops.
    std::vector<bool> nhwc(m.tensors.size(), false);
    for (bool changed = true; changed;) {
        changed = false;
        for (const Node &n : m.nodes) {
            const std::vector<std::uint32_t> ids = image_operands(m, n);
            bool any = image_ops.count(n.op) != 0 || (!ids.empty() && constant_batchnorm(m, n));
            for (std::uint32_t id : ids)
                any = any || nhwc[id];
            for (std::uint32_t id : ids)
                if (any && !nhwc[id])
                    changed = nhwc[id] = true;
        }
    }

    const Uses u = uses_of(m);
    std::vector<bool> image_reader(m.nodes.size(), false); // nodes that read NHWC operands
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        image_reader[i] =
            !image_operands(m, m.nodes[i]).empty() && nhwc[image_operands(m, m.nodes[i])[0]];

    std::vector<std::vector<Node>> after(m.nodes.size() + 1); // transposes after node i (0: first)
    std::vector<std::size_t> producer(m.tensors.size(), 0);
    for (std::size_t i = 0; i < m.nodes.size(); ++i)
        for (std::uint32_t id : m.nodes[i].outputs)
            producer[id] = i + 1;

    const std::size_t tensor_count = m.tensors.size();
    for (std::uint32_t id = 0; id < tensor_count; ++id) {
        if (!nhwc[id])
            continue;
        const std::vector<std::int64_t> nchw = m.tensors[id].shape;
        // Made in ONNX's order: a graph input, or the output of a node that does not take NHWC.
        const bool made_plain = producer[id] == 0 || !image_reader[producer[id] - 1];
        std::vector<std::size_t> plain_readers; // consumers that need ONNX's order
        for (std::size_t c : u.consumers[id]) {
            Node &n = m.nodes[c];
            if (image_reader[c])
                continue;
            if (!made_plain && flatten_into_weights(m, u, n, id)) {
                for (std::size_t g : u.consumers[n.outputs[0]])
                    permute_weight_rows(m, m.nodes[g], nchw);
                continue;
            }
            plain_readers.push_back(c);
        }
        if (made_plain) {
            // The tensor stays NCHW; its image readers take a transposed copy.
            Tensor copy = m.tensors[id];
            copy.name += "_nhwc";
            copy.shape = nhwc_shape(nchw);
            copy.layout = Layout::Nhwc;
            const std::uint32_t c_id = m.add_tensor(std::move(copy));
            for (std::size_t c : u.consumers[id])
                if (image_reader[c])
                    for (std::uint32_t &in : m.nodes[c].inputs)
                        in = in == id ? c_id : in;
            after[producer[id]].push_back(
                transpose_node(m.tensors[id].name + "_to_nhwc", id, c_id, {0, 2, 3, 1}));
            ++summary.transposes;
            continue;
        }
        Tensor &t = m.tensors[id];
        t.shape = nhwc_shape(nchw);
        t.layout = Layout::Nhwc;
        if (plain_readers.empty() && !u.output[id])
            continue;
        // ONNX's order for the graph output and the other readers, under the original name.
        Tensor plain = t;
        plain.shape = nchw;
        plain.layout = Layout::Plain;
        t.name += "_nhwc";
        const std::uint32_t p_id = m.add_tensor(std::move(plain));
        for (std::size_t c : plain_readers)
            for (std::uint32_t &in : m.nodes[c].inputs)
                in = in == id ? p_id : in;
        for (std::uint32_t &out : m.outputs)
            out = out == id ? p_id : out;
        after[producer[id]].push_back(
            transpose_node(m.tensors[p_id].name + "_to_nchw", id, p_id, {0, 3, 1, 2}));
        ++summary.transposes;
    }

    for (Node &n : m.nodes)
        if (n.op == "Conv" && n.inputs.size() >= 2 && nhwc[n.outputs[0]]) {
            Tensor w = permuted(m.tensors[n.inputs[1]], {2, 3, 1, 0}, Layout::Hwio);
            w.name += "_hwio";
            n.inputs[1] = m.add_tensor(std::move(w));
        }

    std::vector<Node> nodes = std::move(after[0]);
    for (std::size_t i = 0; i < m.nodes.size(); ++i) {
        nodes.push_back(std::move(m.nodes[i]));
        for (Node &t : after[i + 1])
            nodes.push_back(std::move(t));
    }
    m.nodes = std::move(nodes);
}

} // namespace tpu_onnx
