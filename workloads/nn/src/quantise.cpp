// SPDX-License-Identifier: MIT
// quantise.cpp - per-channel weight scales, calibration over the fp32 executor's activations,
// the int8 layers of a graph, their requantisation constants and checkpoint tensors.
#include "tpu_nn/quantise.hpp"

#include <tpu_data/error.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tpu_nn {

std::vector<float> channel_scales(const std::vector<float> &w, std::size_t rows, std::size_t out) {
    if (w.size() != rows * out)
        throw std::invalid_argument("channel_scales: weights are not rows x out");
    std::vector<float> max_abs(out, 0.0f);
    for (std::size_t k = 0; k < rows; ++k)
        for (std::size_t n = 0; n < out; ++n)
            max_abs[n] = std::max(max_abs[n], std::fabs(w[k * out + n]));
    std::vector<float> scales(out);
    std::transform(max_abs.begin(), max_abs.end(), scales.begin(), activation_scale);
    return scales;
}

std::vector<std::int8_t> quantise_weights(const std::vector<float> &w, std::size_t rows,
                                          std::size_t out, const std::vector<float> &scales) {
    if (w.size() != rows * out || scales.size() != out)
        throw std::invalid_argument("quantise_weights: weights are not rows x out");
    std::vector<std::int8_t> q(w.size());
    for (std::size_t k = 0; k < rows; ++k)
        for (std::size_t n = 0; n < out; ++n) {
            const float r = std::nearbyint(w[k * out + n] / scales[n]);
            q[k * out + n] = static_cast<std::int8_t>(std::clamp(r, -127.0f, 127.0f));
        }
    return q;
}

float activation_scale(float max_abs) {
    if (!std::isfinite(max_abs))
        throw std::invalid_argument("activation_scale: the range is not finite");
    return max_abs > 0 ? max_abs / 127.0f : 1.0f;
}

namespace {

std::vector<NodeId> layer_nodes(const Graph &g) {
    std::vector<NodeId> nodes;
    for (NodeId n = 1; n < g.nodes().size(); ++n)
        if (!g.node(n).params.empty())
            nodes.push_back(n);
    return nodes;
}

std::string node_name(const Graph &g, NodeId n) {
    const Node &node = g.node(n);
    return std::string(op_rule(node.kind).name) + " " +
           (node.name.empty() ? "(node " + std::to_string(n) + ")" : node.name);
}

// The one node that reads n, or 0.
NodeId reader(const Graph &g, NodeId n) {
    if (g.consumers(n) != 1)
        return 0;
    for (NodeId r = n + 1; r < g.nodes().size(); ++r)
        if (std::find(g.node(r).inputs.begin(), g.node(r).inputs.end(), n) !=
            g.node(r).inputs.end())
            return r;
    return 0;
}

bool commutes_with_scale(const Node &n) {
    return (n.kind == OpKind::Activation && n.attrs.act == Act::Relu) ||
           (n.kind == OpKind::Pool && n.attrs.pool == PoolKind::Max) || n.kind == OpKind::Flatten;
}

} // namespace

Calibration calibrate(CpuExecutor &net, const float *x, std::size_t count) {
    if (count == 0)
        throw std::invalid_argument("calibrate: no calibration samples");
    const Graph &g = net.graph();
    const std::vector<NodeId> layers = layer_nodes(g);
    const std::size_t features = elements(g.node(0).shape);
    Calibration cal{std::vector<float>(layers.size(), 0.0f), count};
    constexpr std::size_t chunk = 256;
    for (std::size_t r = 0; r < count; r += chunk) {
        const std::size_t m = std::min(chunk, count - r);
        net.forward(x + r * features, m);
        for (std::size_t i = 0; i < layers.size(); ++i)
            for (float v : net.activation(g.node(layers[i]).inputs[0]))
                cal.max_abs[i] = std::max(cal.max_abs[i], std::fabs(v));
    }
    return cal;
}

Quantised quantise(const Graph &g, const ParamValues &values, const Calibration &cal) {
    const std::vector<NodeId> layers = layer_nodes(g);
    if (cal.max_abs.size() != layers.size())
        throw std::invalid_argument("quantise: the calibration is for another graph");
    Quantised q{{}, cal.samples};
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const Node &node = g.node(layers[i]);
        if (node.kind != OpKind::Dense && node.kind != OpKind::Conv2d)
            throw std::invalid_argument("int8: " + node_name(g, layers[i]) +
                                        " has parameters but is no dense layer or convolution");
        const std::vector<float> &w = values.at(node.params[0]);
        const std::size_t out = g.params()[node.params[0]].shape.back(), rows = w.size() / out;
        Int8Layer l{layers[i], activation_scale(cal.max_abs[i]), {}, {}, values.at(node.params[1])};
        l.w_scale = channel_scales(w, rows, out);
        l.wq = quantise_weights(w, rows, out, l.w_scale);
        q.layers.push_back(std::move(l));
    }
    int8_constants(g, q); // the graph's checks
    return q;
}

Int8LayerConstants requantisation(float x_scale, const std::vector<float> &w_scale,
                                  const std::vector<float> &b, std::optional<float> next_x_scale) {
    Int8LayerConstants k;
    k.bias.resize(b.size());
    k.mult.resize(b.size());
    for (std::size_t n = 0; n < b.size(); ++n) {
        const float s = x_scale * w_scale[n];
        k.bias[n] = b[n] / s;
        k.mult[n] = next_x_scale ? s / *next_x_scale : s;
    }
    return k;
}

