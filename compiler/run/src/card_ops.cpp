// SPDX-License-Identifier: MIT
// card_ops.cpp - the card ops tpu-compile places nodes on (compiler/README.md, "Placement")
// bound by name through libtpurt's op registry: the operands in each op's order, the ONNX
// attributes as the op's (strides and symmetric pads of NHWC windows, the fused activation,
// epsilon, axes, permutations), the reshaped views some forms need, and Concat, Gather, Slice
// and Expand as sequences of slice_copy. The quantised ops have binders of their own
// (quant_ops.cpp).
#include "card_ops.hpp"

#include "op_text.hpp"
#include "quant_ops.hpp"

#include "tpumodel/card_executor.hpp"
#include "tpumodel/cpu_kernels.hpp"
#include "tpumodel/reduction.hpp"
#include "tpumodel/slicing.hpp"

#include <tpurt/ops/op_registry.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tpumodel::card {

std::vector<std::int64_t> window_pads(const Model &m, const Node &n,
                                      const std::vector<std::int64_t> &kernel) {
    const std::string auto_pad = n.get_string("auto_pad", "NOTSET");
    std::vector<std::int64_t> pads(4, 0);
    if (auto_pad == "NOTSET")
        pads = n.get_ints("pads", pads);
    else if (auto_pad != "VALID") {
        const std::vector<std::int64_t> strides = n.get_ints("strides", {1, 1});
        const std::vector<std::int64_t> dil = n.get_ints("dilations", {1, 1});
        for (std::size_t d = 0; d < 2; ++d) {
            const std::int64_t size = m.tensors[n.inputs[0]].shape[1 + d];
            const std::int64_t o = m.tensors[n.outputs[0]].shape[1 + d];
            const std::int64_t total = std::max<std::int64_t>(
                (o - 1) * strides[d] + (kernel[d] - 1) * dil[d] + 1 - size, 0);
            pads[d] = auto_pad == "SAME_LOWER" ? total - total / 2 : total / 2;
            pads[d + 2] = total - pads[d];
        }
    }
    if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3])
        cannot(n, "asymmetric padding");
    return pads;
}

