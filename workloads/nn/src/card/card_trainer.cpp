// SPDX-License-Identifier: MIT
// card_trainer.cpp - a graph's training step as card ops on the model's stream: the nodes'
// forward lowerings in order, the fused loss, their vjp lowerings in reverse order with each
// input gradient written or added, the optimiser's update; captured once per batch size. A ReLU
// that alone reads a dense layer or convolution runs in its epilogue, and a conv block's
// gradients at the pooled size (plan_fusion).
#include "tpu_nn/card_trainer.hpp"
#include "tpu_nn/card_lowering.hpp"

#include <algorithm>
#include <span>
#include <stdexcept>

namespace tpu_nn {

CardTrainer::CardTrainer(tpurt::Device &device, const Graph &graph, const ParamValues &values,
                         const tpu_train::OptimizerConfig &opt, tpu_train::Precision precision)
    : device_(device), graph_(graph), params_(device, opt, precision),
      dtype_(tpu_train::compute_dtype(precision)), captured_(opt.captured) {
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
        // Weights are read in the compute dtype, biases and layer norms' scales in fp32.
        params_.add(graph_.param_key(i), values[i], p.shape, p.init == Init::He);
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
        if (written[n] && !nodes[n].params.empty())
            parts_.push_back(n);
        for (NodeId i : nodes[n].inputs) {
            Route r = Route::None;
            if (written[n] && i != 0)
                r = written[i] ? Route::Add : Route::Write;
            routes_[n].push_back(r);
            if (r != Route::None)
                written[i] = true;
        }
    }
    plan_types();
    plan_fusion();
}

void CardTrainer::plan_fusion() {
    const std::vector<Node> &nodes = graph_.nodes();
    fused_.assign(nodes.size(), Fused::No);
    // The one reader of node n, or 0.
    auto reader = [&](NodeId n) {
        if (graph_.consumers(n) != 1)
            return NodeId(0);
        for (NodeId r = n + 1; r < nodes.size(); ++r)
            if (std::find(nodes[r].inputs.begin(), nodes[r].inputs.end(), n) !=
                nodes[r].inputs.end())
                return r;
        return NodeId(0);
    };
    for (NodeId n = 1; n < graph_.output(); ++n) {
        const NodeId in = nodes[n].inputs.empty() ? 0 : nodes[n].inputs[0];
        if (nodes[n].kind == OpKind::Flatten && in != 0 && reader(in) == n && backward_[n] &&
            types_[n].act == types_[in].act && types_[n].in[0] == types_[in].act &&
            types_[n].grad == types_[in].grad)
            fused_[n] = Fused::View;
    }
    for (NodeId a = 1; a < graph_.output(); ++a) {
        const OpKind kind = nodes[a].kind;
        const NodeId b = reader(a);
        if ((kind != OpKind::Dense && kind != OpKind::Conv2d) || b == 0 ||
            nodes[b].kind != OpKind::Activation || nodes[b].attrs.act != Act::Relu ||
            types_[b].act != types_[a].act || types_[b].in[0] != types_[a].act)
            continue;
        fused_[a] = Fused::Epilogue;
        fused_[b] = Fused::Relu;
        const NodeId c = kind == OpKind::Conv2d && b != graph_.output() ? reader(b) : 0;
        if (c == 0 || nodes[c].kind != OpKind::Pool || nodes[c].attrs.pool != PoolKind::Max ||
            types_[c].in[0] != types_[b].act || !backward_[c])
            continue;
        fused_[a] = Fused::BlockConv;
        fused_[b] = Fused::BlockRelu;
        fused_[c] = Fused::BlockPool;
    }
}

void CardTrainer::plan_types() {
    const std::vector<Node> &nodes = graph_.nodes();
    const ForwardTypes f = forward_types(graph_, dtype_);
    types_.assign(nodes.size(), Types{});
    for (NodeId n = 0; n < nodes.size(); ++n) {
        types_[n].act = f.act[n];
        types_[n].in = f.in[n];
        if (n > 0 && card_rule(nodes[n].kind).dout == Needs::Compute)
            types_[n].grad = dtype_; // else fp32
    }
    for (NodeId n = 1; n < nodes.size(); ++n)
        for (NodeId i : nodes[n].inputs)
            types_[n].din.push_back(card_rule(nodes[n].kind).fp32_din || i == 0 ? tpurt::DType::Fp32
                                                                                : types_[i].grad);
}

