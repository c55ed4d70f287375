// SPDX-License-Identifier: MIT
// cpu_mlp.hpp - a multi-layer perceptron trained in plain C++ on the CPU: dense layers with ReLU
// between them, softmax cross-entropy loss, SGD with momentum and Adam (optimizer.hpp). It is the
// baseline the card's training is timed against (the same step on the guest's own CPU) and an
// independent reference for the card's training ops. fp32 throughout; deterministic for a given
// seed.
#pragma once

#include "tpu_model/checkpoint.hpp"
#include "tpu_model/optimizer.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tpu_model {

// One dense layer y = x W + b, W stored in x out row-major.
struct Dense {
    std::size_t in = 0, out = 0;
    std::vector<float> w, b;
    std::vector<float> dw, db; // gradients of the last backward pass
};

// The loss of a batch and the gradient of the mean loss with respect to the logits.
struct LossResult {
    float loss = 0.0f;       // mean cross-entropy over the batch
    std::size_t correct = 0; // argmax(logits) == label
    std::vector<float> dlogits;
};
LossResult softmax_cross_entropy(const std::vector<float> &logits, std::size_t batch,
                                 std::size_t classes, const std::uint8_t *labels);

class CpuMlp {
  public:
    // sizes = {inputs, hidden..., classes}; weights He-initialised from `seed`, biases zero.
    CpuMlp(const std::vector<std::size_t> &sizes, std::uint64_t seed);

    // Logits (batch x classes) for `x` (batch x inputs); keeps the activations for backward().
    const std::vector<float> &forward(const float *x, std::size_t batch);
    // Gradients of every layer from dlogits (batch x classes), after forward() on the same batch.
    void backward(const std::vector<float> &dlogits);
    // The gradient of the loss with respect to the input of the last forward() (batch x inputs),
    // from the last backward(): what a CNN's convolutions below the dense layers receive.
    const std::vector<float> &input_grad() const { return dx_; }

    // Every weight and bias with its gradient, for the optimisers: keys <prefix><i>.w and
    // <prefix><i>.b (prefix "" gives the MLP's optimiser state names "sgd.v0.w", ...).
    std::vector<Param> params(const std::string &prefix = "");

    // Weights and biases as checkpoint tensors "layer<i>.w" (in x out) and "layer<i>.b"; load
    // checks that the checkpoint's layers have this network's sizes.
    void save(Checkpoint &c) const;
    void load(const Checkpoint &c);

    std::vector<Dense> &layers() { return layers_; }
    const std::vector<Dense> &layers() const { return layers_; }

  private:
    std::vector<Dense> layers_;
    std::vector<std::vector<float>> acts_; // acts_[0] = input, acts_[i] = output of layer i-1
    std::vector<float> dx_;
    std::size_t batch_ = 0;
};

} // namespace tpu_model
