// SPDX-License-Identifier: MIT
// placement_rules.cpp - per ONNX op, the libtpurt op that runs it on the card and the forms it
// takes (runtime/README.md): conv2d_layer (NHWC x HWIO, symmetric padding, bias and ReLU in the
// epilogue), grouped_conv2d, pool2d (windows up to 16 x 16, zeros counted in averages), mean and
// reduce_axis, dense ([K, N] constant weights, a bias row), matmul and batched_matmul, unary
// (ACTIVATE's functions), elementwise and divide (same shape, one row to every row, or operands
// copied out to the result's shape by slice_copy first), softmax and
// log_softmax (last axis), layer_norm (the axes from `axis` on as one), permute; reshapes are
// views; Concat, Gather and Expand as slice_copy sequences, Slice of one axis as one slice_copy;
// the quantised ops by quant_rules.cpp. No node with a non-constant scalar (the card's tensors
// have at least one axis). Anything else: the reason.
#include "placement_rules.hpp"

#include "quant_rules.hpp"

#include <tpumodel/reduction.hpp>
#include <tpumodel/slicing.hpp>

#include <algorithm>

#include <map>
#include <optional>
#include <set>

namespace tpu_onnx {

namespace {

using tpumodel::Model;
using tpumodel::Node;
using tpumodel::Tensor;

using Rule = CardDecision (*)(const Model &, const Node &);

CardDecision card(const char *op) {
    return {op, ""};
}
CardDecision cpu(std::string reason) {
    return {"", std::move(reason)};
}

bool has(const Node &n, std::size_t i) {
    return i < n.inputs.size() && n.inputs[i] != tpumodel::no_tensor;
}
const Tensor &in(const Model &m, const Node &n, std::size_t i) {
    return m.tensors[n.inputs[i]];
}
const Tensor &out(const Model &m, const Node &n) {
    return m.tensors[n.outputs[0]];
}

std::string list(const std::vector<std::int64_t> &v) {
    std::string s = "[";
    for (std::size_t i = 0; i < v.size(); ++i)
        s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
}

bool float_data(const Tensor &t) {
    return t.dtype == tpumodel::DType::Float || t.dtype == tpumodel::DType::Bfloat16;
}
std::string dtype_reason(const Tensor &t) {
    return std::string(tpumodel::dtype_name(t.dtype)) +
           " data: the card's ops here take float32 or bfloat16";
}

// The pads of a windowed op over an NHWC image, resolving auto_pad; empty when unsupported.
std::vector<std::int64_t> window_pads(const Model &m, const Node &n,
                                      const std::vector<std::int64_t> &kernel) {
    const std::string auto_pad = n.get_string("auto_pad", "NOTSET");
    if (auto_pad == "NOTSET")
        return n.get_ints("pads", {0, 0, 0, 0});
    if (auto_pad == "VALID")
        return {0, 0, 0, 0};
    const std::vector<std::int64_t> strides = n.get_ints("strides", {1, 1});
    const std::vector<std::int64_t> dil = n.get_ints("dilations", {1, 1});
    std::vector<std::int64_t> pads(4);
    for (std::size_t d = 0; d < 2; ++d) {
        const std::int64_t size = in(m, n, 0).shape[1 + d], o = out(m, n).shape[1 + d];
        const std::int64_t total =
            std::max<std::int64_t>((o - 1) * strides[d] + (kernel[d] - 1) * dil[d] + 1 - size, 0);
        const std::int64_t small = total / 2;
        pads[d] = auto_pad == "SAME_LOWER" ? total - small : small;
        pads[d + 2] = total - pads[d];
    }
    return pads;
}

std::string asymmetric(const std::vector<std::int64_t> &pads) {
    if (pads.size() == 4 && pads[0] == pads[2] && pads[1] == pads[3])
        return "";
    return "asymmetric padding " + list(pads) + ": the card pads both sides alike";
}

CardDecision conv(const Model &m, const Node &n) {
    if (!has(n, 1) || !in(m, n, 1).constant)
        return cpu("its weights are computed at run time: the card's convolutions take constant "
                   "weights");
    if (in(m, n, 0).layout != tpumodel::Layout::Nhwc)
        return cpu("a " + std::to_string(in(m, n, 0).shape.size() - 2) +
                   "-D convolution: the card's are 2-D");
    if (!float_data(in(m, n, 0)))
        return cpu(dtype_reason(in(m, n, 0)));
    const Tensor &w = in(m, n, 1);
    const std::string pad = asymmetric(window_pads(m, n, {w.shape[0], w.shape[1]}));
    if (!pad.empty())
        return cpu(pad);
    const bool plain = n.get_int("group", 1) == 1 &&
                       n.get_ints("dilations", {1, 1}) == std::vector<std::int64_t>{1, 1};
    if (plain)
        return card("conv2d_layer");
    if (has(n, 2) || n.find("activation"))
        return cpu("a grouped or dilated convolution with bias or activation: grouped_conv2d "
                   "has no epilogue");
    return card("grouped_conv2d");
}

CardDecision pool(const Model &m, const Node &n) {
    if (in(m, n, 0).layout != tpumodel::Layout::Nhwc)
        return cpu("not a 2-D image pooling");
    const tpumodel::DType t = in(m, n, 0).dtype;
    const bool eight_bit = t == tpumodel::DType::Uint8 || t == tpumodel::DType::Int8;
    if (!float_data(in(m, n, 0)) && !(n.op == "MaxPool" && eight_bit)) // int8 max: uint8's too
        return cpu(dtype_reason(in(m, n, 0)));
    const std::vector<std::int64_t> k = n.get_ints("kernel_shape", {});
    if (k.size() != 2 || k[0] > 16 || k[1] > 16)
        return cpu("window " + list(k) + ": the card pools windows of at most 16 x 16");
    if (n.get_ints("dilations", {1, 1}) != std::vector<std::int64_t>{1, 1})
        return cpu("dilated pooling: the card's windows are dense");
    if (n.get_int("ceil_mode", 0) != 0)
        return cpu("ceil_mode 1: the card's output sizes round down");
    if (n.outputs.size() > 1)
        return cpu("MaxPool's indices output: the card returns values only");
    const std::vector<std::int64_t> pads = window_pads(m, n, k);
    const std::string pad = asymmetric(pads);
    if (!pad.empty())
        return cpu(pad);
    if (n.op == "AveragePool" && n.get_int("count_include_pad", 0) == 0 &&
        (pads[0] != 0 || pads[1] != 0))
        return cpu("count_include_pad 0 with padding: the card counts the padding in the "
                   "average's divisor");
    return card("pool2d");
}

CardDecision global_pool(const Model &m, const Node &n) {
    if (in(m, n, 0).layout != tpumodel::Layout::Nhwc)
        return cpu("not a 2-D image pooling");
    return card(n.op == "GlobalAveragePool" ? "mean" : "reduce_axis");
}

CardDecision gemm(const Model &m, const Node &n) {
    if (in(m, n, 0).shape.size() != 2 || n.get_int("transA", 0) != 0)
        return cpu("a transposed A: the card's dense takes rows of A");
    if (!in(m, n, 1).constant || n.get_int("transB", 0) != 0)
        return cpu("weights computed at run time: the card's dense takes constant [K, N] weights");
    if (!float_data(in(m, n, 0)))
        return cpu(dtype_reason(in(m, n, 0)));
    if (n.get_float("alpha", 1.0f) != 1.0f || (has(n, 2) && n.get_float("beta", 1.0f) != 1.0f))
        return cpu("alpha or beta other than 1: the card's dense scales A x W and bias together");
    if (has(n, 2)) {
        const Tensor &c = in(m, n, 2);
        const std::int64_t cols = out(m, n).shape[1];
        const bool row =
            c.constant && ((c.shape.size() == 1 && c.shape[0] == cols) ||
                           (c.shape.size() == 2 && c.shape[0] == 1 && c.shape[1] == cols));
        if (!row)
            return cpu("C of shape " + c.shape_string() +
                       ": the card's dense adds one constant bias row");
    }
    return card("dense");
}

CardDecision matmul(const Model &m, const Node &n) {
    const Tensor &a = in(m, n, 0), &b = in(m, n, 1);
    if (!float_data(a))
        return cpu(dtype_reason(a));
    if (a.shape.size() == 2 && b.shape.size() == 2)
        return card("matmul");
    if (a.shape.size() == 3 &&
        (b.shape.size() == 2 || (b.shape.size() == 3 && b.shape[0] == a.shape[0])))
        return card("batched_matmul");
    // Higher ranks with the same batch axes: a 3-D batched matmul of the batch axes as one.
    if (a.shape.size() > 3 && b.shape.size() == a.shape.size() &&
        std::equal(a.shape.begin(), a.shape.end() - 2, b.shape.begin()))
        return card("batched_matmul");
    return cpu("operands of rank " + std::to_string(a.shape.size()) + " and " +
               std::to_string(b.shape.size()) +
               ": the card's matmuls take 2-D, or batches of one shape on both sides");
}

CardDecision unary(const Model &m, const Node &n) {
    static const std::set<std::string> activate = {"Relu", "Sigmoid", "Tanh", "Exp",
                                                   "Log",  "Sqrt",    "Erf",  "Reciprocal"};
    if (!activate.count(n.op))
        return cpu("the card's ACTIVATE has no " + n.op);
    if (!float_data(in(m, n, 0)))
        return cpu(dtype_reason(in(m, n, 0)));
    return card("unary");
}

// The slice_copy launches that copy `t` out to `shape` (ONNX's multidirectional broadcast: one
// per position along each axis where t has 1), or nullopt if t does not broadcast to it.
std::optional<std::int64_t> broadcast_copies(const std::vector<std::int64_t> &t,
                                             const std::vector<std::int64_t> &shape) {
    if (t.size() > shape.size())
        return std::nullopt;
    std::int64_t copies = 0;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        const std::size_t from_end = shape.size() - i;
        const std::int64_t extent = from_end <= t.size() ? t[t.size() - from_end] : 1;
        if (extent != shape[i] && extent != 1)
            return std::nullopt;
        copies += extent != shape[i] ? shape[i] : 0;
    }
    return copies;
}

// Most slice_copy launches a broadcast may take before the node stays on the CPU.
constexpr std::int64_t max_broadcast_copies = 256;

CardDecision binary(const Model &m, const Node &n) {
    const Tensor &a = in(m, n, 0), &b = in(m, n, 1);
    const char *op = n.op == "Div" ? "divide" : "elementwise";
    if (!float_data(a))
        return cpu(dtype_reason(a));
    if (a.shape == b.shape && a.layout == b.layout)
        return card(op);
    bool row = n.op != "Div" && a.shape.size() >= 2 && !b.shape.empty() &&
               b.shape.back() == a.shape.back() && b.layout == tpumodel::Layout::Plain;
    for (std::size_t i = 0; row && i + 1 < b.shape.size(); ++i)
        row = b.shape[i] == 1;
    if (row)
        return card("elementwise");
    // Any other broadcast: the operands copied out to the result's shape first (slice_copy).
    const std::string shapes = "shapes " + a.shape_string() + " and " + b.shape_string();
    if (a.layout != tpumodel::Layout::Plain || b.layout != tpumodel::Layout::Plain)
        return cpu(shapes + ": an operand in the NHWC layout");
    if (a.constant || b.constant)
        return cpu(shapes + (n.op == "Div" ? ": a constant operand of another shape"
                                           : ": a constant broadcast other than one row"));
    const std::vector<std::int64_t> &shape = out(m, n).shape;
    const std::optional<std::int64_t> ca = broadcast_copies(a.shape, shape),
                                      cb = broadcast_copies(b.shape, shape);
    if (!ca || !cb)
        return cpu(shapes + " do not broadcast to " + out(m, n).shape_string());
    if (*ca + *cb > max_broadcast_copies)
        return cpu(shapes + ": the broadcast takes " + std::to_string(*ca + *cb) +
                   " copies, more than " + std::to_string(max_broadcast_copies));
    return card(op);
}

CardDecision softmax(const Model &m, const Node &n) {
    const std::size_t rank = in(m, n, 0).shape.size();
    const std::int64_t axis = n.get_int("axis", -1);
    if (axis != -1 && axis != std::int64_t(rank) - 1)
        return cpu("over axis " + std::to_string(axis) + " of " + std::to_string(rank) +
                   ": the card's runs over the last one");
    if (!float_data(in(m, n, 0)))
        return cpu(dtype_reason(in(m, n, 0)));
    return card(n.op == "Softmax" ? "softmax" : "log_softmax");
}

CardDecision layer_norm(const Model &m, const Node &n) {
    if (in(m, n, 0).dtype != tpumodel::DType::Float || !has(n, 2) || n.outputs.size() > 1)
        return cpu("the card's layer_norm takes float32 with scale and bias and gives one output "
                   "(no Mean or InvStdDev)");
    if (in(m, n, 0).layout != tpumodel::Layout::Plain)
        return cpu("a layer normalisation of an NHWC image");
    return card("layer_norm");
}

CardDecision reduce(const Model &m, const Node &n) {
    const Tensor &x = in(m, n, 0);
    if (has(n, 1) && !in(m, n, 1).constant)
        return cpu("axes computed at run time");
    const std::vector<bool> reduced =
        tpumodel::cpu::reduced_axes(n, x.shape.size(), has(n, 1) ? &in(m, n, 1) : nullptr);
    if (std::find(reduced.begin(), reduced.end(), true) == reduced.end())
        return card("view"); // no axis reduced (noop_with_empty_axes): the tensor itself
    if (!tpumodel::cpu::contiguous_run(x.shape, reduced))
        return cpu("axes that are not one run of neighbours: the card reduces the middle axis of "
                   "an [outer, length, inner] view");
    if (!float_data(x))
        return cpu(dtype_reason(x));
    return card(n.op == "ReduceMean" ? "mean" : "reduce_axis");
}

CardDecision view(const Model &m, const Node &n) {
    if (n.op == "Reshape" && !in(m, n, 1).constant)
        return cpu("a shape computed at run time");
    const bool flatten_of_image =
        in(m, n, 0).layout == tpumodel::Layout::Nhwc && (n.op == "Flatten" || n.op == "Reshape");
    if (in(m, n, 0).layout != tpumodel::Layout::Plain && !flatten_of_image)
        return cpu("a reshape of an NHWC image");
    return card("view");
}

CardDecision cast(const Model &m, const Node &n) {
    if (in(m, n, 0).dtype != out(m, n).dtype)
        return cpu(std::string("a cast from ") + tpumodel::dtype_name(in(m, n, 0).dtype) + " to " +
                   tpumodel::dtype_name(out(m, n).dtype) + ": the card's ops keep their dtypes");
    return card("view"); // to its own dtype: the same tensor
}

// Concat and Gather as slice_copy sequences: float data in ONNX's order; Gather's indices
// constant.
CardDecision copies(const Model &m, const Node &n) {
    for (std::size_t i = 0; i < (n.op == "Gather" ? 1 : n.inputs.size()); ++i) {
        if (!has(n, i) || in(m, n, i).layout != tpumodel::Layout::Plain)
            return cpu("an operand in the NHWC layout");
        if (!float_data(in(m, n, i)))
            return cpu(dtype_reason(in(m, n, i)));
        if (in(m, n, i).constant)
            return cpu("a constant operand: the card copies tensors it holds");
    }
    if (n.op == "Gather" && (!has(n, 1) || !in(m, n, 1).constant))
        return cpu("indices computed at run time: the card's copies are planned at load");
    return card("slice_copy");
}

// Slice as one slice_copy: float data in ONNX's order, constant starts, ends, axes and steps, one
// axis cut with step 1.
CardDecision slice(const Model &m, const Node &n) {
    const Tensor &x = in(m, n, 0);
    if (x.layout != tpumodel::Layout::Plain)
        return cpu("an operand in the NHWC layout");
    if (!float_data(x))
        return cpu(dtype_reason(x));
    if (x.constant)
        return cpu("a constant operand: the card copies tensors it holds");
    for (std::size_t i = 1; i < n.inputs.size(); ++i)
        if (has(n, i) && !in(m, n, i).constant)
            return cpu("starts, ends, axes or steps computed at run time");
    const auto input = [&](std::size_t i) { return has(n, i) ? &in(m, n, i) : nullptr; };
    try {
        const tpumodel::cpu::SliceSpan s =
            tpumodel::cpu::slice_span(n, x.shape, input(1), input(2), input(3), input(4));
        if (out(m, n).element_count() == 0)
            return cpu("an empty result");
        if (const tpumodel::cpu::OneAxisRun run = tpumodel::cpu::one_axis_run(s, x.shape);
            !run.why.empty())
            return cpu(run.why);
    } catch (const std::exception &e) {
        return cpu(e.what());
    }
    return card("slice_copy");
}

// Expand as slice_copy sequences (one per position along each broadcast axis): a constant
// shape, data the card holds in ONNX's order.
CardDecision expand(const Model &m, const Node &n) {
    const Tensor &x = in(m, n, 0);
    if (!has(n, 1) || !in(m, n, 1).constant)
        return cpu("a shape computed at run time: the card's copies are planned at load");
    if (x.layout != tpumodel::Layout::Plain)
        return cpu("an operand in the NHWC layout");
    if (x.constant)
        return cpu("a constant operand: the card copies tensors it holds");
    if (x.dtype == tpumodel::DType::Int64 || x.dtype == tpumodel::DType::Bool)
        return cpu(std::string(tpumodel::dtype_name(x.dtype)) + " data: the card holds none");
    if (x.element_count() == 0 || out(m, n).element_count() == 0)
        return cpu("an empty tensor");
    return card("slice_copy");
}
CardDecision transpose(const Model &m, const Node &n) {
    (void)m;
    (void)n;
    return card("permute");
}

const std::map<std::string, Rule> &rules() {
    static const std::map<std::string, Rule> r = {
        {"Conv", conv},
        {"MaxPool", pool},
        {"AveragePool", pool},
        {"GlobalAveragePool", global_pool},
        {"GlobalMaxPool", global_pool},
        {"Gemm", gemm},
        {"MatMul", matmul},
        {"Relu", unary},
        {"Sigmoid", unary},
        {"Tanh", unary},
        {"Exp", unary},
        {"Log", unary},
        {"Sqrt", unary},
        {"Reciprocal", unary},
        {"Erf", unary},
        {"Neg", unary},
        {"Abs", unary},
        {"Add", binary},
        {"Sub", binary},
        {"Mul", binary},
        {"Div", binary},
        {"Softmax", softmax},
        {"LogSoftmax", softmax},
        {"LayerNormalization", layer_norm},
        {"ReduceMean", reduce},
        {"ReduceSum", reduce},
        {"ReduceMax", reduce},
        {"Reshape", view},
        {"Flatten", view},
        {"Squeeze", view},
        {"Unsqueeze", view},
        {"Identity", view},
        {"Cast", cast},
        {"Concat", copies},
        {"Gather", copies},
        {"Slice", slice},
        {"Expand", expand},
        {"Transpose", transpose},
        {"QuantizeLinear", quantize_rule},
        {"DequantizeLinear", dequantize_rule},
        {"MatMulInteger", integer_matmul_rule},
        {"QLinearMatMul", integer_matmul_rule},
        {"ConvInteger", integer_conv_rule},
        {"QLinearConv", integer_conv_rule},
    };
    return r;
}

} // namespace

CardDecision card_decision(const Model &m, const Node &n) {
    const auto it = rules().find(n.op);
    if (it == rules().end())
        return cpu("no card op for " + n.op);
    for (const std::vector<std::uint32_t> *ids : {&n.inputs, &n.outputs})
        for (std::uint32_t id : *ids) {
            if (id == tpumodel::no_tensor || m.tensors[id].constant)
                continue;
            if (m.tensors[id].shape.empty())
                return cpu("a scalar tensor '" + m.tensors[id].name +
                           "': the card's tensors have 1 to 8 dimensions");
            if (m.tensors[id].element_count() == 0)
                return cpu("an empty tensor '" + m.tensors[id].name + "' " +
                           m.tensors[id].shape_string() +
                           ": the card's tensors have at least one element");
        }
    return it->second(m, n);
}

const std::vector<std::string> &card_ops() {
    static const std::vector<std::string> ops = {
        "conv2d_layer", "grouped_conv2d", "pool2d",  "mean",        "reduce_axis", "dense",
        "matmul",       "batched_matmul", "unary",   "elementwise", "divide",      "softmax",
        "log_softmax",  "layer_norm",     "permute", "slice_copy",  "conv2d"};
    return ops;
}

} // namespace tpu_onnx