void CardTrainer::copy_to(CpuExecutor &net) {
    if (net.graph().params().size() != graph_.params().size())
        throw std::invalid_argument("CardTrainer::copy_to: a network of another graph");
    net.values() = values();
}

tpurt::Tensor CardTrainer::tensor(tpurt::DType type, std::size_t batch, const Shape &shape) {
    std::vector<std::size_t> dims{batch};
    dims.insert(dims.end(), shape.begin(), shape.end());
    return tpurt::Tensor::empty(device_, type, std::move(dims));
}

CardTrainer::Work &CardTrainer::work(std::size_t batch) {
    if (batch == 0)
        throw std::invalid_argument("CardTrainer: an empty batch");
    auto it = work_.find(batch);
    if (it != work_.end())
        return it->second;
    const std::vector<Node> &nodes = graph_.nodes();
    const std::size_t classes = nodes[graph_.output()].shape[0];
    const tpurt::DType fp32 = tpurt::DType::Fp32;
    Work w{tensor(dtype_, batch, nodes[0].shape),
           tensor(fp32, batch, {classes}),
           tensor(fp32, batch, {}),
           {},
           {},
           {},
           {},
           {},
           {},
           std::nullopt};
    w.acts.push_back(w.x);
    w.grads.push_back(std::nullopt);
    w.inputs.emplace_back();
    w.scratch.emplace_back();
    w.merged.emplace_back();
    w.block.emplace_back();
    auto maybe = [&](bool needed, tpurt::DType type, const Shape &shape) {
        return needed ? std::optional(tensor(type, batch, shape)) : std::nullopt;
    };
    for (NodeId n = 1; n < nodes.size(); ++n) {
        const Types &t = types_[n];
        w.acts.push_back(tensor(t.act, batch, nodes[n].shape));
        w.grads.push_back(tensor(t.grad, batch, nodes[n].shape));
        w.inputs.emplace_back();
        w.scratch.emplace_back();
        w.merged.emplace_back();
        w.block.push_back(maybe(fused_[n] == Fused::BlockPool, tpurt::DType::Fp32, nodes[n].shape));
        for (std::size_t k = 0; k < nodes[n].inputs.size(); ++k) {
            const NodeId i = nodes[n].inputs[k];
            const Shape &shape = nodes[i].shape;
            const Route r = n <= graph_.output() ? routes_[n][k] : Route::None;
            const bool in_place = r == Route::Write && t.din[k] == types_[i].grad;
            const bool unwanted =
                r == Route::None && backward_[n] && card_rule(nodes[n].kind).always_din;
            w.inputs.back().push_back(maybe(t.in[k] != types_[i].act, t.in[k], shape));
            w.scratch.back().push_back(
                maybe((r != Route::None && !in_place) || unwanted, t.din[k], shape));
            w.merged.back().push_back(
                maybe(r == Route::Add && t.din[k] != types_[i].grad, types_[i].grad, shape));
        }
    }
    for (NodeId n = 1; n < nodes.size(); ++n) {
        const NodeId in = nodes[n].inputs.empty() ? 0 : nodes[n].inputs[0];
        if (fused_[n] == Fused::Relu || fused_[n] == Fused::BlockRelu)
            w.acts[n] = w.acts[in];     // the producer's epilogue applied it
        if (fused_[n] == Fused::View) { // the same rows read as features
            w.acts[n] = w.acts[in].reshape(w.acts[n].shape());
            w.grads[n] = w.grads[in]->reshape(w.grads[n]->shape());
        }
    }
    return work_.emplace(batch, std::move(w)).first->second;
}

