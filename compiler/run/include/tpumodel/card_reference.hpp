// SPDX-License-Identifier: MIT
// card_reference.hpp - a compiled model run on the CPU in the card's arithmetic, which
// tpumodel::card::Executor must equal bit for bit: its dense and conv2d_layer nodes through
// libtpurt's golden models of the card (tpurt::reference_dense, reference_conv2d_layer: the
// array's products and summation order, the epilogue's bias and ReLU), in fp32, or for a model
// compiled for bf16 on operands rounded to bf16 (nearest even) as the executor casts them; its
// mean and reduce_axis nodes (global pools, reductions) through tpurt::reference_reduce_axis
// (REDUCE's binary32 sum in ascending order, a mean's scale by 1.0f / length); the nodes whose
// card op computes exactly what the CPU kernel computes (views, permute, pool2d, ReLU, IEEE
// elementwise and divide, slice_copy) and the CPU nodes through their kernels.
// cpu::run_model() is ONNX's meaning; this is the card's.
#pragma once

#include "tpumodel/model.hpp"

#include <vector>

namespace tpumodel::card {

// The graph outputs for `inputs`, as cpu::run_model(). Throws ExecError naming the first node
// whose card op has no bit-exact model here (matmul, softmax, the transcendental functions, the
// quantised ops, ...) or a model compiled for int8.
std::vector<Tensor> reference_run(const Model &m, const std::vector<Tensor> &inputs);

} // namespace tpumodel::card