namespace {

using Tensors = std::span<const tpurt::Tensor *const>;

// strides, pads (and kernel) of a convolution or pooling window.
Attributes &window(Attributes &a, const Model &m, const Node &n,
                   const std::vector<std::int64_t> &kernel) {
    const std::vector<std::int64_t> strides = n.get_ints("strides", {1, 1});
    const std::vector<std::int64_t> pads = window_pads(m, n, kernel);
    return a.add("stride_h", strides.at(0))
        .add("stride_w", strides.at(1))
        .add("pad_h", pads[0])
        .add("pad_w", pads[1]);
}

std::string activation(const Node &n) {
    const std::string a = n.get_string("activation", "");
    if (a.empty())
        return "none";
    if (a == "Relu")
        return "relu";
    cannot(n, "fused activation " + a);
}

using Binder = tpurt::OpSequence (*)(tpurt::Device &, const Model &, const Node &, Tensors in,
                                     Tensors out);

tpurt::OpSequence conv2d_layer(tpurt::Device &d, const Model &m, const Node &n, Tensors in,
                               Tensors out) {
    const Tensor &w = m.tensors[n.inputs[1]]; // HWIO
    Attributes a;
    window(a, m, n, {w.shape[0], w.shape[1]}).add("activation", activation(n));
    return prepare(d, "conv2d_layer", {in[0], in[1], out[0], in.size() > 2 ? in[2] : nullptr}, a);
}

tpurt::OpSequence grouped_conv2d(tpurt::Device &d, const Model &m, const Node &n, Tensors in,
                                 Tensors out) {
    const Tensor &w = m.tensors[n.inputs[1]];
    const std::vector<std::int64_t> dil = n.get_ints("dilations", {1, 1});
    Attributes a;
    window(a, m, n, {w.shape[0], w.shape[1]})
        .add("groups", n.get_int("group", 1))
        .add("dilation_h", dil.at(0))
        .add("dilation_w", dil.at(1));
    return prepare(d, "grouped_conv2d", {in[0], in[1], out[0]}, a);
}

tpurt::OpSequence pool2d(tpurt::Device &d, const Model &m, const Node &n, Tensors in, Tensors out) {
    const std::vector<std::int64_t> k = n.get_ints("kernel_shape", {});
    if (k.size() != 2)
        cannot(n, "a window of other than two dimensions");
    Attributes a;
    a.add("op", n.op == "MaxPool" ? "max" : "avg").add("window_h", k[0]).add("window_w", k[1]);
    window(a, m, n, k);
    return prepare(d, "pool2d", {in[0], out[0]}, a);
}

// GlobalAveragePool / GlobalMaxPool of an NHWC image [N, H, W, C]: the mean or maximum over
// the middle axis of its [N, H x W, C] view, into the [N, 1, C] view of the output.
tpurt::OpSequence global_pool(tpurt::Device &d, const Model &, const Node &n, Tensors in,
                              Tensors out) {
    const std::vector<std::size_t> &s = in[0]->shape();
    if (s.size() != 4)
        cannot(n, "an input of rank other than 4");
    const tpurt::Tensor x = in[0]->reshape({s[0], s[1] * s[2], s[3]});
    const tpurt::Tensor y = out[0]->reshape({s[0], 1, s[3]});
    Attributes a;
    a.add("axis", std::int64_t(1));
    if (n.card_op == "mean")
        return prepare(d, "mean", {&x, &y}, a);
    a.add("op", "max");
    return prepare(d, "reduce_axis", {&x, &y}, a);
}

// ReduceMean / ReduceSum / ReduceMax over a run of neighbouring axes: over the middle axis of
// the input's [outer, length, inner] view, into the output's [outer, 1, inner] view (keepdims
// or not, the output holds those elements in that order).
tpurt::OpSequence reduce(tpurt::Device &d, const Model &m, const Node &n, Tensors in, Tensors out) {
    if (n.op == "GlobalAveragePool" || n.op == "GlobalMaxPool")
        return global_pool(d, m, n, in, out);
    const Tensor &x = m.tensors[n.inputs[0]];
    const bool axes_input = n.inputs.size() > 1 && n.inputs[1] != no_tensor;
    if (axes_input && !m.tensors[n.inputs[1]].constant)
        cannot(n, "axes computed at run time");
    const std::optional<cpu::AxisRun> run = cpu::contiguous_run(
        x.shape,
        cpu::reduced_axes(n, x.shape.size(), axes_input ? &m.tensors[n.inputs[1]] : nullptr));
    if (!run)
        cannot(n, "a reduction over other than one run of neighbouring axes");
    const tpurt::Tensor a = in[0]->reshape({run->outer, run->length, run->inner});
    const tpurt::Tensor y = out[0]->reshape({run->outer, 1, run->inner});
    Attributes attributes;
    attributes.add("axis", std::int64_t(1));
    if (n.card_op == "mean")
        return prepare(d, "mean", {&a, &y}, attributes);
    attributes.add("op", n.op == "ReduceMax" ? "max" : "sum");
    return prepare(d, "reduce_axis", {&a, &y}, attributes);
}

tpurt::OpSequence dense(tpurt::Device &d, const Model &, const Node &n, Tensors in, Tensors out) {
    Attributes a;
    a.add("activation", activation(n));
    return prepare(d, "dense", {in[0], in[1], out[0], in.size() > 2 ? in[2] : nullptr}, a);
}

// Tensor `t` of rank 3 or more seen as [product of its leading axes, rows, cols].
tpurt::Tensor batch_of_matrices(const tpurt::Tensor &t) {
    const std::vector<std::size_t> &s = t.shape();
    std::size_t batch = 1;
    for (std::size_t i = 0; i + 2 < s.size(); ++i)
        batch *= s[i];
    return t.reshape({batch, s[s.size() - 2], s.back()});
}

// MatMul: 2-D, or 3-D batched; a higher rank's batch axes (the same on both sides) as one.
tpurt::OpSequence matmul(tpurt::Device &d, const Model &, const Node &n, Tensors in, Tensors out) {
    if (in[0]->shape().size() <= 3)
        return prepare(d, n.card_op.c_str(), {in[0], in[1], out[0]});
    const tpurt::Tensor a = batch_of_matrices(*in[0]), b = batch_of_matrices(*in[1]),
                        y = batch_of_matrices(*out[0]);
    return prepare(d, n.card_op.c_str(), {&a, &b, &y});
}

tpurt::OpSequence unary(tpurt::Device &d, const Model &, const Node &n, Tensors in, Tensors out) {
    static const std::map<std::string, const char *> functions = {
        {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"},        {"Exp", "exp"},
        {"Log", "log"},   {"Sqrt", "sqrt"},       {"Reciprocal", "recip"}, {"Erf", "erf"}};
    const auto f = functions.find(n.op);
    if (f == functions.end())
        cannot(n, "ACTIVATE has no " + n.op);
    Attributes a;
    a.add("function", f->second);
    return prepare(d, "unary", {in[0], out[0]}, a);
}

tpurt::OpSequence one_operand(tpurt::Device &d, const Model &, const Node &n, Tensors in,
                              Tensors out) {
    return prepare(d, n.card_op.c_str(), {in[0], out[0]});
}

// LayerNormalization over the axes from `axis` on: the card's layer_norm over the last axis of
// the [outer, inner] views of X and Y, scale and bias seen as [inner].
tpurt::OpSequence layer_norm(tpurt::Device &d, const Model &, const Node &n, Tensors in,
                             Tensors out) {
    const std::vector<std::size_t> &s = in[0]->shape();
    const auto rank = std::int64_t(s.size());
    std::int64_t axis = n.get_int("axis", -1);
    axis = axis < 0 ? axis + rank : axis;
    if (axis < 0 || axis >= rank)
        cannot(n, "axis " + std::to_string(n.get_int("axis", -1)) + " of a rank-" +
                      std::to_string(rank) + " input");
    std::size_t outer = 1, inner = 1;
    for (std::int64_t i = 0; i < rank; ++i)
        (i < axis ? outer : inner) *= s[std::size_t(i)];
    const tpurt::Tensor x = in[0]->reshape({outer, inner});
    const tpurt::Tensor scale = in[1]->reshape({inner});
    const tpurt::Tensor bias = in[2]->reshape({inner});
    const tpurt::Tensor y = out[0]->reshape({outer, inner});
    Attributes a;
    a.add("eps", n.get_float("epsilon", 1e-5f));
    return prepare(d, "layer_norm", {&x, &scale, &bias, &y}, a);
}

tpurt::OpSequence permute(tpurt::Device &d, const Model &m, const Node &n, Tensors in,
                          Tensors out) {
    std::vector<std::int64_t> perm = n.get_ints("perm", {});
    if (perm.empty()) // ONNX's default: the axes reversed
        for (std::size_t i = m.tensors[n.inputs[0]].shape.size(); i-- > 0;)
            perm.push_back(std::int64_t(i));
    std::string order;
    for (std::int64_t p : perm)
        order += (order.empty() ? "" : ",") + std::to_string(p);
    Attributes a;
    a.add("order", order);
    return prepare(d, "permute", {in[0], out[0]}, a);
}

std::size_t normalised_axis(const Node &n, std::int64_t axis, std::size_t rank) {
    const std::int64_t a = axis < 0 ? axis + std::int64_t(rank) : axis;
    if (a < 0 || a >= std::int64_t(rank))
        cannot(n, "axis " + std::to_string(axis) + " of a rank-" + std::to_string(rank) + " input");
    return std::size_t(a);
}

// `t` copied out to `shape` by ONNX's broadcast (its shape padded with leading 1s, then each axis
// where it has 1 filled by one slice_copy a position), the copies appended to `ops`; `t` itself
// if it has the shape already.
tpurt::Tensor broadcast_to(tpurt::Device &d, tpurt::OpSequence &ops, const Node &n,
                           const tpurt::Tensor &t, const std::vector<std::size_t> &shape) {
    if (t.shape() == shape)
        return t;
    std::vector<std::size_t> padded(shape.size() - std::min(shape.size(), t.shape().size()), 1);
    padded.insert(padded.end(), t.shape().begin(), t.shape().end());
    if (padded.size() != shape.size())
        cannot(n, "an operand of higher rank than the result");
    tpurt::Tensor from = t.reshape(padded);
    for (std::size_t axis = 0; axis < shape.size(); ++axis) {
        if (padded[axis] == shape[axis])
            continue;
        if (padded[axis] != 1)
            cannot(n, "an operand that does not broadcast to the result");
        padded[axis] = shape[axis];
        tpurt::Tensor to = tpurt::Tensor::empty(d, t.dtype(), padded);
        for (std::size_t at = 0; at < shape[axis]; ++at)
            slice_copy(d, ops, from, to, axis, 0, at, 1);
        from = to;
    }
    return from;
}

// Whether `b` is one row the card's elementwise op gives to every row of a `shape` result.
bool one_row(const std::vector<std::size_t> &b, const std::vector<std::size_t> &shape) {
    if (b.empty() || shape.size() < 2 || b.back() != shape.back() || b.size() > shape.size())
        return false;
    return std::all_of(b.begin(), b.end() - 1, [](std::size_t e) { return e == 1; });
}

// Add, Sub, Mul (elementwise) and Div (divide): operands of the result's shape, or b one row
// (elementwise), as they are; any other broadcast copied out first (the placement's rule).
tpurt::OpSequence binary(tpurt::Device &d, const Model &, const Node &n, Tensors in, Tensors out) {
    static const std::map<std::string, const char *> ops = {
        {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}};
    const auto op = ops.find(n.op);
    if (op == ops.end())
        cannot(n, "no elementwise op for " + n.op);
    const std::vector<std::size_t> &shape = out[0]->shape();
    tpurt::OpSequence ops_before;
    tpurt::Tensor a = *in[0], b = *in[1];
    if (a.shape() != shape ||
        (b.shape() != shape && (n.card_op == "divide" || !one_row(b.shape(), shape)))) {
        a = broadcast_to(d, ops_before, n, a, shape);
        b = broadcast_to(d, ops_before, n, b, shape);
    }
    Attributes attributes;
    if (n.card_op == "elementwise")
        attributes.add("op", op->second);
    tpurt::OpSequence run = prepare(d, n.card_op.c_str(), {&a, &b, out[0]}, attributes);
    ops_before.launches.insert(ops_before.launches.end(), run.launches.begin(), run.launches.end());
    return ops_before;
}

// Concat: each input copied into its place along the axis.
tpurt::OpSequence concat(tpurt::Device &d, const Model &, const Node &n, Tensors in, Tensors out) {
    const std::size_t axis = normalised_axis(n, n.get_int("axis", 0), out[0]->shape().size());
    tpurt::OpSequence ops;
    std::size_t offset = 0;
    for (const tpurt::Tensor *t : in) {
        if (!t)
            cannot(n, "an input that is not a tensor on the card");
        slice_copy(d, ops, *t, *out[0], axis, 0, offset, t->shape()[axis]);
        offset += t->shape()[axis];
    }
    return ops;
}

// Gather of constant indices along an axis: a copy per run of neighbouring indices, into the
// output seen with the indices as one axis.
tpurt::OpSequence gather(tpurt::Device &d, const Model &m, const Node &n, Tensors in, Tensors out) {
    const Tensor &indices = m.tensors[n.inputs.at(1)];
    if (!indices.constant)
        cannot(n, "indices computed at run time");
    const std::vector<std::size_t> &s = in[0]->shape();
    const std::size_t axis = normalised_axis(n, n.get_int("axis", 0), s.size());
    const auto extent = std::int64_t(s[axis]);
    std::vector<std::size_t> at;
    for (std::uint64_t i = 0; i < indices.element_count(); ++i) {
        const std::int64_t v = cpu::int_at(indices, i);
        if (v < -extent || v >= extent)
            cannot(n, "index " + std::to_string(v) + " outside [-" + std::to_string(extent) + ", " +
                          std::to_string(extent) + ")");
        at.push_back(std::size_t(v < 0 ? v + extent : v));
    }
    std::vector<std::size_t> shape = s;
    shape[axis] = at.size();
    const tpurt::Tensor y = out[0]->reshape(shape);
    tpurt::OpSequence ops;
    for (std::size_t j = 0; j < at.size();) {
        std::size_t run = 1;
        while (j + run < at.size() && at[j + run] == at[j] + run)
            ++run;
        slice_copy(d, ops, *in[0], y, axis, at[j], j, run);
        j += run;
    }
    return ops;
}

// Slice of one axis with step 1 (one_axis_run): one copy of its run.
tpurt::OpSequence slice(tpurt::Device &d, const Model &m, const Node &n, Tensors in, Tensors out) {
    std::vector<std::int64_t> shape;
    for (std::size_t extent : in[0]->shape())
        shape.push_back(std::int64_t(extent));
    const auto input = [&](std::size_t i) {
        return i < n.inputs.size() && n.inputs[i] != tpumodel::no_tensor ? &m.tensors[n.inputs[i]]
                                                                         : nullptr;
    };
    const cpu::SliceSpan span = cpu::slice_span(n, shape, input(1), input(2), input(3), input(4));
    const cpu::OneAxisRun run = cpu::one_axis_run(span, shape);
    if (!run.why.empty())
        cannot(n, run.why);
    tpurt::OpSequence ops;
    slice_copy(d, ops, *in[0], *out[0], run.axis, std::size_t(span.first[run.axis]), 0,
               std::size_t(span.shape[run.axis]));
    return ops;
}

// Expand: the data copied out to the result's shape, then into the output.
tpurt::OpSequence expand(tpurt::Device &d, const Model &, const Node &n, Tensors in, Tensors out) {
    tpurt::OpSequence ops;
    const tpurt::Tensor full = broadcast_to(d, ops, n, *in[0], out[0]->shape());
    slice_copy(d, ops, full, *out[0], 0, 0, 0, full.shape()[0]);
    return ops;
}

tpurt::OpSequence copies(tpurt::Device &d, const Model &m, const Node &n, Tensors in, Tensors out) {
    if (n.op == "Concat")
        return concat(d, m, n, in, out);
    if (n.op == "Gather")
        return gather(d, m, n, in, out);
    if (n.op == "Slice")
        return slice(d, m, n, in, out);
    if (n.op == "Expand")
        return expand(d, m, n, in, out);
    cannot(n, "no copies for " + n.op);
}

const std::map<std::string, Binder> &binders() {
    static const std::map<std::string, Binder> b = {
        {"conv2d_layer", conv2d_layer},
        {"grouped_conv2d", grouped_conv2d},
        {"pool2d", pool2d},
        {"mean", reduce},
        {"reduce_axis", reduce},
        {"dense", dense},
        {"matmul", matmul},
        {"batched_matmul", matmul},
        {"unary", unary},
        {"elementwise", binary},
        {"divide", binary},
        {"softmax", one_operand},
        {"log_softmax", one_operand},
        {"layer_norm", layer_norm},
        {"permute", permute},
        {"slice_copy", copies},
    };
    return b;
}

} // namespace

tpurt::OpSequence prepare_card_node(tpurt::Device &device, const Model &m, const Node &n,
                                    Tensors in, Tensors out) {
    const QuantBinder quant = quant_binder(n.op);
    const auto it = binders().find(n.card_op);
    if (!quant && it == binders().end())
        cannot(n, "the executor does not know this card op");
    try {
        return quant ? quant(device, m, n, in, out) : it->second(device, m, n, in, out);
    } catch (const tpurt::Error &e) {
        cannot(n, e.what());
    }
}

} // namespace tpumodel::card
