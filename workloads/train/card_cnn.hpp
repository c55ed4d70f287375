// SPDX-License-Identifier: MIT
// card_cnn.hpp - the CNN of cpu_cnn.hpp trained on the card: every op of a training step runs
// there, queued on the model's stream (card_params.hpp) behind the copies of a mini-batch (images
// and one-hot targets) in; the host waits once, at the step's end, and reads the per-row loss and
// the logits back. Per conv block forward: conv2d_layer (3x3, padding 1, the bias and ReLU
// in its epilogue) and pool2d max 2x2: two jobs. That equals CpuCnn's relu(maxpool(conv) + b)
// bit for bit (rounding x + b is non-decreasing in x, so it commutes with the window's maximum,
// and so does ReLU). Then the dense layers (dense with bias and ReLU) and the fused softmax
// cross-entropy. Backward: per dense layer matmul_tn, column_sums, matmul_nt and
// activation_grad; per block activation_grad at the pooled output (a window's maximum is > 0
// exactly where CpuCnn's pre-ReLU maximum + b is), column_sums (the bias), max_pool2d_grad (the
// first maximum of the ReLU'd window is CpuCnn's first maximum wherever the gradient is not
// zero), conv2d_weight_grad and (but for the first block) conv2d_input_grad; then the
// optimiser's update of the fp32 masters (card_params.hpp). step() captures these ops once per
// batch size (a tpurt::Graph: one job where the eager ops take about 50) and replays them behind
// the batch's copies, unless OptimizerConfig::captured is false. In fp32 or in bf16 precision
// (card_params.hpp's Precision; work() says which tensor has which dtype). The test set is
// evaluated with logits() on the card too.
#pragma once

#include "card_params.hpp"

#include <tpu_model/checkpoint.hpp>
#include <tpu_model/cpu_cnn.hpp>
#include <tpurt/tpurt.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

namespace tpu_train {

class CardCnn {
  public:
    // Uploads `net`'s weights (the fp32 masters) and zero optimiser state.
    CardCnn(tpurt::Device &device, const tpu_model::CpuCnn &net, const OptimizerConfig &opt,
            Precision precision = Precision::Fp32);

    // Forward, loss and backward of one batch (x: batch x H x W x C, labels: batch), leaving the
    // gradients on the card; step() adds the optimiser's update.
    StepResult forward_backward(const float *x, const std::uint8_t *labels, std::size_t batch);
    StepResult step(const float *x, const std::uint8_t *labels, std::size_t batch);
    // The logits (batch x classes) of the forward pass alone.
    std::vector<float> logits(const float *x, std::size_t batch);

    // A step in parts, for data-parallel training (data_parallel.hpp), whose step() is these in
    // order: queue_forward_loss() (the copies in, the forward pass, the loss, its gradient
    // scaled by 1 / mean_over: the rows of the whole batch of which this is a part),
    // queue_backward(k) for k < backward_parts() (the layers from the last: each queues the
    // layer's gradients and the gradient at its input, and returns the parameters whose
    // gradients it completed), queue_update() (the optimiser's step) and result() (waits and
    // reads the loss and the logits of this card's rows back).
    void queue_forward_loss(const float *x, const std::uint8_t *labels, std::size_t batch,
                            std::size_t mean_over);
    std::size_t backward_parts() const { return blocks_ + dense_; }
    ParamRange queue_backward(std::size_t k);
    void queue_update() { params_.step(); }
    StepResult result(const std::uint8_t *labels);
    CardParams &params() { return params_; }
    const CardParams &params() const { return params_; }

    // The gradients of the last forward_backward(), in CpuCnn::params() order.
    std::vector<std::vector<float>> gradients() const;
    // The current weights into `net` (same shape), e.g. for saving.
    void copy_to(tpu_model::CpuCnn &net) const;

    void save_optimizer(tpu_model::Checkpoint &c) const { params_.save_optimizer(c); }
    void load_optimizer(const tpu_model::Checkpoint &c) { params_.load_optimizer(c); }
    std::uint64_t steps() const { return params_.steps(); }
    void set_lr(float lr) { params_.set_lr(lr); }

  private:
    // Activations and gradients of one batch size (the last batch of an epoch may be short).
    struct Block {
        tpurt::Tensor s, p;       // relu(conv + bias), pooled (the next one's input)
        tpurt::Tensor dp, dq, ds; // gradients at p, at p's input (ReLU'd), at s
    };
    struct Work {
        tpurt::Tensor x, targets, loss;
        std::vector<Block> blocks;
        std::vector<tpurt::Tensor> h;  // h[0]: the flattened maps, h[j + 1]: dense layer j's output
        std::vector<tpurt::Tensor> d;  // d[j]: gradient at dense layer j's output before its ReLU
        std::vector<tpurt::Tensor> dh; // dh[j]: gradient at dense layer j's input
        std::optional<tpurt::Graph> step; // the captured step (OptimizerConfig::captured)
    };
    Work &work(std::size_t batch);
    // Queue the copy of the batch in and the forward pass; with the one-hot targets, the loss
    // and the backward pass.
    void queue_forward(Work &w, const float *x, std::size_t batch);
    void queue_forward_ops(Work &w);
    // The forward, loss and backward ops of a whole step of w's batch.
    void queue_step_ops(Work &w);
    Work &queue_forward_backward(const float *x, const std::uint8_t *labels, std::size_t batch);
    Work &current(); // the batch of the last queue_forward_loss()
    CardParam &conv_w(std::size_t i) { return params_[2 * i]; }
    CardParam &conv_b(std::size_t i) { return params_[2 * i + 1]; }
    CardParam &dense_w(std::size_t j) { return params_[2 * (blocks_ + j)]; }
    CardParam &dense_b(std::size_t j) { return params_[2 * (blocks_ + j) + 1]; }

    tpurt::Device &device_;
    tpu_model::CnnShape shape_;
    std::size_t blocks_ = 0, dense_ = 0;
    tpurt::DType dtype_; // compute_dtype(precision)
    CardParams params_;
    std::map<std::size_t, Work> work_;
    Work *current_ = nullptr;
    bool captured_ = true; // OptimizerConfig::captured
};

} // namespace tpu_train
