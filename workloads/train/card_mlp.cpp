// SPDX-License-Identifier: MIT
// card_mlp.cpp - one training step of the MLP as card ops (card_mlp.hpp): dense layers with
// bias and ReLU forward, the fused softmax cross-entropy, weight, bias and input gradients, the
// ReLU gradient, and the optimiser's in-place update of the fp32 masters.
#include "card_mlp.hpp"

#include <tpu_data/error.hpp>

#include <algorithm>
#include <span>
#include <stdexcept>

namespace tpu_train {

namespace {

using tpurt::DType;
using tpurt::Tensor;

Tensor upload(tpurt::Device &d, const std::vector<float> &v, std::vector<std::size_t> shape) {
    return Tensor::from_host(d, std::span<const float>(v), std::move(shape));
}
Tensor zeros(tpurt::Device &d, std::vector<std::size_t> shape) {
    std::size_t n = 1;
    for (std::size_t s : shape)
        n *= s;
    return upload(d, std::vector<float>(n, 0.0f), std::move(shape));
}
std::string key(const char *prefix, std::size_t i, const char *suffix) {
    return prefix + std::to_string(i) + suffix;
}
void put(tpu_model::Checkpoint &c, const std::string &name, const Tensor &t) {
    c.tensors.push_back({name, {std::uint32_t(t.element_count())}, t.to_vector<float>()});
}
void get(const tpu_model::Checkpoint &c, const std::string &name, Tensor &t) {
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

} // namespace

CardMlp::CardMlp(tpurt::Device &device, const tpu_model::CpuMlp &net, const OptimizerConfig &opt)
    : device_(device), opt_(opt), hp_(zeros(device, {tpurt::optimizer_hp_count})) {
    for (const tpu_model::Dense &l : net.layers()) {
        // Adam's second moments are allocated for SGD too (same size as its velocities), so
        // that every layer has the same tensors.
        layers_.push_back(Layer{
            l.in, l.out, upload(device, l.w, {l.in, l.out}), upload(device, l.b, {l.out}),
            zeros(device, {l.in, l.out}), zeros(device, {l.out}), zeros(device, {l.in, l.out}),
            zeros(device, {l.out}), zeros(device, {l.in, l.out}), zeros(device, {l.out})});
    }
    if (opt.kind == OptimizerKind::Sgd)
        set_hyperparameters(); // constant; Adam's change with the step
}

CardMlp::Work &CardMlp::work(std::size_t batch) {
    auto it = work_.find(batch);
    if (it != work_.end())
        return it->second;
    const std::size_t classes = layers_.back().out;
    Work w{Tensor::empty(device_, DType::Fp32, {batch, layers_.front().in}),
           Tensor::empty(device_, DType::Fp32, {batch, classes}),
           Tensor::empty(device_, DType::Fp32, {batch}),
           {},
           {},
           {}};
    w.h.push_back(w.x);
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        w.h.push_back(Tensor::empty(device_, DType::Fp32, {batch, layers_[i].out}));
        w.d.push_back(Tensor::empty(device_, DType::Fp32, {batch, layers_[i].out}));
        if (i > 0)
            w.dh.push_back(Tensor::empty(device_, DType::Fp32, {batch, layers_[i].in}));
    }
    return work_.emplace(batch, std::move(w)).first->second;
}

void CardMlp::set_hyperparameters() {
    const auto hp = opt_.kind == OptimizerKind::Sgd
                        ? tpurt::sgd_hyperparameters(opt_.lr, opt_.momentum)
                        : tpurt::adam_hyperparameters(opt_.lr, opt_.beta1, opt_.beta2, opt_.eps,
                                                      0.0f, steps_ + 1);
    hp_.copy_from_host(std::span<const float>(hp));
}

StepResult CardMlp::forward_backward(const float *x, const std::uint8_t *labels,
                                     std::size_t batch) {
    if (batch == 0)
        throw std::invalid_argument("CardMlp: an empty batch");
    Work &w = work(batch);
    const std::size_t inputs = layers_.front().in, classes = layers_.back().out;
    w.x.copy_from_host(std::span<const float>(x, batch * inputs));
    std::vector<float> onehot(batch * classes, 0.0f);
    for (std::size_t r = 0; r < batch; ++r) {
        if (labels[r] >= classes)
            throw std::invalid_argument("CardMlp: label " + std::to_string(labels[r]) +
                                        " of a network with " + std::to_string(classes) +
                                        " classes");
        onehot[r * classes + labels[r]] = 1.0f;
    }
    w.targets.copy_from_host(std::span<const float>(onehot));

    const std::size_t n = layers_.size();
    for (std::size_t i = 0; i < n; ++i)
        tpurt::dense(device_, w.h[i], layers_[i].w, &layers_[i].b, w.h[i + 1],
                     i + 1 < n ? tpurt::Activation::Relu : tpurt::Activation::None);
    tpurt::softmax_cross_entropy(device_, w.h[n], w.targets, w.loss, w.d[n - 1],
                                 1.0f / float(batch));
    for (std::size_t i = n; i-- > 0;) {
        tpurt::matmul_tn(device_, w.h[i], w.d[i], layers_[i].dw);
        tpurt::column_sums(device_, w.d[i], layers_[i].db);
        if (i > 0) {
            tpurt::matmul_nt(device_, w.d[i], layers_[i].w, w.dh[i - 1]);
            // ReLU's gradient from its output: h > 0 exactly where its input was.
            tpurt::activation_grad(device_, tpurt::GradFunction::Relu, w.h[i], w.dh[i - 1],
                                   w.d[i - 1]);
        }
    }

    StepResult r;
    for (float l : w.loss.to_vector<float>())
        r.loss += double(l);
    r.loss /= double(batch);
    const std::vector<float> logits = w.h[n].to_vector<float>();
    for (std::size_t row = 0; row < batch; ++row) {
        const float *p = logits.data() + row * classes;
        if (std::size_t(std::max_element(p, p + classes) - p) == labels[row])
            ++r.correct;
    }
    return r;
}

StepResult CardMlp::step(const float *x, const std::uint8_t *labels, std::size_t batch) {
    const StepResult r = forward_backward(x, labels, batch);
    if (opt_.kind == OptimizerKind::Adam)
        set_hyperparameters();
    for (Layer &l : layers_) {
        if (opt_.kind == OptimizerKind::Sgd) {
            tpurt::sgd_momentum_step(device_, l.w, l.dw, l.mw, hp_);
            tpurt::sgd_momentum_step(device_, l.b, l.db, l.mb, hp_);
        } else {
            tpurt::adam_step(device_, l.w, l.dw, l.mw, l.vw, hp_);
            tpurt::adam_step(device_, l.b, l.db, l.mb, l.vb, hp_);
        }
    }
    ++steps_;
    return r;
}

std::vector<float> CardMlp::weight_grad(std::size_t layer) const {
    return layers_.at(layer).dw.to_vector<float>();
}
std::vector<float> CardMlp::bias_grad(std::size_t layer) const {
    return layers_.at(layer).db.to_vector<float>();
}

void CardMlp::copy_to(tpu_model::CpuMlp &net) const {
    if (net.layers().size() != layers_.size())
        throw std::invalid_argument("CardMlp::copy_to: a network of another depth");
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        tpu_model::Dense &d = net.layers()[i];
        if (d.in != layers_[i].in || d.out != layers_[i].out)
            throw std::invalid_argument("CardMlp::copy_to: a network of other sizes");
        d.w = layers_[i].w.to_vector<float>();
        d.b = layers_[i].b.to_vector<float>();
    }
}

