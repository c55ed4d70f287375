// SPDX-License-Identifier: MIT
// card_trainer.hpp - any graph (graph.hpp) trained on the card, fp32: its nodes' forward and
// vjp lowerings (card_lowering.hpp) queued in order on the model's stream, the fused softmax
// cross-entropy between them, and the optimiser's update of every parameter at once
// (tpu_train::CardParams: one flat buffer per kind of tensor, one sgd_momentum_step or
// adam_step job, the CPU optimisers' state names in checkpoints). A node read by several
// (a residual's input) has its gradient written by the last of them and the others' added to
// it. step() captures the step once per batch size (a tpurt::Graph) and replays it behind the
// copies of the batch in, unless OptimizerConfig::captured is false.
#pragma once

#include "tpu_nn/graph.hpp"
#include "tpu_nn/params.hpp"

#include <card_params.hpp>
#include <tpurt/tpurt.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace tpu_nn {

class CardTrainer {
  public:
    // Puts `values` (the graph's parameters) on the card with zero optimiser state. Throws
    // std::invalid_argument naming the first node the card cannot train.
    CardTrainer(tpurt::Device &device, const Graph &graph, const ParamValues &values,
                const tpu_train::OptimizerConfig &opt);

    // Forward, loss and backward of one batch (x: batch x the input shape, labels: batch),
    // leaving the gradients on the card; step() adds the optimiser's update.
    tpu_train::StepResult forward_backward(const float *x, const std::uint8_t *labels,
                                           std::size_t batch);
    tpu_train::StepResult step(const float *x, const std::uint8_t *labels, std::size_t batch);
    // The logits (batch x classes) of the forward pass alone.
    std::vector<float> logits(const float *x, std::size_t batch);

    // The gradients of the last backward pass and the current weights, in Graph::params()
    // order (read back after the stream's work).
    ParamValues gradients();
    ParamValues values();

    void set_lr(float lr) { params_.set_lr(lr); }
    std::uint64_t steps() const { return params_.steps(); }
    void save_optimizer(tpu_model::Checkpoint &c) const { params_.save_optimizer(c); }
    void load_optimizer(const tpu_model::Checkpoint &c) { params_.load_optimizer(c); }

  private:
    // Where a node's vjp writes the gradient of its input slot k.
    enum class Route { None, Write, Add };
    struct Work {
        tpurt::Tensor x, targets, loss;
        std::vector<tpurt::Tensor> acts;                 // per node
        std::vector<std::optional<tpurt::Tensor>> grads; // per node, none for the input
        // Per node and input slot: where a gradient to be added, or one not wanted but
        // computed, goes.
        std::vector<std::vector<std::optional<tpurt::Tensor>>> scratch;
        std::optional<tpurt::Graph> step;
    };
    Work &work(std::size_t batch);
    void queue_forward(Work &w);
    void queue_loss_backward(Work &w);
    tpurt::Tensor tensor(std::size_t batch, const Shape &shape);

    tpurt::Device &device_;
    Graph graph_;
    tpu_train::CardParams params_;
    std::vector<std::vector<Route>> routes_; // per node and input slot
    std::vector<bool> backward_;             // nodes whose vjp runs
    std::map<std::size_t, Work> work_;
    bool captured_ = true;
};

} // namespace tpu_nn
