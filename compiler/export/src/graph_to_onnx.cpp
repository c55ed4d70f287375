// SPDX-License-Identifier: MIT
// graph_to_onnx.cpp - any tpu_nn graph with its parameter values and input standardisation as
// an ONNX graph at opset 17, node by node (export.hpp). Images are NHWC in the stack and NCHW
// in ONNX: convolution weights are reordered HWIO -> OIHW, a layer norm of an image runs
// between two Transposes (it normalises the channels, ONNX's last axis is the width), and a
// flatten read only by dense layers stays a Flatten in (c, h, w) order with those layers' rows
// reordered to match; a flatten read by anything else gets a Transpose to (h, w, c) first.
#include "tpu_export/export.hpp"

#include <tpu_onnx/builder.hpp>

#include <algorithm>

namespace tpu_export {

namespace {

using tpu_onnx::Dim;
using tpu_onnx::ModelBuilder;
using Ints = std::vector<std::int64_t>;

// gelu's tanh form as tpu_nn computes it: x * sigmoid(k * (x + a * x * x * x)).
constexpr float gelu_k = 1.5957691216057308f; // 2 sqrt(2 / pi)
constexpr float gelu_a = 0.044715f;

// A node's output in the ONNX graph: its tensor's name and, for a flatten of an image left in
// ONNX's (c, h, w) order (only dense layers read one: flatten() sees to it), the image's shape
// (H x W x C).
struct Value {
    std::string name;
    tpu_nn::Shape chw_of;
};

class Exporter {
  public:
    Exporter(const tpu_nn::Graph &g, const tpu_nn::ParamValues &values, ModelBuilder &b)
        : g_(g), values_(values), b_(b), out_(g.nodes().size()) {}

    void run(const std::string &normalised) {
        out_[0] = {normalised, {}};
        for (tpu_nn::NodeId n = 1; n < g_.nodes().size(); ++n)
            out_[n] = node(n);
    }

  private:
    // The name of node n's (last) ONNX output: "logits" for the graph's output.
    std::string result(tpu_nn::NodeId n, const std::string &name) const {
        return n == g_.output() ? "logits" : name;
    }
    std::string label(tpu_nn::NodeId n) const {
        const tpu_nn::Node &node = g_.node(n);
        return node.name.empty() ? std::string(tpu_nn::op_rule(node.kind).name) + std::to_string(n)
                                 : node.name;
    }
    const tpu_nn::Shape &in_shape(const tpu_nn::Node &node, std::size_t i = 0) const {
        return g_.node(node.inputs[i]).shape;
    }
    const std::vector<float> &param(const tpu_nn::Node &node, std::size_t i) const {
        return values_.at(node.params.at(i));
    }
    std::string scalar(const std::string &name, float v) {
        b_.floats(name, {}, {v});
        return name;
    }
    std::string op(const std::string &kind, const std::vector<std::string> &in,
                   const std::string &out,
                   const std::vector<std::pair<std::string, tpu_onnx::AttrValue>> &attrs = {}) {
        b_.node(kind, in, {out}, out, attrs);
        return out;
    }

    Value node(tpu_nn::NodeId n) {
        const tpu_nn::Node &node = g_.node(n);
        const std::string p = label(n), y = result(n, p);
        const Value &x = out_[node.inputs.at(0)];
        switch (node.kind) {
        case tpu_nn::OpKind::Dense:
            return {dense(node, x, p, y), {}};
        case tpu_nn::OpKind::Conv2d:
            return {conv(node, x.name, p, y), {}};
        case tpu_nn::OpKind::Pool:
            return {pool(node, x.name, y), {}};
        case tpu_nn::OpKind::Flatten:
            return flatten(n, node, x.name, y);
        case tpu_nn::OpKind::Activation:
            return {activation(node.attrs.act, x.name, y), {}};
        case tpu_nn::OpKind::LayerNorm:
            return {layer_norm(node, x.name, p, y), {}};
        case tpu_nn::OpKind::Add:
            return {op("Add", {x.name, out_[node.inputs.at(1)].name}, y), {}};
        case tpu_nn::OpKind::Input:
            break;
        }
        throw ExportError("node " + p + ": a second input node");
    }

