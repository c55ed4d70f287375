// SPDX-License-Identifier: MIT
// card_reference.hpp - a compiled model run on the CPU in the card's arithmetic, which
// tpumodel::card::Executor must equal bit for bit: its dense and conv2d_layer nodes through
// libtpurt's golden models of the card (tpurt::reference_dense, reference_conv2d_layer: the
// array's products and summation order, the epilogue's bias and ReLU), in fp32, or for a model
// compiled for bf16 on operands rounded to bf16 (nearest even) as the executor casts them;
// matmul and batched_matmul through tpurt::reference_matmul (fp32: fused multiply-adds in k
// order; a bf16 model's 2-D matmul on bf16 operands, its batched ones in fp32); mean and
// reduce_axis (global pools, reductions) through tpurt::reference_reduce_axis (REDUCE's
// binary32 sum in ascending order, a mean's scale by 1.0f / length); softmax and layer_norm
// through tpurt::reference_softmax and reference_layer_norm (their programs' binary32 steps,
// ACTIVATE's EXP as the card computes it); the nodes whose
// card op computes exactly what the CPU kernel computes (views, permute, pool2d, ReLU, IEEE
// elementwise and divide, slice_copy) and the CPU nodes through their kernels.
// cpu::run_model() is ONNX's meaning; this is the card's.
#pragma once

#include "tpumodel/model.hpp"

#include <vector>

namespace tpumodel::card {

// The graph outputs for `inputs`, as cpu::run_model(). Throws ExecError naming the first node
// whose card op has no bit-exact model here (unary functions other than Relu, the quantised
// ops, ...) or a model compiled for int8.
std::vector<Tensor> reference_run(const Model &m, const std::vector<Tensor> &inputs);

} // namespace tpumodel::card
