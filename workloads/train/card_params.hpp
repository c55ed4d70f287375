// SPDX-License-Identifier: MIT
// card_params.hpp - a model's parameters on the card with their gradients and optimiser state,
// updated in place by the card's sgd_momentum_step / adam_step (fp32 master weights). The state
// is checkpointed under tpu_model's optimiser names (<"sgd.v" | "adam.m" | "adam.v"><key>, the
// step count as the note "adam.t"; tpu_model/optimizer.hpp), so that a run resumes bit for bit
// and either trainer reads the other's checkpoints.
#pragma once

#include <tpu_model/checkpoint.hpp>
#include <tpurt/tpurt.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tpu_train {

enum class OptimizerKind { Sgd, Adam };

struct OptimizerConfig {
    OptimizerKind kind = OptimizerKind::Sgd;
    float lr = 0.02f;
    float momentum = 0.9f;                           // SGD
    float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f; // Adam
};

// What one step reports: the batch's mean loss and how many rows the logits got right.
struct StepResult {
    double loss = 0.0;
    std::size_t correct = 0;
};

struct CardParam {
    std::string key;          // tpu_model::Param's key
    tpurt::Tensor w, g, m, v; // weights, gradient, momentum / Adam's moments
};

class CardParams {
  public:
    CardParams(tpurt::Device &device, const OptimizerConfig &opt);

    // A parameter of `shape` holding `values`, with zero gradient and state.
    CardParam &add(const std::string &key, const std::vector<float> &values,
                   std::vector<std::size_t> shape);
    CardParam &operator[](std::size_t i) { return params_[i]; }
    const CardParam &operator[](std::size_t i) const { return params_[i]; }
    std::size_t size() const { return params_.size(); }

    // One optimiser update of every parameter from its gradient, on the card.
    void step();
    std::uint64_t steps() const { return steps_; }

    void save_optimizer(tpu_model::Checkpoint &c) const;
    void load_optimizer(const tpu_model::Checkpoint &c);

  private:
    void set_hyperparameters();

    tpurt::Device &device_;
    OptimizerConfig opt_;
    std::vector<CardParam> params_;
    tpurt::Tensor hp_;
    std::uint64_t steps_ = 0;
};

} // namespace tpu_train
