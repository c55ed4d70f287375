// SPDX-License-Identifier: MIT
// optimizer.hpp - the CPU models' optimisers, SGD with momentum and Adam, over a list of named
// parameters (a model's params(): the MLP's dense layers, the CNN's convolutions and dense
// layers). Each parameter's optimiser state is checkpointed as <state prefix><parameter key>:
// the MLP's keys "<i>.w" give "sgd.v0.w", "adam.m1.b" (its established names), the CNN's
// ".conv<i>.w", ".layer<j>.b" give "sgd.v.conv0.w", "adam.v.layer1.b".
#pragma once

#include "tpu_model/checkpoint.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace tpu_model {

// One parameter tensor of a model and its gradient from the last backward pass.
struct Param {
    std::string key; // appended to the optimiser state's prefix in checkpoints
    std::vector<float> *value = nullptr;
    const std::vector<float> *grad = nullptr;
};

// v = momentum v + g; p -= lr v
class SgdMomentum {
  public:
    explicit SgdMomentum(float lr, float momentum = 0.9f) : lr_(lr), momentum_(momentum) {}
    void set_lr(float lr) { lr_ = lr; } // for the steps that follow (lr_schedule.hpp)
    void step(std::span<const Param> params);
    // The velocities as tensors "sgd.v<key>", so that a resumed run continues exactly; load
    // checks them against `params`' sizes.
    void save(Checkpoint &c) const;
    void load(const Checkpoint &c, std::span<const Param> params);

  private:
    float lr_, momentum_;
    std::vector<std::string> keys_;
    std::vector<std::vector<float>> v_;
};

// Adam (Kingma & Ba) with bias-corrected moments.
class Adam {
  public:
    explicit Adam(float lr = 1e-3f, float beta1 = 0.9f, float beta2 = 0.999f, float eps = 1e-8f)
        : lr_(lr), beta1_(beta1), beta2_(beta2), eps_(eps) {}
    void set_lr(float lr) { lr_ = lr; } // for the steps that follow (lr_schedule.hpp)
    void step(std::span<const Param> params);
    // The moments "adam.m<key>", "adam.v<key>" and the step count as the note "adam.t".
    void save(Checkpoint &c) const;
    void load(const Checkpoint &c, std::span<const Param> params);

  private:
    float lr_, beta1_, beta2_, eps_;
    std::vector<std::string> keys_;
    std::vector<std::vector<float>> m_, v_;
    std::uint64_t t_ = 0;
};

} // namespace tpu_model