void CardMlp::save_optimizer(tpu_model::Checkpoint &c) const {
    const bool adam = opt_.kind == OptimizerKind::Adam;
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        put(c, key(adam ? "adam.m" : "sgd.v", i, ".w"), layers_[i].mw);
        put(c, key(adam ? "adam.m" : "sgd.v", i, ".b"), layers_[i].mb);
    }
    if (adam) {
        for (std::size_t i = 0; i < layers_.size(); ++i) {
            put(c, key("adam.v", i, ".w"), layers_[i].vw);
            put(c, key("adam.v", i, ".b"), layers_[i].vb);
        }
        c.notes["adam.t"] = std::to_string(steps_);
    }
}

void CardMlp::load_optimizer(const tpu_model::Checkpoint &c) {
    const bool adam = opt_.kind == OptimizerKind::Adam;
    const char *m = adam ? "adam.m" : "sgd.v";
    if (c.find(key(m, 0, ".w")) == nullptr)
        return; // saved before the first step: the state is still the fresh one
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        get(c, key(m, i, ".w"), layers_[i].mw);
        get(c, key(m, i, ".b"), layers_[i].mb);
        if (adam) {
            get(c, key("adam.v", i, ".w"), layers_[i].vw);
            get(c, key("adam.v", i, ".b"), layers_[i].vb);
        }
    }
    if (adam) {
        auto t = c.notes.find("adam.t");
        if (t == c.notes.end())
            throw tpu_data::DataError("checkpoint of " + c.model, "no note adam.t");
        steps_ = std::stoull(t->second);
    }
}

} // namespace tpu_train
