// SPDX-License-Identifier: MIT
// dense_stacks.cpp - the bf16 and int8 dense layer stacks on the card (dense_stacks.hpp).
#include "dense_stacks.hpp"

#include "chunked_model.hpp"
#include "tpu_infer/reference.hpp"

#include <tpurt/ops/tensor_ops.hpp>

#include <algorithm>

namespace tpu_infer::detail {

Bf16DenseStack::Bf16DenseStack(tpurt::Device &d, const std::vector<FloatDense> &layers,
                               std::size_t max_batch)
    : device_(d) {
    acts_.push_back(tpurt::Tensor::empty(d, tpurt::DType::Bf16, {max_batch, layers.front().in}));
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const FloatDense &l = layers[i];
        std::vector<tpurt::Bf16> w(l.w.size());
        std::transform(l.w.begin(), l.w.end(), w.begin(), tpurt::Bf16::from_float);
        weights_.push_back(upload(d, w, {l.in, l.out}));
        biases_.push_back(upload(d, l.b, {l.out}));
        const bool last = i + 1 == layers.size();
        acts_.push_back(tpurt::Tensor::empty(d, last ? tpurt::DType::Fp32 : tpurt::DType::Bf16,
                                             {max_batch, l.out}));
    }
}

void Bf16DenseStack::run(std::size_t m, float *out) {
    for (std::size_t i = 0; i < weights_.size(); ++i) {
        const bool last = i + 1 == weights_.size();
        tpurt::Tensor y = acts_[i + 1].slice(0, 0, m);
        tpurt::dense(device_, acts_[i].slice(0, 0, m), weights_[i], &biases_[i], y,
                     last ? tpurt::Activation::None : tpurt::Activation::Relu);
    }
    const tpurt::Tensor logits = acts_.back().slice(0, 0, m);
    logits.copy_to_host(out, logits.element_count() * sizeof(float));
}

Int8DenseStack::Int8DenseStack(tpurt::Device &d, const std::vector<Int8Dense> &layers,
                               std::size_t max_batch)
    : device_(d) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const Int8Dense &l = layers[i];
        const Int8LayerConstants k = int8_constants(layers, i);
        layers_.push_back({upload(d, l.wq, {l.in, l.out}), upload(d, k.bias, {l.out}),
                           upload(d, k.mult, {l.out}),
                           tpurt::Tensor::empty(d, tpurt::DType::Int8, {max_batch, l.in}),
                           tpurt::Tensor::empty(d, tpurt::DType::Fp32, {max_batch, l.out}),
                           tpurt::Tensor::empty(d, tpurt::DType::Fp32, {max_batch, l.out})});
    }
}

void Int8DenseStack::run(std::size_t m, float *out) {
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        Layer &l = layers_[i];
        const bool last = i + 1 == layers_.size();
        tpurt::Tensor sums = l.sums.slice(0, 0, m), scaled = l.scaled.slice(0, 0, m);
        tpurt::dense(device_, l.x.slice(0, 0, m), l.wq, &l.bias, sums,
                     last ? tpurt::Activation::None : tpurt::Activation::Relu);
        tpurt::mul(device_, sums, l.mult, scaled);
        if (!last) {
            tpurt::Tensor next = layers_[i + 1].x.slice(0, 0, m);
            tpurt::cast(device_, scaled, next);
        }
    }
    const tpurt::Tensor logits = layers_.back().scaled.slice(0, 0, m);
    logits.copy_to_host(out, logits.element_count() * sizeof(float));
}

} // namespace tpu_infer::detail
