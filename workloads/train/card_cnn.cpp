// SPDX-License-Identifier: MIT
// card_cnn.cpp - one training step of the CNN as card ops queued on the model's stream
// (card_cnn.hpp): per conv block the convolution with its bias and ReLU and the max pooling
// forward and their gradients backward, the dense layers and the fused softmax cross-entropy, and
// the optimiser's update of the fp32 masters; one wait at the step's end.
#include "card_cnn.hpp"

#include <span>
#include <stdexcept>
#include <string>

namespace tpu_train {

namespace {

using tpurt::DType;
using tpurt::Tensor;

const tpurt::Conv2dParams same_3x3{1, 1, 1, 1}; // stride 1, zero padding 1

} // namespace

CardCnn::CardCnn(tpurt::Device &device, const tpu_model::CpuCnn &net, const OptimizerConfig &opt,
                 Precision precision)
    : device_(device), shape_(net.shape()), blocks_(net.convs().size()),
      dense_(net.head().layers().size()), dtype_(compute_dtype(precision)),
      params_(device, opt, precision), captured_(opt.captured) {
    for (std::size_t i = 0; i < blocks_; ++i) {
        const tpu_model::Conv3x3 &l = net.convs()[i];
        const std::size_t h = shape_.block_height(i), w = shape_.block_width(i);
        if (h % 2 != 0 || w % 2 != 0)
            throw std::invalid_argument("CardCnn: conv block " + std::to_string(i) + "'s " +
                                        std::to_string(h) + "x" + std::to_string(w) +
                                        " maps do not pool evenly (the card's pooling gradient "
                                        "needs even sizes)");
        params_.add(".conv" + std::to_string(i) + ".w", l.w, {3, 3, l.in, l.out}, true);
        params_.add(".conv" + std::to_string(i) + ".b", l.b, {l.out}, false);
    }
    for (std::size_t j = 0; j < dense_; ++j) {
        const tpu_model::Dense &l = net.head().layers()[j];
        params_.add(".layer" + std::to_string(j) + ".w", l.w, {l.in, l.out}, true);
        params_.add(".layer" + std::to_string(j) + ".b", l.b, {l.out}, false);
    }
    params_.place();
}

CardCnn::Work &CardCnn::work(std::size_t batch) {
    auto it = work_.find(batch);
    if (it != work_.end())
        return it->second;
    // In the compute dtype: what the matmuls and convolutions read (x, the activations, the
    // gradients at the convolutions' and dense layers' outputs); fp32: the logits, loss, the
    // matmuls' and convolutions' own gradient outputs and the bias gradients' inputs.
    auto tensor = [&](DType type, std::vector<std::size_t> shape) {
        return Tensor::empty(device_, type, std::move(shape));
    };
    Work w{tensor(dtype_, {batch, shape_.height, shape_.width, shape_.channels}),
           tensor(DType::Fp32, {batch, shape_.classes}),
           tensor(DType::Fp32, {batch}),
           {},
           {},
           {},
           {},
           std::nullopt};
    for (std::size_t i = 0; i < blocks_; ++i) {
        const std::size_t h = shape_.block_height(i), wd = shape_.block_width(i);
        const std::size_t f = shape_.filters[i];
        const std::vector<std::size_t> full = {batch, h, wd, f}, pooled = {batch, h / 2, wd / 2, f};
        w.blocks.push_back(Block{tensor(dtype_, full), tensor(dtype_, pooled),
                                 tensor(DType::Fp32, pooled), tensor(DType::Fp32, pooled),
                                 tensor(dtype_, full)});
    }
    w.h.push_back(w.blocks.back().p.reshape({batch, shape_.flat_size()}));
    for (std::size_t j = 0; j < dense_; ++j) {
        const std::size_t in = dense_w(j).w.size(0), out = dense_w(j).w.size(1);
        w.h.push_back(tensor(j + 1 < dense_ ? dtype_ : DType::Fp32, {batch, out}));
        w.d.push_back(tensor(dtype_, {batch, out}));
        w.dh.push_back(j == 0 ? w.blocks.back().dp.reshape({batch, in})
                              : tensor(DType::Fp32, {batch, in}));
    }
    return work_.emplace(batch, std::move(w)).first->second;
}

void CardCnn::queue_forward(Work &w, const float *x, std::size_t batch) {
    copy_in(params_.stream(), w.x,
            std::span<const float>(x, batch * shape_.height * shape_.width * shape_.channels));
    queue_forward_ops(w);
}

void CardCnn::queue_forward_ops(Work &w) {
    tpurt::Stream &s = params_.stream();
    for (std::size_t i = 0; i < blocks_; ++i) {
        Block &b = w.blocks[i];
        tpurt::conv2d_layer(s, i == 0 ? w.x : w.blocks[i - 1].p, conv_w(i).c, &conv_b(i).w, b.s,
                            same_3x3, tpurt::Activation::Relu);
        tpurt::pool2d(s, tpurt::PoolOp::Max, b.s, b.p, 2, 2, 2, 2);
    }
    for (std::size_t j = 0; j < dense_; ++j)
        tpurt::dense(s, w.h[j], dense_w(j).c, &dense_b(j).w, w.h[j + 1],
                     j + 1 < dense_ ? tpurt::Activation::Relu : tpurt::Activation::None);
}

std::vector<float> CardCnn::logits(const float *x, std::size_t batch) {
    if (batch == 0)
        throw std::invalid_argument("CardCnn: an empty batch");
    Work &w = work(batch);
    queue_forward(w, x, batch);
    params_.stream().synchronize();
    return w.h.back().to_vector<float>();
}

void CardCnn::queue_forward_loss(const float *x, const std::uint8_t *labels, std::size_t batch,
                                 std::size_t mean_over) {
    if (batch == 0)
        throw std::invalid_argument("CardCnn: an empty batch");
    Work &w = work(batch);
    current_ = &w;
    tpurt::Stream &s = params_.stream();
    copy_targets(s, w.targets, labels, batch, "CardCnn");
    queue_forward(w, x, batch);
    tpurt::softmax_cross_entropy(s, w.h[dense_], w.targets, w.loss, w.d[dense_ - 1],
                                 1.0f / float(mean_over));
}

CardCnn::Work &CardCnn::current() {
    if (current_ == nullptr)
        throw std::logic_error("CardCnn: no batch queued");
    return *current_;
}

ParamRange CardCnn::queue_backward(std::size_t k) {
    Work &w = current();
    tpurt::Stream &s = params_.stream();
    if (k < dense_) { // dense layers from the last
        const std::size_t j = dense_ - 1 - k;
        tpurt::matmul_tn(s, w.h[j], w.d[j], dense_w(j).g);
        tpurt::column_sums(s, w.d[j], dense_b(j).g);
        tpurt::matmul_nt(s, w.d[j], dense_w(j).c, w.dh[j]);
        if (j > 0) // ReLU's gradient from its output: h > 0 exactly where its input was
            tpurt::activation_grad(s, tpurt::GradFunction::Relu, w.h[j], w.dh[j], w.d[j - 1]);
        return {2 * (blocks_ + j), 2};
    }
    if (k >= dense_ + blocks_)
        throw std::out_of_range("CardCnn::queue_backward: part " + std::to_string(k) + " of " +
                                std::to_string(backward_parts()));
    const std::size_t i = blocks_ - 1 - (k - dense_); // then the conv blocks from the last
    const Block &b = w.blocks[i];
    const std::size_t f = shape_.filters[i];
    tpurt::activation_grad(s, tpurt::GradFunction::Relu, b.p, b.dp, b.dq);
    tpurt::column_sums(s, b.dq.reshape({b.dq.element_count() / f, f}), conv_b(i).g);
    tpurt::max_pool2d_grad(s, b.s, b.p, b.dq, b.ds, 2, 2, 2, 2);
    const Tensor &in = i == 0 ? w.x : w.blocks[i - 1].p;
    tpurt::conv2d_weight_grad(s, in, b.ds, conv_w(i).g, same_3x3);
    if (i > 0)
        tpurt::conv2d_input_grad(s, b.ds, conv_w(i).c, w.blocks[i - 1].dp, same_3x3);
    return {2 * i, 2};
}

StepResult CardCnn::result(const std::uint8_t *labels) {
    const Work &w = current();
    return step_result(params_.stream(), w.loss, w.h[dense_], labels);
}

CardCnn::Work &CardCnn::queue_forward_backward(const float *x, const std::uint8_t *labels,
                                               std::size_t batch) {
    queue_forward_loss(x, labels, batch, batch);
    for (std::size_t k = 0; k < backward_parts(); ++k)
        queue_backward(k);
    return current();
}

StepResult CardCnn::forward_backward(const float *x, const std::uint8_t *labels,
                                     std::size_t batch) {
    const Work &w = queue_forward_backward(x, labels, batch);
    return step_result(params_.stream(), w.loss, w.h[dense_], labels);
}

void CardCnn::queue_step_ops(Work &w) {
    queue_forward_ops(w);
    tpurt::softmax_cross_entropy(params_.stream(), w.h[dense_], w.targets, w.loss, w.d[dense_ - 1],
                                 1.0f / float(w.loss.element_count()));
    for (std::size_t k = 0; k < backward_parts(); ++k)
        queue_backward(k);
}

StepResult CardCnn::step(const float *x, const std::uint8_t *labels, std::size_t batch) {
    if (!captured_) {
        const Work &w = queue_forward_backward(x, labels, batch);
        params_.step();
        return step_result(params_.stream(), w.loss, w.h[dense_], labels);
    }
    if (batch == 0)
        throw std::invalid_argument("CardCnn: an empty batch");
    Work &w = work(batch);
    current_ = &w;
    tpurt::Stream &s = params_.stream();
    copy_targets(s, w.targets, labels, batch, "CardCnn");
    copy_in(s, w.x,
            std::span<const float>(x, batch * shape_.height * shape_.width * shape_.channels));
    if (!w.step)
        w.step = params_.capture_step("cnn step", [&] { queue_step_ops(w); });
    params_.replay_step(*w.step);
    return step_result(s, w.loss, w.h[dense_], labels);
}

std::vector<std::vector<float>> CardCnn::gradients() const {
    std::vector<std::vector<float>> g;
    for (std::size_t i = 0; i < params_.size(); ++i)
        g.push_back(params_[i].g.to_vector<float>());
    return g;
}

void CardCnn::copy_to(tpu_model::CpuCnn &net) const {
    std::vector<tpu_model::Param> p = net.params();
    if (p.size() != params_.size())
        throw std::invalid_argument("CardCnn::copy_to: a network of another depth");
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i].value->size() != params_[i].w.element_count())
            throw std::invalid_argument("CardCnn::copy_to: a network of other sizes");
        *p[i].value = params_[i].w.to_vector<float>();
    }
}

} // namespace tpu_train