std::vector<Int8LayerConstants> int8_constants(const Graph &g, const Quantised &q) {
    if (q.layers.empty() || layer_nodes(g).size() != q.layers.size())
        throw std::invalid_argument("int8: the quantised layers are not this graph's");
    std::vector<std::optional<std::size_t>> layer_of(g.nodes().size());
    for (std::size_t i = 0; i < q.layers.size(); ++i)
        layer_of.at(q.layers[i].node) = i;
    for (NodeId n = 0;;) { // the input reaches the first layer through flattens alone
        const NodeId r = reader(g, n);
        if (r != 0 && layer_of[r] && *layer_of[r] == 0)
            break;
        if (r == 0 || g.node(r).kind != OpKind::Flatten)
            throw std::invalid_argument("int8: the input must reach the first layer, " +
                                        node_name(g, q.layers[0].node) +
                                        ", alone (through flattens only)");
        n = r;
    }
    std::vector<Int8LayerConstants> k;
    for (const Int8Layer &l : q.layers) {
        std::optional<float> next;
        for (NodeId n = l.node; n != g.output();) {
            const NodeId r = reader(g, n);
            if (r != 0 && layer_of[r] && g.node(r).inputs[0] == n) {
                next = q.layers[*layer_of[r]].x_scale;
                break;
            }
            if (r == 0 || !commutes_with_scale(g.node(r)))
                throw std::invalid_argument(
                    "int8: " +
                    (r == 0 ? node_name(g, n) + " is read by several nodes"
                            : node_name(g, r) + " follows an int8 layer") +
                    "; only ReLU, max pooling and flatten may come between int8 layers");
            n = r;
        }
        k.push_back(requantisation(l.x_scale, l.w_scale, l.b, next));
    }
    return k;
}

std::int8_t quantise_value(float x, float inv_scale) {
    const float r = std::nearbyint(x * inv_scale);
    if (std::isnan(r))
        return 0;
    return static_cast<std::int8_t>(std::clamp(r, -127.0f, 127.0f));
}

std::int8_t convert_int8(float x) {
    if (std::isnan(x))
        return 0;
    return static_cast<std::int8_t>(std::clamp(std::nearbyint(x), -128.0f, 127.0f));
}

namespace {

const tpu_model::NamedTensor &tensor(const tpu_model::Checkpoint &c, const std::string &path,
                                     const std::string &name, const Shape &shape) {
    const tpu_model::NamedTensor *t = c.find(name);
    if (t == nullptr)
        throw tpu_data::DataError(path, "has no tensor " + name);
    if (t->shape != std::vector<std::uint32_t>(shape.begin(), shape.end()))
        throw tpu_data::DataError(path, "tensor " + name + " is not " + to_string(shape));
    return *t;
}

std::vector<float> scales(const tpu_model::Checkpoint &c, const std::string &path,
                          const std::string &name, std::size_t n) {
    std::vector<float> s = tensor(c, path, name, {n}).data;
    for (float v : s)
        if (!(v > 0) || !std::isfinite(v))
            throw tpu_data::DataError(path,
                                      "tensor " + name + " holds a scale that is not positive");
    return s;
}

} // namespace

void save_quantised(const Graph &g, const Quantised &q, tpu_model::Checkpoint &c) {
    c.notes[quantisation_note] = quantisation_int8_v1;
    c.notes["calibration.samples"] = std::to_string(q.calibration_samples);
    for (const Int8Layer &l : q.layers) {
        const Node &node = g.node(l.node);
        const Shape &shape = g.params()[node.params[0]].shape;
        const auto out = std::uint32_t(shape.back());
        c.tensors.push_back(
            {node.name + ".wq", {shape.begin(), shape.end()}, {l.wq.begin(), l.wq.end()}});
        c.tensors.push_back({node.name + ".wscale", {out}, l.w_scale});
        c.tensors.push_back({node.name + ".b", {out}, l.b});
        c.tensors.push_back({node.name + ".xscale", {1}, {l.x_scale}});
    }
}

Quantised load_quantised(const Graph &g, const tpu_model::Checkpoint &c, const std::string &path) {
    const auto note = c.notes.find(quantisation_note);
    if (note == c.notes.end() || note->second != quantisation_int8_v1)
        throw tpu_data::DataError(path, std::string("is not a quantised checkpoint (note ") +
                                            quantisation_note + " = " + quantisation_int8_v1 + ")");
    Quantised q;
    const auto samples = c.notes.find("calibration.samples");
    if (samples != c.notes.end())
        q.calibration_samples = std::strtoull(samples->second.c_str(), nullptr, 10);
    for (NodeId n : layer_nodes(g)) {
        const Node &node = g.node(n);
        const Shape &shape = g.params()[node.params[0]].shape;
        const std::size_t out = shape.back();
        Int8Layer l{n, 1.0f, {}, {}, {}};
        for (float v : tensor(c, path, node.name + ".wq", shape).data) {
            if (!(v >= -127 && v <= 127) || v != std::nearbyint(v))
                throw tpu_data::DataError(path, "tensor " + node.name + ".wq holds " +
                                                    std::to_string(v) +
                                                    ", not an integer in -127..127");
            l.wq.push_back(static_cast<std::int8_t>(v));
        }
        l.w_scale = scales(c, path, node.name + ".wscale", out);
        l.b = tensor(c, path, node.name + ".b", {out}).data;
        l.x_scale = scales(c, path, node.name + ".xscale", 1)[0];
        q.layers.push_back(std::move(l));
    }
    try {
        int8_constants(g, q);
    } catch (const std::invalid_argument &e) {
        throw tpu_data::DataError(path, e.what());
    }
    return q;
}

} // namespace tpu_nn
