// SPDX-License-Identifier: MIT
// card_mlp.cpp - one training step of the MLP as card ops queued on the model's stream
// (card_mlp.hpp): dense layers with bias and ReLU forward, the fused softmax cross-entropy,
// weight, bias and input gradients, the ReLU gradient, and the optimiser's in-place update of the
// fp32 masters, in fp32 or bf16 precision (card_params.hpp); one wait at the step's end.
#include "card_mlp.hpp"

#include <span>
#include <stdexcept>
#include <string>

namespace tpu_train {

namespace {

using tpurt::DType;
using tpurt::Tensor;

} // namespace

CardMlp::CardMlp(tpurt::Device &device, const tpu_model::CpuMlp &net, const OptimizerConfig &opt,
                 Precision precision)
    : device_(device), dtype_(compute_dtype(precision)), params_(device, opt, precision),
      captured_(opt.captured) {
    for (std::size_t i = 0; i < net.layers().size(); ++i) {
        const tpu_model::Dense &l = net.layers()[i];
        layers_.push_back(Layer{l.in, l.out});
        params_.add(std::to_string(i) + ".w", l.w, {l.in, l.out}, true);
        params_.add(std::to_string(i) + ".b", l.b, {l.out}, false);
    }
    params_.place();
}

CardMlp::Work &CardMlp::work(std::size_t batch) {
    auto it = work_.find(batch);
    if (it != work_.end())
        return it->second;
    // The compute dtype for what the matmuls read (x, hidden outputs, gradients at the layers'
    // outputs); fp32 for the logits, the loss and the input gradients the matmuls write.
    const std::size_t classes = layers_.back().out, n = layers_.size();
    Work w{Tensor::empty(device_, dtype_, {batch, layers_.front().in}),
           Tensor::empty(device_, DType::Fp32, {batch, classes}),
           Tensor::empty(device_, DType::Fp32, {batch}),
           {},
           {},
           {},
           std::nullopt};
    w.h.push_back(w.x);
    for (std::size_t i = 0; i < n; ++i) {
        w.h.push_back(
            Tensor::empty(device_, i + 1 < n ? dtype_ : DType::Fp32, {batch, layers_[i].out}));
        w.d.push_back(Tensor::empty(device_, dtype_, {batch, layers_[i].out}));
        if (i > 0)
            w.dh.push_back(Tensor::empty(device_, DType::Fp32, {batch, layers_[i].in}));
    }
    return work_.emplace(batch, std::move(w)).first->second;
}

void CardMlp::queue_forward_loss(const float *x, const std::uint8_t *labels, std::size_t batch,
                                 std::size_t mean_over) {
    if (batch == 0)
        throw std::invalid_argument("CardMlp: an empty batch");
    Work &w = work(batch);
    current_ = &w;
    tpurt::Stream &s = params_.stream();
    copy_targets(s, w.targets, labels, batch, "CardMlp");
    copy_in(s, w.x, std::span<const float>(x, batch * layers_.front().in));
    queue_step_ops(w, mean_over);
}

void CardMlp::queue_step_ops(Work &w, std::size_t mean_over) {
    tpurt::Stream &s = params_.stream();
    const std::size_t n = layers_.size();
    for (std::size_t i = 0; i < n; ++i)
        tpurt::dense(s, w.h[i], weights(i).c, &bias(i).w, w.h[i + 1],
                     i + 1 < n ? tpurt::Activation::Relu : tpurt::Activation::None);
    tpurt::softmax_cross_entropy(s, w.h[n], w.targets, w.loss, w.d[n - 1], 1.0f / float(mean_over));
}

CardMlp::Work &CardMlp::current() {
    if (current_ == nullptr)
        throw std::logic_error("CardMlp: no batch queued");
    return *current_;
}

ParamRange CardMlp::queue_backward(std::size_t k) {
    if (k >= layers_.size())
        throw std::out_of_range("CardMlp::queue_backward: part " + std::to_string(k) + " of " +
                                std::to_string(backward_parts()));
    Work &w = current();
    tpurt::Stream &s = params_.stream();
    const std::size_t i = layers_.size() - 1 - k;
    tpurt::matmul_tn(s, w.h[i], w.d[i], weights(i).g);
    tpurt::column_sums(s, w.d[i], bias(i).g);
    if (i > 0) {
        tpurt::matmul_nt(s, w.d[i], weights(i).c, w.dh[i - 1]);
        // ReLU's gradient from its output: h > 0 exactly where its input was.
        tpurt::activation_grad(s, tpurt::GradFunction::Relu, w.h[i], w.dh[i - 1], w.d[i - 1]);
    }
    return {2 * i, 2};
}

StepResult CardMlp::result(const std::uint8_t *labels) {
    return step_result(params_.stream(), current().loss, current().h.back(), labels);
}

CardMlp::Work &CardMlp::queue_forward_backward(const float *x, const std::uint8_t *labels,
                                               std::size_t batch) {
    queue_forward_loss(x, labels, batch, batch);
    for (std::size_t k = 0; k < backward_parts(); ++k)
        queue_backward(k);
    return current();
}

StepResult CardMlp::forward_backward(const float *x, const std::uint8_t *labels,
                                     std::size_t batch) {
    const Work &w = queue_forward_backward(x, labels, batch);
    return step_result(params_.stream(), w.loss, w.h.back(), labels);
}

StepResult CardMlp::step(const float *x, const std::uint8_t *labels, std::size_t batch) {
    if (!captured_) {
        const Work &w = queue_forward_backward(x, labels, batch);
        params_.step();
        return step_result(params_.stream(), w.loss, w.h.back(), labels);
    }
    if (batch == 0)
        throw std::invalid_argument("CardMlp: an empty batch");
    Work &w = work(batch);
    current_ = &w;
    tpurt::Stream &s = params_.stream();
    copy_targets(s, w.targets, labels, batch, "CardMlp");
    copy_in(s, w.x, std::span<const float>(x, batch * layers_.front().in));
    if (!w.step)
        w.step = params_.capture_step("mlp step", [&] {
            queue_step_ops(w, batch);
            for (std::size_t k = 0; k < backward_parts(); ++k)
                queue_backward(k);
        });
    params_.replay_step(*w.step);
    return step_result(s, w.loss, w.h.back(), labels);
}

std::vector<float> CardMlp::weight_grad(std::size_t layer) const {
    return weights(layer).g.to_vector<float>();
}
std::vector<float> CardMlp::bias_grad(std::size_t layer) const {
    return bias(layer).g.to_vector<float>();
}

void CardMlp::copy_to(tpu_model::CpuMlp &net) const {
    if (net.layers().size() != layers_.size())
        throw std::invalid_argument("CardMlp::copy_to: a network of another depth");
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        tpu_model::Dense &d = net.layers()[i];
        if (d.in != layers_[i].in || d.out != layers_[i].out)
            throw std::invalid_argument("CardMlp::copy_to: a network of other sizes");
        d.w = weights(i).w.to_vector<float>();
        d.b = bias(i).w.to_vector<float>();
    }
}

} // namespace tpu_train
