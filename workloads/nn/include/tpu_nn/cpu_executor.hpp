// SPDX-License-Identifier: MIT
// cpu_executor.hpp - one fp32 CPU executor for any graph (graph.hpp): forward runs the nodes in
// order with their ops' forward rules, keeping every node's output; backward runs their
// vector-Jacobian rules in reverse order from the gradient of the logits, summing the
// gradients of a node read twice (a residual's input). Nothing is written per model. Its
// params() are tpu_model::Param (keys Graph::param_key), so the CPU optimisers
// (tpu_model/optimizer.hpp) step them.
#pragma once

#include "tpu_nn/graph.hpp"
#include "tpu_nn/params.hpp"

#include <tpu_model/loss.hpp>
#include <tpu_model/optimizer.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tpu_nn {

class CpuExecutor {
  public:
    // Parameters from initial_values(graph, seed).
    CpuExecutor(Graph graph, std::uint64_t seed);

    // Logits (batch x classes) of images / feature rows x (batch x the input shape).
    const std::vector<float> &forward(const float *x, std::size_t batch);
    // The mean softmax cross-entropy of the last forward's logits against `labels` (one per
    // row, below the classes), with the gradient of the logits (tpu_model's).
    tpu_model::LossResult loss(const std::uint8_t *labels) const;
    // Every parameter's gradient from dlogits, after forward() on the same batch.
    void backward(const std::vector<float> &dlogits);

    std::vector<tpu_model::Param> params();
    // The parameters as checkpoint tensors (params.hpp); load checks every name and shape.
    void save(tpu_model::Checkpoint &c) const { save_params(graph_, values_, c); }
    void load(const tpu_model::Checkpoint &c) { values_ = load_params(graph_, c); }
    const Graph &graph() const { return graph_; }
    ParamValues &values() { return values_; }
    const ParamValues &values() const { return values_; }
    const ParamValues &grads() const { return grads_; }
    // Node n's output in the last forward pass (batch first).
    const std::vector<float> &activation(NodeId n) const { return acts_.at(n); }
    std::size_t classes() const { return graph_.node(graph_.output()).shape.at(0); }

  private:
    Graph graph_;
    ParamValues values_, grads_;
    std::size_t batch_ = 0;
    std::vector<std::vector<float>> acts_, dacts_; // per node, batch first
};

} // namespace tpu_nn
