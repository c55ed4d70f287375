// SPDX-License-Identifier: MIT
// card_trainer.hpp - any graph (graph.hpp) trained on the card: its nodes' forward and vjp
// lowerings (card_lowering.hpp) queued in order on the model's stream, the fused softmax
// cross-entropy between them, and the optimiser's update of every parameter at once
// (tpu_train::CardParams: one flat buffer per kind of tensor, one sgd_momentum_step or
// adam_step job, the CPU optimisers' state names in checkpoints). A node read by several
// (a residual's input) has its gradient written by the last of them and the others' added to
// it. In fp32, or in bf16 mixed precision as the CNN's (workloads/README.md): bf16 images,
// activations, weight copies and gradients at the matmuls' and convolutions' outputs; fp32
// masters, biases, layer norms (their inputs, outputs and gradients), logits, weight
// gradients, optimiser state and the gradients the matmuls and convolutions produce; a cast
// wherever one op's dtype meets another's need. step() captures the step once per batch size (a
// tpurt::Graph) and replays it behind the copies of the batch in, unless OptimizerConfig::captured
// is false. It is a Card of tpu_train::DataParallel (workloads/train/parallel/data_parallel.hpp):
// tpu-train
// --model <spec>, on one card or several.
#pragma once

#include "tpu_nn/cpu_executor.hpp"
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
                const tpu_train::OptimizerConfig &opt,
                tpu_train::Precision precision = tpu_train::Precision::Fp32);
    // The graph and weights of `net`.
    CardTrainer(tpurt::Device &device, const CpuExecutor &net,
                const tpu_train::OptimizerConfig &opt,
                tpu_train::Precision precision = tpu_train::Precision::Fp32)
        : CardTrainer(device, net.graph(), net.values(), opt, precision) {}

    // Forward, loss and backward of one batch (x: batch x the input shape, labels: batch),
    // leaving the gradients on the card; step() adds the optimiser's update.
    tpu_train::StepResult forward_backward(const float *x, const std::uint8_t *labels,
                                           std::size_t batch);
    tpu_train::StepResult step(const float *x, const std::uint8_t *labels, std::size_t batch);
    // The logits (batch x classes) of the forward pass alone.
    std::vector<float> logits(const float *x, std::size_t batch);

    // A step in parts, for data-parallel training (data_parallel.hpp): the copies in, the
    // forward pass and the loss with its gradient scaled by 1 / mean_over (the rows of the whole
    // batch of which this is a part); the backward pass a node with parameters at a time, from
    // the last (part k: the vjps from the previous part's node down to the k-th such node,
    // returning its parameters, whose gradients are then complete); the optimiser's update; and
    // the wait and read-back of this part's loss and logits.
    void queue_forward_loss(const float *x, const std::uint8_t *labels, std::size_t batch,
                            std::size_t mean_over);
    std::size_t backward_parts() const { return parts_.size(); }
    tpu_train::ParamRange queue_backward(std::size_t k);
    void queue_update() { params_.step(); }
    tpu_train::StepResult result(const std::uint8_t *labels);
    tpu_train::CardParams &params() { return params_; }
    const tpu_train::CardParams &params() const { return params_; }

    // The gradients of the last backward pass and the current weights, in Graph::params()
    // order (read back after the stream's work); copy_to puts the weights into `net`.
    ParamValues gradients();
    ParamValues values();
    void copy_to(CpuExecutor &net);

    void set_lr(float lr) { params_.set_lr(lr); }
    std::uint64_t steps() const { return params_.steps(); }
    void save_optimizer(tpu_model::Checkpoint &c) const { params_.save_optimizer(c); }
    void load_optimizer(const tpu_model::Checkpoint &c) { params_.load_optimizer(c); }

  private:
    // Whether a node's vjp writes the gradient of its input slot k, adds to it (another reader
    // wrote it), or computes none.
    enum class Route { None, Write, Add };
    using Slots = std::vector<std::vector<std::optional<tpurt::Tensor>>>; // per node and slot
    struct Work {
        tpurt::Tensor x, targets, loss;
        std::vector<tpurt::Tensor> acts;                 // per node
        std::vector<std::optional<tpurt::Tensor>> grads; // per node, none for the input
        Slots inputs;  // an input converted to the dtype the node needs
        Slots scratch; // the vjp's gradient of an input where it is not written in place
        Slots merged;  // scratch converted to the gradient's dtype, to be added
        std::vector<std::optional<tpurt::Tensor>> block; // a conv block's pooled ReLU gradient
        std::optional<tpurt::Graph> step;
    };
    // The dtypes of a node's output and gradient, of what it reads as input k and of the
    // gradient its vjp writes for input k.
    struct Types {
        tpurt::DType act = tpurt::DType::Fp32, grad = tpurt::DType::Fp32;
        std::vector<tpurt::DType> in, din;
    };
    Work &work(std::size_t batch);
    // The copies of a batch in (targets unless null), and the ops of the passes.
    Work &queue_copies(const float *x, const std::uint8_t *labels, std::size_t batch);
    void queue_forward(Work &w);
    void queue_loss(Work &w, std::size_t mean_over);
    void queue_backward_ops(Work &w); // every part
    tpu_train::ParamRange queue_part(Work &w, std::size_t k);
    void queue_vjp(Work &w, NodeId n);
    Work &current();
    // How a node runs fused with its neighbours (plan_fusion()): a dense layer or convolution
    // with the ReLU that alone reads it in its epilogue (the ReLU's output is then the
    // producer's, and its vjp reads that, which is positive exactly where its input was); a conv
    // block, a convolution, its fused ReLU and a max pooling that alone reads it, whose ReLU and
    // bias gradients are taken at the pooled size in the pooling's vjp (conv_block_vjp); a
    // flatten whose input nothing else reads, a view of that input and of its gradient.
    enum class Fused { No, Epilogue, Relu, BlockConv, BlockRelu, BlockPool, View };
    void plan_fusion();
    tpurt::Tensor tensor(tpurt::DType type, std::size_t batch, const Shape &shape);
    void plan_types();

    tpurt::Device &device_;
    Graph graph_;
    tpu_train::CardParams params_;
    tpurt::DType dtype_;                     // the compute dtype
    std::vector<std::vector<Route>> routes_; // per node and input slot
    std::vector<Types> types_;               // per node
    std::vector<Fused> fused_;               // per node
    std::vector<bool> backward_;             // nodes whose vjp runs
    std::vector<NodeId> parts_;              // the nodes with parameters, from the output
    std::map<std::size_t, Work> work_;
    Work *current_ = nullptr; // the batch of the last queue_forward_loss()
    bool captured_ = true;
};

} // namespace tpu_nn
