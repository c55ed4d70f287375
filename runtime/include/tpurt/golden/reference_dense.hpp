// SPDX-License-Identifier: MIT
// reference_dense.hpp - the CPU golden model of a dense layer with an exact activation (NONE,
// RELU, RELU6): the reference matmul of the input type, then ACTIVATE's documented steps per
// element (docs/hardware.md, Numerics): int32 accumulators converted to fp32 (nearest even),
// + bias[n], * scale, the function, conversion to the output type (integers: nearest even,
// saturated, NaN -> 0; bf16: nearest even; NaN canonical). GELU, SIGMOID, TANH and EXP are only
// defined to within ulp bounds of their real values and have no bit-exact model here.
#pragma once

#include "tpurt/ops/dense.hpp"

#include <cstddef>
#include <span>
#include <vector>

namespace tpurt {

// The M x N outputs of `layer` (raw bytes of out_type) for A and W in the layer's input type
// (raw bytes) and bias fp32[N] (empty: none). Throws Error (InvalidArgument) for a
// transcendental activation or arrays too small.
std::vector<std::byte> reference_dense(const DenseLayer &layer, std::span<const std::byte> a,
                                       std::span<const std::byte> w, std::span<const float> bias);

// ACTIVATE's steps on accumulators `acc` (rows of n values; int32 accumulators already
// converted to fp32) with bias fp32[n] (empty: none): the epilogue of reference_dense() and
// reference_conv2d_layer(). Throws Error (InvalidArgument) for a transcendental function.
std::vector<std::byte> reference_epilogue(std::span<const float> acc, std::size_t n,
                                          std::span<const float> bias, Activation function,
                                          float scale, DType out_type);

} // namespace tpurt