void CardTrainer::queue_forward(Work &w) {
    const std::vector<Node> &nodes = graph_.nodes();
    tpurt::Stream &s = params_.stream();
    for (NodeId n = 1; n <= graph_.output(); ++n) {
        if (fused_[n] == Fused::Relu || fused_[n] == Fused::BlockRelu || fused_[n] == Fused::View)
            continue;
        CardCall c{s, nodes[n].attrs, {}, {}, w.acts[n], nullptr, {}};
        if (fused_[n] == Fused::Epilogue || fused_[n] == Fused::BlockConv)
            c.epilogue = tpurt::Activation::Relu;
        for (std::size_t k = 0; k < nodes[n].inputs.size(); ++k) {
            const std::optional<tpurt::Tensor> &converted = w.inputs[n][k];
            if (converted)
                tpurt::cast(s, w.acts[nodes[n].inputs[k]], *converted);
            c.in.push_back(converted ? &*converted : &w.acts[nodes[n].inputs[k]]);
        }
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

void CardTrainer::queue_vjp(Work &w, NodeId n) {
    tpurt::Stream &s = params_.stream();
    const std::vector<Node> &nodes = graph_.nodes();
    if (fused_[n] == Fused::BlockRelu || fused_[n] == Fused::View)
        return; // in its pooling's conv_block_vjp; a view's gradient is its input's
    if (fused_[n] == Fused::BlockPool) {
        const NodeId conv = nodes[nodes[n].inputs[0]].inputs[0];
        conv_block_vjp(s, nodes[n].attrs, w.acts[conv], w.acts[n], *w.grads[n], *w.block[n],
                       params_[nodes[conv].params[1]].g, *w.grads[conv]);
        return;
    }
    CardCall c{s, nodes[n].attrs, {}, {}, w.acts[n], &*w.grads[n], {}};
    c.bias_grad_written = fused_[n] == Fused::BlockConv;
    for (std::size_t k = 0; k < nodes[n].inputs.size(); ++k) {
        const NodeId i = nodes[n].inputs[k];
        const std::optional<tpurt::Tensor> &converted = w.inputs[n][k];
        c.in.push_back(converted ? &*converted : &w.acts[i]);
        const std::optional<tpurt::Tensor> &scratch = w.scratch[n][k];
        c.din.push_back(scratch                         ? &*scratch
                        : routes_[n][k] == Route::Write ? &*w.grads[i]
                                                        : nullptr);
    }
    for (std::size_t p : nodes[n].params)
        c.params.push_back({&params_[p].c, &params_[p].g});
    card_rule(nodes[n].kind).vjp(c);
    for (std::size_t k = 0; k < nodes[n].inputs.size(); ++k) {
        const std::optional<tpurt::Tensor> &scratch = w.scratch[n][k], &merged = w.merged[n][k];
        const tpurt::Tensor *g =
            routes_[n][k] == Route::None ? nullptr : &*w.grads[nodes[n].inputs[k]];
        if (g == nullptr || !scratch)
            continue;
        if (routes_[n][k] == Route::Write) {
            tpurt::cast(s, *scratch, *g); // the vjp's dtype into the gradient's
            continue;
        }
        if (merged)
            tpurt::cast(s, *scratch, *merged);
        tpurt::add(s, *g, merged ? *merged : *scratch, *g);
    }
}

tpu_train::ParamRange CardTrainer::queue_part(Work &w, std::size_t k) {
    if (k >= parts_.size())
        throw std::out_of_range("CardTrainer::queue_backward: part " + std::to_string(k) + " of " +
                                std::to_string(parts_.size()));
    const NodeId last = parts_[k];
    for (NodeId n = k == 0 ? graph_.output() : parts_[k - 1] - 1; n >= last; --n)
        if (backward_[n])
            queue_vjp(w, n);
    const std::vector<std::size_t> &p = graph_.node(last).params;
    return {p.front(), p.size()};
}

void CardTrainer::queue_backward_ops(Work &w) {
    for (std::size_t k = 0; k < parts_.size(); ++k)
        queue_part(w, k);
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
    return queue_part(current(), k);
}

tpu_train::StepResult CardTrainer::result(const std::uint8_t *labels) {
    const Work &w = current();
    return tpu_train::step_result(params_.stream(), w.loss, w.acts[graph_.output()], labels);
}

tpu_train::StepResult CardTrainer::forward_backward(const float *x, const std::uint8_t *labels,
                                                    std::size_t batch) {
    queue_forward_loss(x, labels, batch, batch);
    queue_backward_ops(current());
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