    // Gemm, weights [in, out]; the rows of a flatten's (h, w, c) order put in ONNX's (c, h, w).
    std::string dense(const tpu_nn::Node &node, const Value &x, const std::string &p,
                      const std::string &y) {
        const std::vector<float> &w = param(node, 0);
        const std::size_t units = node.attrs.units, in = w.size() / units;
        std::vector<float> rows = w;
        if (!x.chw_of.empty()) {
            const std::size_t h = x.chw_of[0], wd = x.chw_of[1], c = x.chw_of[2];
            for (std::size_t i = 0; i < h; ++i)
                for (std::size_t j = 0; j < wd; ++j)
                    for (std::size_t k = 0; k < c; ++k)
                        std::copy_n(w.begin() + ((i * wd + j) * c + k) * units, units,
                                    rows.begin() + ((k * h + i) * wd + j) * units);
        }
        b_.floats(p + ".w", {std::int64_t(in), std::int64_t(units)}, rows);
        b_.floats(p + ".b", {std::int64_t(units)}, param(node, 1));
        return op("Gemm", {x.name, p + ".w", p + ".b"}, y);
    }

    // Conv, weights HWIO [KH, KW, C / G, F] -> OIHW [F, C / G, KH, KW].
    std::string conv(const tpu_nn::Node &node, const std::string &x, const std::string &p,
                     const std::string &y) {
        const tpu_nn::Window &k = node.attrs.window;
        const std::size_t f = node.attrs.units, cg = in_shape(node)[2] / node.attrs.groups;
        const std::vector<float> &hwio = param(node, 0);
        std::vector<float> oihw(hwio.size());
        for (std::size_t i = 0; i < k.kh; ++i)
            for (std::size_t j = 0; j < k.kw; ++j)
                for (std::size_t c = 0; c < cg; ++c)
                    for (std::size_t o = 0; o < f; ++o)
                        oihw[((o * cg + c) * k.kh + i) * k.kw + j] =
                            hwio[((i * k.kw + j) * cg + c) * f + o];
        b_.floats(p + ".w",
                  {std::int64_t(f), std::int64_t(cg), std::int64_t(k.kh), std::int64_t(k.kw)},
                  oihw);
        b_.floats(p + ".b", {std::int64_t(f)}, param(node, 1));
        return op("Conv", {x, p + ".w", p + ".b"}, y,
                  {{"kernel_shape", Ints{std::int64_t(k.kh), std::int64_t(k.kw)}},
                   {"pads", Ints{std::int64_t(k.ph), std::int64_t(k.pw), std::int64_t(k.ph),
                                 std::int64_t(k.pw)}},
                   {"strides", Ints{std::int64_t(k.sh), std::int64_t(k.sw)}},
                   {"group", std::int64_t(node.attrs.groups)}});
    }

    std::string pool(const tpu_nn::Node &node, const std::string &x, const std::string &y) {
        const tpu_nn::Window &k = node.attrs.window;
        std::vector<std::pair<std::string, tpu_onnx::AttrValue>> attrs{
            {"kernel_shape", Ints{std::int64_t(k.kh), std::int64_t(k.kw)}},
            {"pads",
             Ints{std::int64_t(k.ph), std::int64_t(k.pw), std::int64_t(k.ph), std::int64_t(k.pw)}},
            {"strides", Ints{std::int64_t(k.sh), std::int64_t(k.sw)}}};
        if (node.attrs.pool == tpu_nn::PoolKind::Max)
            return op("MaxPool", {x}, y, attrs);
        attrs.emplace_back("count_include_pad", std::int64_t(1)); // tpu_nn divides by the window
        return op("AveragePool", {x}, y, attrs);
    }

    // A flatten of an image read only by dense layers: Flatten in (c, h, w) order (their rows
    // follow); else Transpose to NHWC first, so the vector is in the stack's order.
    Value flatten(tpu_nn::NodeId n, const tpu_nn::Node &node, const std::string &x,
                  const std::string &y) {
        const tpu_nn::Shape &s = in_shape(node);
        if (s.size() != 3)
            return {op("Flatten", {x}, y, {{"axis", std::int64_t(1)}}), {}};
        bool dense_only = n != g_.output();
        for (const tpu_nn::Node &other : g_.nodes())
            if (std::count(other.inputs.begin(), other.inputs.end(), n) &&
                other.kind != tpu_nn::OpKind::Dense)
                dense_only = false;
        if (dense_only)
            return {op("Flatten", {x}, y, {{"axis", std::int64_t(1)}}), s};
        const std::string t = op("Transpose", {x}, y + ".nhwc", {{"perm", Ints{0, 2, 3, 1}}});
        return {op("Flatten", {t}, y, {{"axis", std::int64_t(1)}}), {}};
    }

