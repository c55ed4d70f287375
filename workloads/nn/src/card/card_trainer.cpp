// SPDX-License-Identifier: MIT
// card_trainer.cpp - a graph's training step as card ops on the model's stream: the nodes'
// forward lowerings in order, the fused loss, their vjp lowerings in reverse order with each
// input gradient written or added, the optimiser's update; captured once per batch size.
#include "tpu_nn/card_trainer.hpp"
#include "tpu_nn/card_lowering.hpp"

#include <span>
#include <stdexcept>

namespace tpu_nn {

CardTrainer::CardTrainer(tpurt::Device &device, const Graph &graph, const ParamValues &values,
                         const tpu_train::OptimizerConfig &opt)
    : device_(device), graph_(graph), params_(device, opt, tpu_train::Precision::Fp32),
      captured_(opt.captured) {
    const std::vector<Node> &nodes = graph_.nodes();
    if (graph_.node(graph_.output()).shape.size() != 1)
        throw std::invalid_argument("CardTrainer: the output (the logits) must be a vector");
    if (values.size() != graph_.params().size())
        throw std::invalid_argument("CardTrainer: " + std::to_string(values.size()) +
                                    " parameter values for " +
                                    std::to_string(graph_.params().size()) + " parameters");
    for (NodeId n = 1; n <= graph_.output(); ++n) {
        try {
            card_rule(nodes[n].kind).check(nodes[n].attrs);
        } catch (const std::invalid_argument &e) {
            throw std::invalid_argument("CardTrainer: " + std::string(op_rule(nodes[n].kind).name) +
                                        " " + nodes[n].name + ": " + e.what());
        }
    }
    for (std::size_t i = 0; i < values.size(); ++i) {
        const ParamInfo &p = graph_.params()[i];
        if (values[i].size() != elements(p.shape))
            throw std::invalid_argument("CardTrainer: parameter " + p.name + " has " +
                                        std::to_string(values[i].size()) + " values, not " +
                                        std::to_string(elements(p.shape)));
        params_.add(graph_.param_key(i), values[i], p.shape, true);
    }
    params_.place();
    // Backward from the output: the last reader of a node writes its gradient, earlier ones
    // (in node order) add theirs; the input's gradient is not wanted.
    routes_.resize(nodes.size());
    backward_.assign(nodes.size(), false);
    std::vector<bool> written(nodes.size(), false);
    written[graph_.output()] = true;
    for (NodeId n = graph_.output(); n > 0; --n) {
        backward_[n] = written[n];
        for (NodeId i : nodes[n].inputs) {
            Route r = Route::None;
            if (written[n] && i != 0)
                r = written[i] ? Route::Add : Route::Write;
            routes_[n].push_back(r);
            if (r != Route::None)
                written[i] = true;
        }
    }
}

namespace {

const CpuExecutor &fp32_only(const CpuExecutor &net, tpu_train::Precision precision) {
    if (precision != tpu_train::Precision::Fp32)
        throw std::invalid_argument("model " + net.graph().name() +
                                    ": a spec model trains in fp32 on the card (--precision "
                                    "fp32); its bf16 lowering is not written yet");
    return net;
}

} // namespace

CardTrainer::CardTrainer(tpurt::Device &device, const CpuExecutor &net,
                         const tpu_train::OptimizerConfig &opt, tpu_train::Precision precision)
    : CardTrainer(device, fp32_only(net, precision).graph(), net.values(), opt) {}

void CardTrainer::copy_to(CpuExecutor &net) {
    if (net.graph().params().size() != graph_.params().size())
        throw std::invalid_argument("CardTrainer::copy_to: a network of another graph");
    net.values() = values();
}

tpurt::Tensor CardTrainer::tensor(std::size_t batch, const Shape &shape) {
    std::vector<std::size_t> dims{batch};
    dims.insert(dims.end(), shape.begin(), shape.end());
    return tpurt::Tensor::empty(device_, tpurt::DType::Fp32, std::move(dims));
}

CardTrainer::Work &CardTrainer::work(std::size_t batch) {
    if (batch == 0)
        throw std::invalid_argument("CardTrainer: an empty batch");
    auto it = work_.find(batch);
    if (it != work_.end())
        return it->second;
    const std::vector<Node> &nodes = graph_.nodes();
    const std::size_t classes = nodes[graph_.output()].shape[0];
    Work w{tensor(batch, nodes[0].shape),
           tensor(batch, {classes}),
           tensor(batch, {}),
           {},
           {},
           {},
           std::nullopt};
    w.acts.push_back(w.x);
    w.grads.push_back(std::nullopt);
    w.scratch.emplace_back();
    for (NodeId n = 1; n < nodes.size(); ++n) {
        w.acts.push_back(tensor(batch, nodes[n].shape));
        w.grads.push_back(tensor(batch, nodes[n].shape));
        std::vector<std::optional<tpurt::Tensor>> &s = w.scratch.emplace_back();
        for (std::size_t k = 0; k < nodes[n].inputs.size(); ++k) {
            const NodeId i = nodes[n].inputs[k];
            const bool needed = routes_[n].empty() ? false
                                                   : routes_[n][k] == Route::Add ||
                                                         (routes_[n][k] == Route::None &&
                                                          card_rule(nodes[n].kind).always_din);
            s.push_back(needed ? std::optional(tensor(batch, nodes[i].shape)) : std::nullopt);
        }
    }
    return work_.emplace(batch, std::move(w)).first->second;
}

void CardTrainer::queue_forward(Work &w) {
    const std::vector<Node> &nodes = graph_.nodes();
    for (NodeId n = 1; n <= graph_.output(); ++n) {
        CardCall c{params_.stream(), nodes[n].attrs, {}, {}, w.acts[n], nullptr, {}};
        for (NodeId i : nodes[n].inputs)
            c.in.push_back(&w.acts[i]);
        for (std::size_t p : nodes[n].params)
            c.params.push_back({&params_[p].c, &params_[p].g});
        card_rule(nodes[n].kind).forward(c);
    }
}

void CardTrainer::queue_loss(Work &w, std::size_t mean_over) {
    const NodeId out = graph_.output();
    tpurt::softmax_cross_entropy(params_.stream(), w.acts[out], w.targets, w.loss, *w.grads[out],
                                 1.0f / float(mean_over));
}

void CardTrainer::queue_backward_ops(Work &w) {
    tpurt::Stream &s = params_.stream();
    const std::vector<Node> &nodes = graph_.nodes();
    for (NodeId n = graph_.output(); n > 0; --n) {
        if (!backward_[n])
            continue;
        CardCall c{s, nodes[n].attrs, {}, {}, w.acts[n], &*w.grads[n], {}};
        for (std::size_t k = 0; k < nodes[n].inputs.size(); ++k) {
            const NodeId i = nodes[n].inputs[k];
            c.in.push_back(&w.acts[i]);
            const std::optional<tpurt::Tensor> &scratch = w.scratch[n][k];
            c.din.push_back(routes_[n][k] == Route::Write ? &*w.grads[i]
                            : scratch                     ? &*scratch
                                                          : nullptr);
        }
        for (std::size_t p : nodes[n].params)
            c.params.push_back({&params_[p].c, &params_[p].g});
        card_rule(nodes[n].kind).vjp(c);
        for (std::size_t k = 0; k < nodes[n].inputs.size(); ++k)
            if (routes_[n][k] == Route::Add) {
                const tpurt::Tensor &g = *w.grads[nodes[n].inputs[k]];
                tpurt::add(s, g, *w.scratch[n][k], g);
            }
    }
}

CardTrainer::Work &CardTrainer::queue_copies(const float *x, const std::uint8_t *labels,
                                             std::size_t batch) {
    Work &w = work(batch);
    tpurt::Stream &s = params_.stream();
    if (labels != nullptr)
        tpu_train::copy_targets(s, w.targets, labels, batch, "CardTrainer");
    tpu_train::copy_in(s, w.x, std::span<const float>(x, w.x.element_count()));
    return w;
}

void CardTrainer::queue_forward_loss(const float *x, const std::uint8_t *labels, std::size_t batch,
                                     std::size_t mean_over) {
    Work &w = queue_copies(x, labels, batch);
    current_ = &w;
    queue_forward(w);
    queue_loss(w, mean_over);
}

CardTrainer::Work &CardTrainer::current() {
    if (current_ == nullptr)
        throw std::logic_error("CardTrainer: no batch queued");
    return *current_;
}

tpu_train::ParamRange CardTrainer::queue_backward(std::size_t k) {
    if (k != 0)
        throw std::out_of_range("CardTrainer::queue_backward: part " + std::to_string(k) + " of 1");
    queue_backward_ops(current());
    return {0, params_.size()};
}

tpu_train::StepResult CardTrainer::result(const std::uint8_t *labels) {
    const Work &w = current();
    return tpu_train::step_result(params_.stream(), w.loss, w.acts[graph_.output()], labels);
}

tpu_train::StepResult CardTrainer::forward_backward(const float *x, const std::uint8_t *labels,
                                                    std::size_t batch) {
    queue_forward_loss(x, labels, batch, batch);
    queue_backward(0);
    return result(labels);
}

tpu_train::StepResult CardTrainer::step(const float *x, const std::uint8_t *labels,
                                        std::size_t batch) {
    Work &w = queue_copies(x, labels, batch);
    current_ = &w;
    if (!captured_) {
        queue_forward(w);
        queue_loss(w, batch);
        queue_backward_ops(w);
        params_.step();
    } else {
        if (!w.step)
            w.step = params_.capture_step(graph_.name().empty() ? "nn step" : graph_.name(), [&] {
                queue_forward(w);
                queue_loss(w, batch);
                queue_backward_ops(w);
            });
        params_.replay_step(*w.step);
    }
    return result(labels);
}

std::vector<float> CardTrainer::logits(const float *x, std::size_t batch) {
    Work &w = queue_copies(x, nullptr, batch);
    queue_forward(w);
    params_.stream().synchronize();
    return w.acts[graph_.output()].to_vector<float>();
}

ParamValues CardTrainer::gradients() {
    params_.stream().synchronize();
    ParamValues g;
    for (std::size_t i = 0; i < params_.size(); ++i)
        g.push_back(params_[i].g.to_vector<float>());
    return g;
}

ParamValues CardTrainer::values() {
    params_.stream().synchronize();
    ParamValues v;
    for (std::size_t i = 0; i < params_.size(); ++i)
        v.push_back(params_[i].w.to_vector<float>());
    return v;
}

} // namespace tpu_nn
