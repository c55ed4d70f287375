// SPDX-License-Identifier: MIT
// cpu_executor.cpp - a graph's forward and backward passes on the CPU in fp32, node by node
// through the ops' rules.
#include "tpu_nn/cpu_executor.hpp"

#include <algorithm>
#include <stdexcept>

namespace tpu_nn {

CpuExecutor::CpuExecutor(Graph graph, std::uint64_t seed)
    : graph_(std::move(graph)), values_(initial_values(graph_, seed)) {
    const Shape &out = graph_.node(graph_.output()).shape;
    if (out.size() != 1)
        throw std::invalid_argument("CpuExecutor: the output (the logits) must be a vector, not " +
                                    to_string(out));
    for (const std::vector<float> &v : values_)
        grads_.emplace_back(v.size(), 0.0f);
}

const std::vector<float> &CpuExecutor::forward(const float *x, std::size_t batch) {
    if (batch == 0)
        throw std::invalid_argument("CpuExecutor: an empty batch");
    batch_ = batch;
    const std::vector<Node> &nodes = graph_.nodes();
    acts_.resize(nodes.size());
    acts_[0].assign(x, x + batch * elements(nodes[0].shape));
    for (NodeId n = 1; n < nodes.size(); ++n) {
        const Node &node = nodes[n];
        std::vector<Shape> in_shapes;
        CpuCall c{node.attrs, batch, {}, node.shape, {}, {}, nullptr, nullptr, {}, {}};
        for (NodeId i : node.inputs) {
            in_shapes.push_back(nodes[i].shape);
            c.in.push_back(acts_[i].data());
        }
        c.in_shapes = in_shapes;
        for (std::size_t p : node.params)
            c.params.push_back(values_[p].data());
        acts_[n].resize(batch * elements(node.shape));
        c.out = acts_[n].data();
        op_rule(node.kind).forward(c);
    }
    return acts_[graph_.output()];
}

tpu_model::LossResult CpuExecutor::loss(const std::uint8_t *labels) const {
    if (acts_.empty())
        throw std::logic_error("CpuExecutor::loss: no forward pass");
    for (std::size_t i = 0; i < batch_; ++i)
        if (labels[i] >= classes())
            throw std::invalid_argument("CpuExecutor: label " + std::to_string(labels[i]) +
                                        " of row " + std::to_string(i) + " is not below the " +
                                        std::to_string(classes()) + " classes");
    return tpu_model::softmax_cross_entropy(acts_[graph_.output()], batch_, classes(), labels);
}

void CpuExecutor::backward(const std::vector<float> &dlogits) {
    const std::vector<Node> &nodes = graph_.nodes();
    if (acts_.size() != nodes.size())
        throw std::logic_error("CpuExecutor::backward: no forward pass");
    if (dlogits.size() != acts_[graph_.output()].size())
        throw std::invalid_argument("CpuExecutor::backward: " + std::to_string(dlogits.size()) +
                                    " gradients for " +
                                    std::to_string(acts_[graph_.output()].size()) + " logits");
    for (std::vector<float> &g : grads_)
        std::fill(g.begin(), g.end(), 0.0f);
    dacts_.resize(nodes.size());
    for (NodeId n = 0; n < nodes.size(); ++n)
        dacts_[n].assign(n == 0 ? 0 : acts_[n].size(), 0.0f);
    dacts_[graph_.output()] = dlogits;
    for (NodeId n = graph_.output(); n > 0; --n) {
        const Node &node = nodes[n];
        std::vector<Shape> in_shapes;
        CpuCall c{node.attrs,      batch_,           {}, node.shape, {}, {},
                  acts_[n].data(), dacts_[n].data(), {}, {}};
        for (NodeId i : node.inputs) {
            in_shapes.push_back(nodes[i].shape);
            c.in.push_back(acts_[i].data());
            c.din.push_back(i == 0 ? nullptr : dacts_[i].data());
        }
        c.in_shapes = in_shapes;
        for (std::size_t p : node.params) {
            c.params.push_back(values_[p].data());
            c.dparams.push_back(grads_[p].data());
        }
        op_rule(node.kind).vjp(c);
    }
}

std::vector<tpu_model::Param> CpuExecutor::params() {
    std::vector<tpu_model::Param> p;
    for (std::size_t i = 0; i < values_.size(); ++i)
        p.push_back({graph_.param_key(i), &values_[i], &grads_[i]});
    return p;
}

} // namespace tpu_nn
