// SPDX-License-Identifier: MIT
// graph.cpp - building a model graph: each node's shape from its op's rule, its parameters
// declared and named, and errors that name the node.
#include "tpu_nn/graph.hpp"

#include <algorithm>
#include <stdexcept>

namespace tpu_nn {

Graph::Graph(Shape input) {
    if (input.empty() || elements(input) == 0 || (input.size() != 1 && input.size() != 3))
        throw std::invalid_argument("graph: the input must be an image HxWxC or a vector of "
                                    "features, with no zero size, not " +
                                    to_string(input));
    nodes_.push_back(Node{OpKind::Input, {}, "input", {}, {}, std::move(input)});
}

NodeId Graph::add(OpKind kind, const Attrs &attrs, std::vector<NodeId> inputs, std::string name) {
    const OpRule &rule = op_rule(kind);
    const std::string what = std::string(rule.name) + (name.empty() ? "" : " " + name);
    if (kind == OpKind::Input)
        throw std::invalid_argument("graph: a graph has one input, node 0");
    if (inputs.size() != rule.arity)
        throw std::invalid_argument(what + ": takes " + std::to_string(rule.arity) +
                                    " input(s), not " + std::to_string(inputs.size()));
    std::vector<Shape> in;
    for (NodeId i : inputs) {
        if (i >= nodes_.size())
            throw std::invalid_argument(what + ": input node " + std::to_string(i) +
                                        " does not exist (the graph has " +
                                        std::to_string(nodes_.size()) + ")");
        in.push_back(nodes_[i].shape);
    }
    Node n{kind, attrs, std::move(name), std::move(inputs), {}, {}};
    try {
        n.shape = rule.infer(attrs, in);
    } catch (const std::invalid_argument &e) {
        throw std::invalid_argument(what + ": " + e.what());
    }
    const std::vector<ParamSlot> slots = rule.params(attrs, in);
    if (!slots.empty() && n.name.empty())
        throw std::invalid_argument(what + ": an op with parameters needs a name");
    for (const ParamSlot &s : slots) {
        const std::string pname = n.name + "." + s.suffix;
        if (std::any_of(params_.begin(), params_.end(),
                        [&](const ParamInfo &p) { return p.name == pname; }))
            throw std::invalid_argument(what + ": a parameter " + pname + " exists already");
        n.params.push_back(params_.size());
        params_.push_back(ParamInfo{pname, s.shape, s.init, s.fan_in, nodes_.size()});
    }
    nodes_.push_back(std::move(n));
    return nodes_.size() - 1;
}

NodeId Graph::dense(NodeId x, std::string name, std::size_t units) {
    Attrs a;
    a.units = units;
    return add(OpKind::Dense, a, {x}, std::move(name));
}

NodeId Graph::conv2d(NodeId x, std::string name, std::size_t filters, const Window &kernel,
                     std::size_t groups) {
    return add(OpKind::Conv2d, Attrs{.units = filters, .window = kernel, .groups = groups}, {x},
               std::move(name));
}

NodeId Graph::pool(NodeId x, PoolKind kind, const Window &window) {
    return add(OpKind::Pool, Attrs{.window = window, .pool = kind}, {x});
}

NodeId Graph::flatten(NodeId x) {
    return add(OpKind::Flatten, {}, {x});
}

NodeId Graph::activation(NodeId x, Act act) {
    Attrs a;
    a.act = act;
    return add(OpKind::Activation, a, {x});
}

NodeId Graph::layer_norm(NodeId x, std::string name, float eps) {
    Attrs a;
    a.eps = eps;
    return add(OpKind::LayerNorm, a, {x}, std::move(name));
}

NodeId Graph::add_nodes(NodeId a, NodeId b) {
    return add(OpKind::Add, {}, {a, b});
}

void Graph::set_output(NodeId n) {
    if (n >= nodes_.size())
        throw std::invalid_argument("graph: output node " + std::to_string(n) + " does not exist");
    output_ = n;
    output_set_ = true;
}

std::size_t Graph::param_count() const {
    std::size_t total = 0;
    for (const ParamInfo &p : params_)
        total += elements(p.shape);
    return total;
}

std::string Graph::param_key(std::size_t i) const {
    const std::string &n = params_.at(i).name;
    if (name_.rfind("mlp-", 0) == 0 && n.rfind("layer", 0) == 0)
        return n.substr(5);
    return "." + n;
}

std::size_t Graph::consumers(NodeId n) const {
    std::size_t count = 0;
    for (const Node &node : nodes_)
        count += std::count(node.inputs.begin(), node.inputs.end(), n);
    return count;
}

} // namespace tpu_nn
