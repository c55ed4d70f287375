// SPDX-License-Identifier: MIT
// graph.hpp - a model as a graph: a DAG of op nodes (op.hpp) from one input to one output (the
// logits), each node added after its inputs, with its named parameters. Every add infers the
// node's output shape from its inputs' and throws std::invalid_argument naming the node and
// what does not fit ("conv2d conv1: a 5x5 kernel does not fit the 2x2x8 input padded by 0"). The
// parameters are listed in the order their nodes were added, named <node name>.<suffix>
// (conv0.w, conv0.b, layer0.w, ln0.g, ln0.b: the checkpoint names of workloads/README.md).
//
//     tpu_nn::Graph g({28, 28, 1});
//     auto c = g.conv2d(g.input(), "conv0", 16, {.kh = 5, .kw = 5, .ph = 2, .pw = 2});
//     auto r = g.activation(c, tpu_nn::Act::Relu);
//     auto p = g.pool(r, tpu_nn::PoolKind::Max, {.kh = 2, .kw = 2, .sh = 2, .sw = 2});
//     g.dense(g.flatten(p), "layer0", 10);                  // the last node is the output
#pragma once

#include "tpu_nn/op.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace tpu_nn {

using NodeId = std::size_t;

struct Node {
    OpKind kind = OpKind::Input;
    Attrs attrs;
    std::string name; // the parameters' prefix; empty for ops without parameters
    std::vector<NodeId> inputs;
    std::vector<std::size_t> params; // indices into Graph::params()
    Shape shape;                     // of the output, per sample
};

struct ParamInfo {
    std::string name; // "conv0.w"
    Shape shape;
    Init init = Init::Zeros;
    std::size_t fan_in = 0;
    NodeId node = 0;
};

class Graph {
  public:
    explicit Graph(Shape input); // node 0, the input: H x W x C or [F]

    NodeId input() const { return 0; }
    // The generic add: `name` prefixes the parameters (required iff the op has some).
    NodeId add(OpKind kind, const Attrs &attrs, std::vector<NodeId> inputs, std::string name = {});

    NodeId dense(NodeId x, std::string name, std::size_t units);
    NodeId conv2d(NodeId x, std::string name, std::size_t filters, const Window &kernel,
                  std::size_t groups = 1);
    NodeId pool(NodeId x, PoolKind kind, const Window &window);
    NodeId flatten(NodeId x);
    NodeId activation(NodeId x, Act a);
    NodeId layer_norm(NodeId x, std::string name, float eps = 1e-5f);
    NodeId add_nodes(NodeId a, NodeId b); // residual add

    // The output is the last node added unless set.
    void set_output(NodeId n);
    NodeId output() const { return output_set_ ? output_ : nodes_.size() - 1; }

    const std::vector<Node> &nodes() const { return nodes_; }
    const Node &node(NodeId n) const { return nodes_.at(n); }
    const std::vector<ParamInfo> &params() const { return params_; }
    std::size_t param_count() const; // elements of all parameters
    // Parameter i's key in the optimisers' state (tpu_model/optimizer.hpp): "." + its name
    // (".conv0.w", state "adam.m.conv0.w" as the CPU CNN's), but "<j>.w|b" for an mlp spec's
    // layer<j> ("sgd.v0.w", the CPU MLP's).
    std::string param_key(std::size_t i) const;
    // How many nodes read node n's output.
    std::size_t consumers(NodeId n) const;

    // The model's name in checkpoints: the spec it was parsed from (spec.hpp), or empty.
    const std::string &name() const { return name_; }
    void set_name(std::string n) { name_ = std::move(n); }

  private:
    std::vector<Node> nodes_;
    std::vector<ParamInfo> params_;
    NodeId output_ = 0;
    bool output_set_ = false;
    std::string name_;
};

} // namespace tpu_nn
