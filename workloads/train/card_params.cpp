// SPDX-License-Identifier: MIT
// card_params.cpp - parameters on the card, their optimiser steps and checkpointed state
// (card_params.hpp).
#include "card_params.hpp"

#include <tpu_data/error.hpp>

#include <algorithm>
#include <span>
#include <stdexcept>

namespace tpu_train {

namespace {

void put(tpu_model::Checkpoint &c, const std::string &name, const tpurt::Tensor &t) {
    c.tensors.push_back({name, {std::uint32_t(t.element_count())}, t.to_vector<float>()});
}

void get(const tpu_model::Checkpoint &c, const std::string &name, tpurt::Tensor &t) {
    const tpu_model::NamedTensor *n = c.find(name);
    if (n == nullptr)
        throw tpu_data::DataError("checkpoint of " + c.model, "no tensor " + name);
    if (n->data.size() != t.element_count())
        throw tpu_data::DataError("checkpoint of " + c.model,
                                  "tensor " + name + " has " + std::to_string(n->data.size()) +
                                      " values, this model needs " +
                                      std::to_string(t.element_count()));
    t.copy_from_host(n->data);
}

// A densely packed fp32 tensor holding `values`, and one of zeros.
tpurt::Tensor upload(tpurt::Device &d, const std::vector<float> &values,
                     std::vector<std::size_t> shape) {
    return tpurt::Tensor::from_host(d, std::span<const float>(values), std::move(shape));
}

tpurt::Tensor zeros(tpurt::Device &d, std::vector<std::size_t> shape) {
    std::size_t n = 1;
    for (std::size_t s : shape)
        n *= s;
    return upload(d, std::vector<float>(n, 0.0f), std::move(shape));
}

} // namespace

Precision parse_precision(const std::string &name) {
    if (name == "fp32")
        return Precision::Fp32;
    if (name == "bf16")
        return Precision::Bf16;
    throw std::invalid_argument("precision '" + name + "': not one of fp32, bf16");
}

tpurt::DType compute_dtype(Precision p) {
    return p == Precision::Bf16 ? tpurt::DType::Bf16 : tpurt::DType::Fp32;
}

void copy_in(tpurt::Tensor &t, std::span<const float> values) {
    if (t.dtype() == tpurt::DType::Fp32) {
        t.copy_from_host(values);
        return;
    }
    std::vector<tpurt::Bf16> b(values.size());
    std::transform(values.begin(), values.end(), b.begin(), tpurt::Bf16::from_float);
    t.copy_from_host(std::span<const tpurt::Bf16>(b));
}

CardParams::CardParams(tpurt::Device &device, const OptimizerConfig &opt, Precision precision)
    : device_(device), opt_(opt), precision_(precision),
      hp_(zeros(device, {tpurt::optimizer_hp_count})) {
    if (opt.kind == OptimizerKind::Sgd)
        set_hyperparameters(); // constant; Adam's change with the step
}

CardParam &CardParams::add(const std::string &key, const std::vector<float> &values,
                           std::vector<std::size_t> shape, bool copied) {
    // Adam's second moments are allocated for SGD too, so that every parameter is alike.
    const tpurt::Tensor w = upload(device_, values, shape);
    CardParam p{key, w, zeros(device_, shape), zeros(device_, shape), zeros(device_, shape), w};
    if (copied && precision_ == Precision::Bf16) {
        p.c = tpurt::Tensor::empty(device_, tpurt::DType::Bf16, std::move(shape));
        copy_in(p.c, values);
    }
    params_.push_back(std::move(p));
    return params_.back();
}

void CardParams::set_hyperparameters() {
    const auto hp = opt_.kind == OptimizerKind::Sgd
                        ? tpurt::sgd_hyperparameters(opt_.lr, opt_.momentum)
                        : tpurt::adam_hyperparameters(opt_.lr, opt_.beta1, opt_.beta2, opt_.eps,
                                                      0.0f, steps_ + 1);
    hp_.copy_from_host(std::span<const float>(hp));
}

void CardParams::set_lr(float lr) {
    if (lr == opt_.lr)
        return;
    opt_.lr = lr;
    if (opt_.kind == OptimizerKind::Sgd)
        set_hyperparameters(); // Adam's are written before every step anyway
}

void CardParams::step() {
    if (opt_.kind == OptimizerKind::Adam)
        set_hyperparameters();
    for (CardParam &p : params_) {
        tpurt::Tensor *copy = p.c.dtype() == tpurt::DType::Bf16 ? &p.c : nullptr;
        if (opt_.kind == OptimizerKind::Sgd)
            tpurt::sgd_momentum_step(device_, p.w, p.g, p.m, hp_, copy);
        else
            tpurt::adam_step(device_, p.w, p.g, p.m, p.v, hp_, copy);
    }
    ++steps_;
}

void CardParams::save_optimizer(tpu_model::Checkpoint &c) const {
    const bool adam = opt_.kind == OptimizerKind::Adam;
    for (const CardParam &p : params_)
        put(c, (adam ? "adam.m" : "sgd.v") + p.key, p.m);
    if (adam) {
        for (const CardParam &p : params_)
            put(c, "adam.v" + p.key, p.v);
        c.notes["adam.t"] = std::to_string(steps_);
    }
}

void CardParams::load_optimizer(const tpu_model::Checkpoint &c) {
    const bool adam = opt_.kind == OptimizerKind::Adam;
    const std::string m = adam ? "adam.m" : "sgd.v";
    if (params_.empty() || c.find(m + params_[0].key) == nullptr)
        return; // saved before the first step: the state is still the fresh one
    for (CardParam &p : params_) {
        get(c, m + p.key, p.m);
        if (adam)
            get(c, "adam.v" + p.key, p.v);
    }
    steps_ = c.step;
    if (adam) {
        auto t = c.notes.find("adam.t");
        if (t == c.notes.end())
            throw tpu_data::DataError("checkpoint of " + c.model, "no note adam.t");
        steps_ = std::stoull(t->second);
    }
}

} // namespace tpu_train
