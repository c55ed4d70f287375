// SPDX-License-Identifier: MIT
// card_params.hpp - a model's parameters on the card with their gradients and optimiser state,
// updated in place by the card's sgd_momentum_step / adam_step (fp32 master weights, which also
// write the bf16 copy the next step reads in bf16 precision). The state
// is checkpointed under tpu_model's optimiser names (<"sgd.v" | "adam.m" | "adam.v"><key>, the
// step count as the note "adam.t"; tpu_model/optimizer.hpp), so that a run resumes bit for bit
// and either trainer reads the other's checkpoints.
#pragma once

#include <tpu_model/checkpoint.hpp>
#include <tpurt/tpurt.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
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

// The dtype of a training step's ops: fp32 throughout, or bf16 mixed precision: bf16
// activations, weight copies and gradients into the matmuls and convolutions (their sums fp32),
// fp32 master weights, biases, weight gradients and optimiser state (workloads/README.md).
enum class Precision { Fp32, Bf16 };
// "fp32" or "bf16"; anything else throws std::invalid_argument.
Precision parse_precision(const std::string &name);
tpurt::DType compute_dtype(Precision p);

// t = values, converted to t's dtype (fp32 or bf16, rounded to nearest even) on the host.
void copy_in(tpurt::Tensor &t, std::span<const float> values);

// What one step reports: the batch's mean loss and how many rows the logits got right.
struct StepResult {
    double loss = 0.0;
    std::size_t correct = 0;
};

struct CardParam {
    std::string key;          // tpu_model::Param's key
    tpurt::Tensor w, g, m, v; // fp32 weights (the master), gradient, momentum / Adam's moments
    tpurt::Tensor c;          // what the ops read: w itself, or w's bf16 copy (every step's)
};

class CardParams {
  public:
    CardParams(tpurt::Device &device, const OptimizerConfig &opt, Precision precision);

    // A parameter of `shape` holding `values`, with zero gradient and state; `copied` gives it
    // a compute copy in the precision's dtype (weights; biases are read as fp32 by the ops).
    CardParam &add(const std::string &key, const std::vector<float> &values,
                   std::vector<std::size_t> shape, bool copied);
    CardParam &operator[](std::size_t i) { return params_[i]; }
    const CardParam &operator[](std::size_t i) const { return params_[i]; }
    std::size_t size() const { return params_.size(); }

    // The learning rate of the steps that follow (lr_schedule.hpp); a change reaches the card
    // through the hyperparameter tensor, the programs stay.
    void set_lr(float lr);
    // One optimiser update of every parameter from its gradient, on the card.
    void step();
    std::uint64_t steps() const { return steps_; }

    void save_optimizer(tpu_model::Checkpoint &c) const;
    void load_optimizer(const tpu_model::Checkpoint &c);

  private:
    void set_hyperparameters();

    tpurt::Device &device_;
    OptimizerConfig opt_;
    Precision precision_;
    std::vector<CardParam> params_;
    tpurt::Tensor hp_;
    std::uint64_t steps_ = 0;
};

} // namespace tpu_train
