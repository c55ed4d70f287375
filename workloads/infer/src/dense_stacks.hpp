// SPDX-License-Identifier: MIT
// dense_stacks.hpp - a stack of dense layers on the card, the whole of an MLP and the head of a
// CNN: weights uploaded once, activations for max_batch rows, and run() taking the rows already
// in input() through every layer into fp32 logits. bf16: one dense job per layer (bias and ReLU
// on the card, bf16 hidden activations); int8: per layer a dense job (int32 sums to fp32 with the
// rescaled bias and ReLU), a VECTOR multiply by the per-channel factors and, between layers, the
// conversion to int8 (reference.hpp's Int8LayerConstants).
#pragma once

#include "tpu_infer/network.hpp"

#include <tpurt/device.hpp>
#include <tpurt/tensor.hpp>

#include <cstddef>
#include <vector>

namespace tpu_infer::detail {

class Bf16DenseStack {
  public:
    Bf16DenseStack(tpurt::Device &d, const std::vector<FloatDense> &layers, std::size_t max_batch);
    // bf16 [max_batch, inputs]: the first layer's input.
    tpurt::Tensor &input() { return acts_.front(); }
    // The logits of the first m rows of input() into out (m x outputs, fp32).
    void run(std::size_t m, float *out);

  private:
    tpurt::Device &device_;
    std::vector<tpurt::Tensor> weights_, biases_, acts_;
};

class Int8DenseStack {
  public:
    Int8DenseStack(tpurt::Device &d, const std::vector<Int8Dense> &layers, std::size_t max_batch);
    // int8 [max_batch, inputs], quantised with the first layer's x_scale.
    tpurt::Tensor &input() { return layers_.front().x; }
    void run(std::size_t m, float *out);

  private:
    struct Layer {
        tpurt::Tensor wq, bias, mult;
        tpurt::Tensor x;      // int8 input [max_batch, in]
        tpurt::Tensor sums;   // fp32 relu?(int32 sums + bias) [max_batch, out]
        tpurt::Tensor scaled; // fp32 sums * mult [max_batch, out]
    };
    tpurt::Device &device_;
    std::vector<Layer> layers_;
};

} // namespace tpu_infer::detail
