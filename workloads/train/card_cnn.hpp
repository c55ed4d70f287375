// SPDX-License-Identifier: MIT
// card_cnn.hpp - the CNN of cpu_cnn.hpp trained on the card: every op of a training step runs
// there, the host copies a mini-batch (images and one-hot targets) in and reads the per-row loss
// and the logits back. Per conv block forward: conv2d (3x3, padding 1), pool2d max 2x2, the bias
// (elementwise add of a [C] row) and ReLU (unary) after the pooling, as CpuCnn computes it; then
// the dense layers (dense with bias and ReLU) and the fused softmax cross-entropy. Backward: per
// dense layer matmul_tn, column_sums, matmul_nt and activation_grad; per block activation_grad,
// column_sums (the bias), max_pool2d_grad, conv2d_weight_grad and (but for the first block)
// conv2d_input_grad; then the optimiser's update of the fp32 masters (card_params.hpp). All fp32
// (workloads/README.md says why). The test set is evaluated with logits() on the card too.
#pragma once

#include "card_params.hpp"

#include <tpu_model/checkpoint.hpp>
#include <tpu_model/cpu_cnn.hpp>
#include <tpurt/tpurt.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

namespace tpu_train {

class CardCnn {
  public:
    // Uploads `net`'s weights (the fp32 masters) and zero optimiser state.
    CardCnn(tpurt::Device &device, const tpu_model::CpuCnn &net, const OptimizerConfig &opt);

    // Forward, loss and backward of one batch (x: batch x H x W x C, labels: batch), leaving the
    // gradients on the card; step() adds the optimiser's update.
    StepResult forward_backward(const float *x, const std::uint8_t *labels, std::size_t batch);
    StepResult step(const float *x, const std::uint8_t *labels, std::size_t batch);
    // The logits (batch x classes) of the forward pass alone.
    std::vector<float> logits(const float *x, std::size_t batch);

    // The gradients of the last forward_backward(), in CpuCnn::params() order.
    std::vector<std::vector<float>> gradients() const;
    // The current weights into `net` (same shape), e.g. for saving.
    void copy_to(tpu_model::CpuCnn &net) const;

    void save_optimizer(tpu_model::Checkpoint &c) const { params_.save_optimizer(c); }
    void load_optimizer(const tpu_model::Checkpoint &c) { params_.load_optimizer(c); }
    std::uint64_t steps() const { return params_.steps(); }

  private:
    // Activations and gradients of one batch size (the last batch of an epoch may be short).
    struct Block {
        tpurt::Tensor s, q, a, p; // conv output, pooled, + bias, ReLU (the next one's input)
        tpurt::Tensor dp, dq, ds; // gradients at p, at q (and a), at s
    };
    struct Work {
        tpurt::Tensor x, targets, loss;
        std::vector<Block> blocks;
        std::vector<tpurt::Tensor> h;  // h[0]: the flattened maps, h[j + 1]: dense layer j's output
        std::vector<tpurt::Tensor> d;  // d[j]: gradient at dense layer j's output before its ReLU
        std::vector<tpurt::Tensor> dh; // dh[j]: gradient at dense layer j's input
    };
    Work &work(std::size_t batch);
    void forward(Work &w, const float *x, std::size_t batch);
    CardParam &conv_w(std::size_t i) { return params_[2 * i]; }
    CardParam &conv_b(std::size_t i) { return params_[2 * i + 1]; }
    CardParam &dense_w(std::size_t j) { return params_[2 * (blocks_ + j)]; }
    CardParam &dense_b(std::size_t j) { return params_[2 * (blocks_ + j) + 1]; }

    tpurt::Device &device_;
    tpu_model::CnnShape shape_;
    std::size_t blocks_ = 0, dense_ = 0;
    CardParams params_;
    std::map<std::size_t, Work> work_;
};

} // namespace tpu_train
