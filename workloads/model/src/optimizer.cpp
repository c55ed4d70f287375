// SPDX-License-Identifier: MIT
// optimizer.cpp - SGD with momentum and Adam over named parameters, and their checkpointed state.
#include "tpu_model/optimizer.hpp"

#include <tpu_data/error.hpp>

#include <cmath>

namespace tpu_model {

namespace {

std::vector<std::string> keys_of(std::span<const Param> params) {
    std::vector<std::string> keys;
    for (const Param &p : params)
        keys.push_back(p.key);
    return keys;
}

// Zero state of each parameter's size.
std::vector<std::vector<float>> zeros_like(std::span<const Param> params) {
    std::vector<std::vector<float>> state;
    for (const Param &p : params)
        state.emplace_back(p.value->size(), 0.0f);
    return state;
}

void save_state(Checkpoint &c, const std::string &prefix, const std::vector<std::string> &keys,
                const std::vector<std::vector<float>> &state) {
    for (std::size_t i = 0; i < keys.size(); ++i)
        c.tensors.push_back({prefix + keys[i], {std::uint32_t(state[i].size())}, state[i]});
}

// The state prefix<key> of every parameter, or nothing if the checkpoint was saved before the
// first step (the state is then still the fresh one).
std::vector<std::vector<float>> load_state(const Checkpoint &c, const std::string &prefix,
                                           std::span<const Param> params) {
    std::vector<std::vector<float>> state;
    if (params.empty() || c.find(prefix + params[0].key) == nullptr)
        return state;
    for (const Param &p : params) {
        const std::string name = prefix + p.key;
        const NamedTensor *t = c.find(name);
        if (t == nullptr)
            throw tpu_data::DataError("checkpoint of " + c.model, "no tensor " + name);
        if (t->data.size() != p.value->size())
            throw tpu_data::DataError("checkpoint of " + c.model,
                                      "tensor " + name + " has " + std::to_string(t->data.size()) +
                                          " values, this model needs " +
                                          std::to_string(p.value->size()));
        state.push_back(t->data);
    }
    return state;
}

} // namespace

void SgdMomentum::step(std::span<const Param> params) {
    if (v_.empty()) {
        keys_ = keys_of(params);
        v_ = zeros_like(params);
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
        std::vector<float> &p = *params[i].value;
        const std::vector<float> &g = *params[i].grad;
        std::vector<float> &v = v_[i];
        for (std::size_t e = 0; e < p.size(); ++e) {
            v[e] = momentum_ * v[e] + g[e];
            p[e] -= lr_ * v[e];
        }
    }
}

void SgdMomentum::save(Checkpoint &c) const {
    save_state(c, "sgd.v", keys_, v_);
}

void SgdMomentum::load(const Checkpoint &c, std::span<const Param> params) {
    keys_ = keys_of(params);
    v_ = load_state(c, "sgd.v", params);
}

void Adam::step(std::span<const Param> params) {
    if (m_.empty()) {
        keys_ = keys_of(params);
        m_ = zeros_like(params);
        v_ = zeros_like(params);
    }
    ++t_;
    const float c1 = 1.0f - std::pow(beta1_, float(t_));
    const float c2 = 1.0f - std::pow(beta2_, float(t_));
    for (std::size_t i = 0; i < params.size(); ++i) {
        std::vector<float> &p = *params[i].value;
        const std::vector<float> &g = *params[i].grad;
        std::vector<float> &m = m_[i], &v = v_[i];
        for (std::size_t e = 0; e < p.size(); ++e) {
            m[e] = beta1_ * m[e] + (1.0f - beta1_) * g[e];
            v[e] = beta2_ * v[e] + (1.0f - beta2_) * g[e] * g[e];
            p[e] -= lr_ * (m[e] / c1) / (std::sqrt(v[e] / c2) + eps_);
        }
    }
}

void Adam::save(Checkpoint &c) const {
    save_state(c, "adam.m", keys_, m_);
    save_state(c, "adam.v", keys_, v_);
    c.notes["adam.t"] = std::to_string(t_);
}

void Adam::load(const Checkpoint &c, std::span<const Param> params) {
    keys_ = keys_of(params);
    m_ = load_state(c, "adam.m", params);
    v_ = load_state(c, "adam.v", params);
    auto t = c.notes.find("adam.t");
    if (t == c.notes.end())
        throw tpu_data::DataError("checkpoint of " + c.model, "no adam.t note (Adam's step count)");
    t_ = std::stoull(t->second);
}

} // namespace tpu_model