    std::string activation(tpu_nn::Act a, const std::string &x, const std::string &y) {
        switch (a) {
        case tpu_nn::Act::Relu:
            return op("Relu", {x}, y);
        case tpu_nn::Act::Sigmoid:
            return op("Sigmoid", {x}, y);
        case tpu_nn::Act::Tanh:
            return op("Tanh", {x}, y);
        case tpu_nn::Act::Gelu:
            break;
        }
        // ((a x) x) x, then x + that, times k, its sigmoid, times x: tpu_nn's order.
        const std::string ax = op("Mul", {x, scalar(y + ".a", gelu_a)}, y + ".ax");
        const std::string ax2 = op("Mul", {ax, x}, y + ".ax2");
        const std::string ax3 = op("Mul", {ax2, x}, y + ".ax3");
        const std::string inner = op("Add", {x, ax3}, y + ".inner");
        const std::string scaled = op("Mul", {inner, scalar(y + ".k", gelu_k)}, y + ".scaled");
        const std::string s = op("Sigmoid", {scaled}, y + ".sigmoid");
        return op("Mul", {x, s}, y);
    }

    // LayerNormalization over the last axis: an image's channels, between Transposes.
    std::string layer_norm(const tpu_nn::Node &node, const std::string &x, const std::string &p,
                           const std::string &y) {
        const std::int64_t c = std::int64_t(in_shape(node).back());
        b_.floats(p + ".g", {c}, param(node, 0));
        b_.floats(p + ".b", {c}, param(node, 1));
        const std::vector<std::pair<std::string, tpu_onnx::AttrValue>> attrs{
            {"axis", std::int64_t(-1)}, {"epsilon", node.attrs.eps}};
        if (in_shape(node).size() != 3)
            return op("LayerNormalization", {x, p + ".g", p + ".b"}, y, attrs);
        const std::string t = op("Transpose", {x}, p + ".nhwc", {{"perm", Ints{0, 2, 3, 1}}});
        const std::string n = op("LayerNormalization", {t, p + ".g", p + ".b"}, p + ".norm", attrs);
        return op("Transpose", {n}, y, {{"perm", Ints{0, 3, 1, 2}}});
    }

    const tpu_nn::Graph &g_;
    const tpu_nn::ParamValues &values_;
    ModelBuilder &b_;
    std::vector<Value> out_;
};

} // namespace

onnx::ModelProto graph_to_onnx(const tpu_nn::Graph &g, const tpu_nn::ParamValues &values,
                               const tpu_infer::InputTransform &input,
                               const ExportOptions &options) {
    if (values.size() != g.params().size())
        throw ExportError(g.name() + ": " + std::to_string(values.size()) +
                          " parameter values for " + std::to_string(g.params().size()) +
                          " parameters");
    const tpu_nn::Shape &out = g.node(g.output()).shape;
    if (out.size() != 1)
        throw ExportError(g.name() + ": the output is " + tpu_nn::to_string(out) +
                          ", not a vector of logits");
    const Dim batch = options.batch > 0 ? Dim(options.batch) : Dim(std::string("batch"));
    const tpu_nn::Shape &s = g.node(g.input()).shape;
    std::vector<Dim> dims{batch};
    if (s.size() == 3) // H x W x C as ONNX's [C, H, W]
        dims.insert(dims.end(), {std::int64_t(s[2]), std::int64_t(s[0]), std::int64_t(s[1])});
    else
        for (std::size_t d : s)
            dims.emplace_back(std::int64_t(d));

    ModelBuilder b(export_opset, "tpu-export", g.name());
    auto *meta = b.proto().add_metadata_props();
    meta->set_key("tpu.model");
    meta->set_value(g.name());
    b.proto().set_doc_string("exported by tpu-export from the checkpoint of " + g.name());
    b.input("input", dims);
    // (x - mean) / stddev, as tpu_infer::InputTransform::apply computes it.
    b.floats("input.mean", {}, {input.mean});
    b.floats("input.stddev", {}, {input.stddev});
    b.node("Sub", {"input", "input.mean"}, {"centred"}, "normalise.sub");
    b.node("Div", {"centred", "input.stddev"}, {"normalised"}, "normalise.div");
    Exporter(g, values, b).run("normalised");
    b.output("logits", {batch, std::int64_t(out[0])});
    return b.proto();
}

} // namespace tpu_export
