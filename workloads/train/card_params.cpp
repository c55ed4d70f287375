// SPDX-License-Identifier: MIT
// card_params.cpp - parameters on the card, their optimiser steps and checkpointed state, the
// stream copies that feed a step and the read-back of its result (card_params.hpp).
#include "card_params.hpp"

#include <tpu_data/error.hpp>

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>

namespace tpu_train {

namespace {

// Queues t = values (t's dtype), held by the queued work until it has run.
template <typename T>
void queue_copy(tpurt::Stream &stream, const tpurt::Tensor &t, std::vector<T> values) {
    stream.enqueue_host("copy_in",
                        [t = tpurt::Tensor(t), values = std::move(values)]() mutable {
                            t.copy_from_host(std::span<const T>(values));
                        },
                        {t.storage()});
}

void put(tpu_model::Checkpoint &c, const std::string &name, const tpurt::Tensor &t) {
    c.tensors.push_back({name, {std::uint32_t(t.element_count())}, t.to_vector<float>()});
}

void get(tpurt::Stream &stream, const tpu_model::Checkpoint &c, const std::string &name,
         const tpurt::Tensor &t) {
    const tpu_model::NamedTensor *n = c.find(name);
    if (n == nullptr)
        throw tpu_data::DataError("checkpoint of " + c.model, "no tensor " + name);
    if (n->data.size() != t.element_count())
        throw tpu_data::DataError("checkpoint of " + c.model,
                                  "tensor " + name + " has " + std::to_string(n->data.size()) +
                                      " values, this model needs " +
                                      std::to_string(t.element_count()));
    copy_in(stream, t, n->data);
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

void copy_in(tpurt::Stream &stream, const tpurt::Tensor &t, std::span<const float> values) {
    if (t.dtype() == tpurt::DType::Fp32) {
        queue_copy(stream, t, std::vector<float>(values.begin(), values.end()));
        return;
    }
    std::vector<tpurt::Bf16> b(values.size());
    std::transform(values.begin(), values.end(), b.begin(), tpurt::Bf16::from_float);
    queue_copy(stream, t, std::move(b));
}

void copy_targets(tpurt::Stream &stream, const tpurt::Tensor &targets, const std::uint8_t *labels,
                  std::size_t batch, const char *model) {
    const std::size_t classes = targets.size(1);
    std::vector<float> onehot(batch * classes, 0.0f);
    for (std::size_t r = 0; r < batch; ++r) {
        if (labels[r] >= classes)
            throw std::invalid_argument(std::string(model) + ": label " +
                                        std::to_string(labels[r]) + " of a network with " +
                                        std::to_string(classes) + " classes");
        onehot[r * classes + labels[r]] = 1.0f;
    }
    queue_copy(stream, targets, std::move(onehot));
}

StepResult step_result(tpurt::Stream &stream, const tpurt::Tensor &loss,
                       const tpurt::Tensor &logits, const std::uint8_t *labels) {
    stream.synchronize();
    StepResult r;
    for (float l : loss.to_vector<float>())
        r.loss += double(l);
    const std::size_t batch = logits.size(0), classes = logits.size(1);
    r.loss /= double(batch);
    const std::vector<float> values = logits.to_vector<float>();
    for (std::size_t row = 0; row < batch; ++row) {
        const float *p = values.data() + row * classes;
        if (std::size_t(std::max_element(p, p + classes) - p) == labels[row])
            ++r.correct;
    }
    return r;
}

CardParams::CardParams(tpurt::Device &device, const OptimizerConfig &opt, Precision precision)
    : device_(device), stream_(device), opt_(opt), precision_(precision),
      hp_(zeros(device, {tpurt::optimizer_hp_count})) {
    write_hyperparameters();
}

void CardParams::add(const std::string &key, const std::vector<float> &values,
                     std::vector<std::size_t> shape, bool copied) {
    if (all_)
        throw std::logic_error("CardParams::add after place()");
    declared_.push_back({key, values, std::move(shape), copied});
}

void CardParams::place() {
    std::vector<float> values;
    for (const Declared &d : declared_)
        values.insert(values.end(), d.values.begin(), d.values.end());
    const std::size_t total = values.size();
    // Adam's second moments are allocated for SGD too, so that every parameter is alike.
    const tpurt::Tensor w = upload(device_, values, {total});
    all_.emplace(CardParam{"", w, zeros(device_, {total}), zeros(device_, {total}),
                           zeros(device_, {total}), w});
    if (precision_ == Precision::Bf16) {
        all_->c = tpurt::Tensor::empty(device_, tpurt::DType::Bf16, {total});
        copy_in(stream_, all_->c, values);
    }
    std::size_t at = 0;
    for (const Declared &d : declared_) {
        const std::size_t n = d.values.size();
        const auto view = [&](const tpurt::Tensor &t) {
            return t.slice(0, at, at + n).reshape(d.shape);
        };
        const tpurt::Tensor pw = view(all_->w);
        params_.push_back({d.key, pw, view(all_->g), view(all_->m), view(all_->v),
                           d.copied ? view(all_->c) : pw});
        offsets_.push_back(at);
        at += n;
    }
    offsets_.push_back(at);
    declared_.clear();
}

const CardParam &CardParams::flat() const {
    if (!all_)
        throw std::logic_error("CardParams::flat before place()");
    return *all_;
}

tpurt::Tensor CardParams::gradients(ParamRange range) const {
    if (range.count == 0 || range.first + range.count > params_.size())
        throw std::out_of_range("CardParams::gradients: parameters " + std::to_string(range.first) +
                                " + " + std::to_string(range.count) + " of " +
                                std::to_string(params_.size()));
    return all_->g.slice(0, offsets_[range.first], offsets_[range.first + range.count]);
}

void CardParams::write_hyperparameters() {
    const auto hp = opt_.kind == OptimizerKind::Sgd
                        ? tpurt::sgd_hyperparameters(opt_.lr, opt_.momentum)
                        : tpurt::adam_hyperparameters(opt_.lr, opt_.beta1, opt_.beta2, opt_.eps,
                                                      0.0f, steps_ + 1);
    hp_pending_.emplace(hp.begin(), hp.end());
}

void CardParams::set_lr(float lr) {
    if (lr == opt_.lr)
        return;
    opt_.lr = lr;
    write_hyperparameters();
}

void CardParams::step() {
    if (hp_pending_) {
        copy_in(stream_, hp_, *hp_pending_);
        hp_pending_.reset();
    }
    queue_update();
    ++steps_;
    if (opt_.kind == OptimizerKind::Adam)
        write_hyperparameters(); // SGD's stay
}

tpurt::Graph CardParams::capture_step(const std::string &name,
                                      const std::function<void()> &queue_ops) {
    stream_.begin_capture();
    try {
        queue_ops();
        queue_update();
    } catch (...) {
        try {
            (void)stream_.end_capture(name);
        } catch (const tpurt::Error &) { // nothing was captured
        }
        throw;
    }
    tpurt::Graph graph = stream_.end_capture(name);
    graph.add_parameter("hyperparameters", hp_);
    return graph;
}

void CardParams::replay_step(tpurt::Graph &step) {
    if (hp_pending_) {
        step.set_parameter("hyperparameters", *hp_pending_);
        hp_pending_.reset();
    }
    step.replay(stream_);
    ++steps_;
    if (opt_.kind == OptimizerKind::Adam)
        write_hyperparameters(); // SGD's stay
}

void CardParams::queue_update() {
    if (!all_)
        throw std::logic_error("CardParams::step before place()");
    const CardParam &a = *all_;
    const tpurt::Tensor *copy = a.c.dtype() == tpurt::DType::Bf16 ? &a.c : nullptr;
    if (opt_.kind == OptimizerKind::Sgd)
        tpurt::sgd_momentum_step(stream_, a.w, a.g, a.m, hp_, copy);
    else
        tpurt::adam_step(stream_, a.w, a.g, a.m, a.v, hp_, copy);
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
    for (const CardParam &p : params_) {
        get(stream_, c, m + p.key, p.m);
        if (adam)
            get(stream_, c, "adam.v" + p.key, p.v);
    }
    steps_ = c.step;
    if (adam) {
        auto t = c.notes.find("adam.t");
        if (t == c.notes.end())
            throw tpu_data::DataError("checkpoint of " + c.model, "no note adam.t");
        steps_ = std::stoull(t->second);
        write_hyperparameters();
    }
}

} // namespace tpu_train
