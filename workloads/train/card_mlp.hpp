// SPDX-License-Identifier: MIT
// card_mlp.hpp - the MLP of cpu_mlp.hpp trained on the card: every op of a training step runs
// there (libtpurt's dense, softmax_cross_entropy, activation_grad, matmul_tn / matmul_nt,
// column_sums, sgd_momentum_step / adam_step), all queued on the model's stream (card_params.hpp)
// with the copies of a mini-batch (features and one-hot targets) in; the host waits once, at the
// step's end, and reads the per-row loss and the logits (for the accuracy) back. Forward and
// backward are fp32 or bf16 mixed precision (card_params.hpp's Precision; work() says which
// tensor has which dtype) on fp32 master weights. step() captures the step's ops once per batch
// size (a tpurt::Graph) and replays them behind the batch's copies, unless
// OptimizerConfig::captured is false. Checkpoints are CpuMlp's format,
// optimiser state included, so tpu-eval, tpu-serve and tpu-train-cpu read them.
#pragma once

#include "card_params.hpp"

#include <tpu_model/checkpoint.hpp>
#include <tpu_model/cpu_mlp.hpp>
#include <tpurt/tpurt.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tpu_train {

class CardMlp {
  public:
    // Uploads `net`'s weights (the fp32 masters) and zero optimiser state.
    CardMlp(tpurt::Device &device, const tpu_model::CpuMlp &net, const OptimizerConfig &opt,
            Precision precision = Precision::Fp32);

    // Forward, loss and backward of one batch (x: batch x inputs, labels: batch), leaving the
    // gradients on the card; step() adds the optimiser's update.
    StepResult forward_backward(const float *x, const std::uint8_t *labels, std::size_t batch);
    StepResult step(const float *x, const std::uint8_t *labels, std::size_t batch);

    // A step in parts for data-parallel training, as CardCnn's (card_cnn.hpp): step() is
    // queue_forward_loss(), queue_backward(k) for k < backward_parts() (the layers from the
    // last), queue_update() and result().
    void queue_forward_loss(const float *x, const std::uint8_t *labels, std::size_t batch,
                            std::size_t mean_over);
    std::size_t backward_parts() const { return layers_.size(); }
    ParamRange queue_backward(std::size_t k);
    void queue_update() { params_.step(); }
    StepResult result(const std::uint8_t *labels);
    CardParams &params() { return params_; }
    const CardParams &params() const { return params_; }

    // Gradients of the last forward_backward() and the weights, read from the card.
    std::vector<float> weight_grad(std::size_t layer) const;
    std::vector<float> bias_grad(std::size_t layer) const;
    // The current weights into `net` (same sizes), e.g. for evaluation or saving.
    void copy_to(tpu_model::CpuMlp &net) const;

    // The optimiser state under tpu_model::SgdMomentum's / Adam's names ("sgd.v<i>.w", ...,
    // "adam.t" in the notes), so that either trainer resumes the other's checkpoint.
    void save_optimizer(tpu_model::Checkpoint &c) const { params_.save_optimizer(c); }
    void load_optimizer(const tpu_model::Checkpoint &c) { params_.load_optimizer(c); }

    std::uint64_t steps() const { return params_.steps(); }
    void set_lr(float lr) { params_.set_lr(lr); }

  private:
    struct Layer {
        std::size_t in = 0, out = 0;
    };
    // Activations and gradients of one batch size (the last batch of an epoch may be short).
    struct Work {
        tpurt::Tensor x, targets, loss;
        std::vector<tpurt::Tensor> h;     // h[i + 1] = output of layer i (h.back(): the logits)
        std::vector<tpurt::Tensor> d;     // d[i] = gradient at layer i's output before its ReLU
        std::vector<tpurt::Tensor> dh;    // dh[i - 1] = gradient at layer i's input (i >= 1)
        std::optional<tpurt::Graph> step; // the captured step (OptimizerConfig::captured)
    };
    // The forward and loss ops of a step of w's batch (its copies queued before them).
    void queue_step_ops(Work &w, std::size_t mean_over);
    Work &work(std::size_t batch);
    // Queues the copies of the batch in, the forward pass, the loss and the backward pass.
    Work &queue_forward_backward(const float *x, const std::uint8_t *labels, std::size_t batch);
    Work &current(); // the batch of the last queue_forward_loss()
    CardParam &weights(std::size_t i) { return params_[2 * i]; }
    CardParam &bias(std::size_t i) { return params_[2 * i + 1]; }
    const CardParam &weights(std::size_t i) const { return params_[2 * i]; }
    const CardParam &bias(std::size_t i) const { return params_[2 * i + 1]; }

    tpurt::Device &device_;
    tpurt::DType dtype_; // compute_dtype(precision)
    std::vector<Layer> layers_;
    CardParams params_; // per layer i: weights 2 i ("<i>.w"), bias 2 i + 1 ("<i>.b")
    std::map<std::size_t, Work> work_;
    Work *current_ = nullptr;
    bool captured_ = true; // OptimizerConfig::captured
};

} // namespace tpu_train
